"""AnswerMatcher: ordered tiers that decide whether an answer matches its gold answer.

The tiers are tried in the order of the matcher's table (:data:`TIERS`) and the first
that matches decides; its name is the result's ``method``:

1. ``exact``: equal after stripping surrounding whitespace;
2. ``normalized``: equal in a text normal form (case, Unicode, punctuation,
   hyphenation, whitespace, unit spellings; :mod:`~opik_semantic_metrics.answers.normalize`),
   except for list literals and Python lists, which the list tier compares item by item;
3. ``contains``: the gold answer found in a longer output as a whole normalised phrase
   or an equal number, or, for a gold that is one date, a date that agrees with it
   however it is written (:mod:`~opik_semantic_metrics.answers.dates`), unless negated
   there, beside a second answer, or found in an output too long for that to mean much
   (:mod:`~opik_semantic_metrics.answers.contains`); for a gold written as several
   answers, any of its alternatives or all of its items
   (:mod:`~opik_semantic_metrics.answers.gold_parts`). Not for list answers, nor for a
   number gold against an output that is one number (the numeric tier's);
4. ``numeric``: both read as numbers (percent, thousands separators, signs, decimals,
   scientific notation) and equal within the tolerance (default 0.01 absolute). For
   ``Int`` and ``Float`` answers a sentence holding exactly one number counts as that
   number. A number with a scale word ("26 million") is that many; a bare number is
   itself, and also itself times the scale the question names, if it names one ("How
   many million hectares...?": ``"322 million ha"`` matches the gold ``"322"``);
5. ``list``: both read as lists (:mod:`~opik_semantic_metrics.answers.lists`) of equal
   length whose elements match pairwise by the exact, normalised and numeric rules.
   Order is ignored unless ``ordered=True``, or ``ordered=None`` and the question asks
   for an order (it has one of the words in :data:`ORDER_WORDS`; "in order to" does not
   count). Tried when the answer format is ``List`` or either side is bracketed or a
   Python list;
6. ``not_answerable``: the gold is "not answerable" (``None``, NaN, or one of the
   abstention phrases) and the output abstains: it has at most
   :data:`MAX_ABSTENTION_WORDS` words and holds an abstention phrase as whole words, or
   a sentence that declines in other words ("The report does not say.";
   :mod:`~opik_semantic_metrics.answers.abstentions`). An abstention against a real gold
   answer is no match and is flagged (``output_abstained``), so abstentions can be
   counted apart from wrong answers; an output in which the methods from ``exact`` to
   ``list`` find the gold answer is an answer, not an abstention;
7. ``semantic`` (off unless a scorer is given): for ``Str`` answers (and answers of
   unknown format whose gold is text, not a number or a list), a semantic score of at
   least the threshold. The scorer is any ``(output, reference) -> float``, or
   ``"keywords"``: the share of the gold's words longer than 3 characters that begin a
   word of the output (with 1.0, every word, as the default threshold). Two guards keep
   embedding similarity from matching opposite answers: no semantic match when exactly
   one side is negated (``not``, ``no``, ``never``, ``without``...), or when a number in
   the gold is missing from the output (``"Scope 1"`` against ``"Scope 2"``).

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import ClassVar, Literal

from opik_semantic_metrics.answers.abstentions import DEFAULT_ABSTENTIONS as DEFAULT_ABSTENTIONS
from opik_semantic_metrics.answers.abstentions import MAX_ABSTENTION_WORDS, Abstentions
from opik_semantic_metrics.answers.contains import (
    Containment,
    Context,
    find_gold,
    find_gold_date,
    gold_is_searchable,
    named_letter,
    number_negated,
    question_words,
    quoted_gold,
    unit_as_gold,
)
from opik_semantic_metrics.answers.dates import may_name_date, read_date
from opik_semantic_metrics.answers.gold_parts import gold_parts
from opik_semantic_metrics.answers.list_order import count_matched, order_matters
from opik_semantic_metrics.answers.lists import python_value
from opik_semantic_metrics.answers.normalize import NormalForms, normal_forms, search_text
from opik_semantic_metrics.answers.numbers import (
    ParsedNumber,
    find_single_number,
    numbers_match,
    scale_named,
)
from opik_semantic_metrics.answers.reading import ANSWER_FORMATS as ANSWER_FORMATS
from opik_semantic_metrics.answers.reading import (
    Answer,
    Element,
    is_missing_reference,
    list_readings,
    missing_output_flag,
    read_answer,
)
from opik_semantic_metrics.answers.reading import check_answer_format as check_answer_format
from opik_semantic_metrics.answers.results import AnswerItem as AnswerItem
from opik_semantic_metrics.answers.results import Case, Method, Outcome
from opik_semantic_metrics.answers.results import MatchResult as MatchResult
from opik_semantic_metrics.answers.semantic_tier import SemanticTier
from opik_semantic_metrics.answers.similarity import DIGIT_RUN
from opik_semantic_metrics.answers.similarity import KEYWORDS as KEYWORDS
from opik_semantic_metrics.answers.similarity import SemanticScorer as SemanticScorer
from opik_semantic_metrics.answers.similarity import keyword_coverage as keyword_coverage
from opik_semantic_metrics.errors import InputError, shown
from opik_semantic_metrics.inputs import check_flag, check_non_negative_number

#: Largest absolute difference between equal numbers unless one is given (the matcher's and
#: the AnswerMatch metric's default): 0.01, as in the MMESGBench answer analysis.
DEFAULT_TOLERANCE = 0.01
#: Tiers that find the gold answer in the output: an output they match is an answer.
_ANSWERING_TIERS = frozenset({"exact", "normalized", "contains", "numeric", "list"})


class AnswerMatcher:
    """Tiered answer matching (exact -> normalised -> contains -> numeric -> list -> not
    answerable -> semantic), with no model unless a semantic scorer is given.

    Args:
        tolerance: Largest absolute difference between equal numbers.
        relative_tolerance: Largest difference relative to the larger magnitude, a
            fraction below 1 (0.05 for 5%); with both, the larger allowance wins.
            ``None``: absolute only.
        ordered: ``True``: list order matters; ``False``: never; ``None``: when the
            question asks for an order.
        percent_as_fraction: Also accept ``"82%"`` against ``"0.82"``.
        abstentions: Phrases that decline to answer.
        abstention_patterns: Also read freely phrased abstentions ("The report does not
            say."; :mod:`~opik_semantic_metrics.answers.abstentions`).
        semantic: ``None`` (the ``semantic`` method off), ``"keywords"``, or a scorer
            ``(output, reference) -> float``, which returns ``None`` where it cannot judge
            the pair (no semantic match then, flagged ``semantic_unreadable``).
        semantic_threshold: Least semantic score that matches; required with a scorer,
            1.0 by default with ``"keywords"``.

    Raises:
        ValueError: A negative or non-finite tolerance, a relative tolerance of 1 or more,
            a flag that is not a bool, a ``semantic`` that is neither ``None``,
            ``"keywords"`` nor callable, a scorer without a threshold or a threshold
            without a scorer, an empty abstention list.

    Example:
        >>> matcher = AnswerMatcher()
        >>> matcher.match("82.0", "82%", answer_format="Float").method
        'numeric'
        >>> result = matcher.match("Not answerable", "No", answer_format="Str")
        >>> result.matched, result.output_abstained
        (False, True)
    """

    def __init__(
        self,
        tolerance: float = DEFAULT_TOLERANCE,
        relative_tolerance: float | None = None,
        ordered: bool | None = None,
        *,
        percent_as_fraction: bool = False,
        abstentions: Sequence[str] = DEFAULT_ABSTENTIONS,
        abstention_patterns: bool = True,
        semantic: SemanticScorer | Literal["keywords"] | None = None,
        semantic_threshold: float | None = None,
    ) -> None:
        self.tolerance = _check_tolerance("tolerance", tolerance)
        self.relative_tolerance = None
        if relative_tolerance is not None:
            self.relative_tolerance = _check_tolerance("relative_tolerance", relative_tolerance)
            if self.relative_tolerance >= 1:
                # A share of the larger number: at 1 or more, 1 would match -3.
                raise ValueError(
                    "Expected `relative_tolerance` to be a fraction below 1 (0.05 for 5%), "
                    f"got {shown(relative_tolerance)}."
                )
        self.ordered = None if ordered is None else check_flag(ordered, "ordered")
        self.percent_as_fraction = check_flag(percent_as_fraction, "percent_as_fraction")
        self._declining = Abstentions(abstentions, abstention_patterns)
        #: The abstention phrases, checked.
        self.abstentions = self._declining.phrases
        self.abstention_patterns = self._declining.patterns
        self.semantic_tier = SemanticTier(semantic, semantic_threshold)

    @property
    def semantic(self) -> SemanticScorer | Literal["keywords"] | None:
        """The semantic tier's scorer (``None``: the tier is off)."""
        return self.semantic_tier.scorer

    @property
    def semantic_threshold(self) -> float | None:
        """The least semantic score that matches."""
        return self.semantic_tier.threshold

    # --- entry point ----------------------------------------------------------------

    def match(
        self,
        output: object,
        reference: object,
        *,
        answer_format: str | None = None,
        question: str | None = None,
    ) -> MatchResult:
        """Match one output against its gold answer.

        Args:
            output: The model's answer: a string, a number, a list, or ``None``.
            reference: The gold answer: a string, a number, a list, or ``None`` (not
                answerable).
            answer_format: ``"Str"``, ``"Int"``, ``"Float"``, ``"List"``, ``"None"`` (a
                not answerable question, as in MMESGBench), or Python ``None`` (unknown).
            question: The question, read to decide whether a list's order matters and
                which scale word (``"in millions"``) a bare number stands for; words it
                holds are context, not second answers or negations of the gold.

        Returns:
            A :class:`MatchResult`.

        Raises:
            InputError: An output or reference of a type that is not an answer, an
                infinite reference, a list answer beyond the bounds, an unknown
                ``answer_format``.
            ScorerError: The semantic scorer raised (its exception is the cause), or
                returned something that is not a finite number.
        """
        return self.match_any(output, (reference,), answer_format=answer_format, question=question)

    def match_any(
        self,
        output: object,
        references: Sequence[object],
        *,
        answer_format: str | None = None,
        question: str | None = None,
    ) -> MatchResult:
        """Match one output against several acceptable answers, any one of which is right
        (TriviaQA's and Natural Questions' aliases: ``["Nureyev", "Rudolf Nureyev"]``).

        The acceptable answers are tried in order and the first that matches by a rule
        decides; the semantic tier, if on, runs only when none does, on all of them in
        one batch. The result's ``matched_answer`` names the one that matched. Words of
        the other acceptable answers are context: "evaporation or vaporisation" is no
        second answer where both are acceptable.

        Args:
            output: The model's answer.
            references: The acceptable answers (at least one; ``[None]`` is "not
                answerable").
            answer_format: As in :meth:`match`, for every acceptable answer.
            question: As in :meth:`match`.

        Raises:
            InputError: As :meth:`match`, or no acceptable answer.
            ScorerError: As :meth:`match`.

        Example:
            >>> matcher = AnswerMatcher()
            >>> result = matcher.match_any("It was Rudolf Nureyev.", ["Nuriev", "Rudolf Nureyev"])
            >>> result.matched, result.matched_answer
            (True, 'Rudolf Nureyev')
        """
        item = AnswerItem(output, tuple(references), answer_format, question)
        return self.match_many([item])[0]

    def match_many(self, items: Sequence[AnswerItem]) -> list[MatchResult]:
        """:meth:`match_any` of many items; the semantic scorer is called once for all
        the pairs that reach it (a batch, where the scorer scores batches).

        Raises:
            InputError, ScorerError: As :meth:`match`, for the first item that fails.
        """
        results: list[MatchResult | list[Case]] = [self._rules(item) for item in items]
        waiting = [case for result in results if isinstance(result, list) for case in result]
        scores = iter(self.semantic_tier.scores(waiting))
        finished = []
        for result in results:
            if isinstance(result, MatchResult):
                finished.append(result)
                continue
            decided = [self._semantic_decision(case, next(scores)) for case in result]
            finished.append(_first_match(decided))
        return finished

    def _rules(self, item: AnswerItem) -> MatchResult | list[Case]:
        """The rule tiers on each acceptable answer: the first match, or the cases that
        wait for the semantic tier (none waiting: the result of no match)."""
        if not item.references:
            raise InputError("Expected at least one acceptable answer, got none.")
        answer_format = check_answer_format(item.answer_format)
        output = python_value(item.output)
        golds = [python_value(reference) for reference in item.references]
        context = Context((item.question, *golds) if len(golds) > 1 else (item.question,))
        missing_output = missing_output_flag(output)
        answer = None if missing_output is not None else read_answer(output, "output")
        abstained = answer is not None and self._declining.declined(answer.text, answer.forms)
        failures: list[MatchResult] = []
        waiting: list[Case] = []
        for reference in golds:
            gold = None if is_missing_reference(reference) else read_answer(reference, "reference")
            # The "None" format is MMESGBench's mark of a question with no answer, whatever
            # its gold cell holds ("None", "Not answerable", or left empty).
            gold_not_answerable = (
                gold is None or answer_format == "None" or self._declining.is_phrase(gold.forms)
            )
            outcome = Outcome()
            if gold_not_answerable:
                outcome.flags.append("gold_not_answerable")
            if answer is None:
                outcome.flags.append(str(missing_output))
                what = "None" if output is None else repr(output)
                reason = f"No match: there is no answer to compare (output {what})."
                return self._result(
                    False,
                    "no_match",
                    reason,
                    None,
                    gold,
                    outcome,
                    gold_not_answerable=gold_not_answerable,
                )
            if abstained:
                outcome.flags.append("output_abstained")
            case = Case(
                answer,
                gold,
                answer_format,
                item.question,
                abstained,
                gold_not_answerable,
                outcome,
                context,
            )
            matched = self._rule_tiers(case)
            if matched is not None:
                return matched
            if self.semantic_tier.ready(case):
                waiting.append(case)
            else:
                failures.append(self._no_match(case))
        return waiting or _first_match(failures)

    def _rule_tiers(self, case: Case) -> MatchResult | None:
        # A long output that opens by declining ("As an AI language model, I cannot
        # ... However, it may be Paris.") does not stand behind what follows.
        refused = case.abstained and case.answer.forms.spaced.count(" ") >= MAX_ABSTENTION_WORDS
        for method, tier in self._TIER_TABLE:
            if refused and method in _ANSWERING_TIERS:
                continue
            found = tier(self, case)
            if found is None:
                continue
            if method in _ANSWERING_TIERS and not case.gold_not_answerable and case.abstained:
                # The gold answer was found in it: an answer that also says what the
                # source lacks is an answer, not an abstention.
                case.abstained = False
                case.outcome.flags.remove("output_abstained")
            return self._case_result(True, method, found, case)
        return None

    def _semantic_decision(self, case: Case, score: float | None) -> MatchResult:
        reason = self.semantic_tier.decide(case, score)
        if reason is None:
            return self._no_match(case)
        return self._case_result(True, "semantic", reason, case)

    def _no_match(self, case: Case) -> MatchResult:
        if case.abstained:
            case.outcome.notes.append(
                "the output declines to answer but the question has an answer"
            )
        elif case.gold_not_answerable:
            case.outcome.notes.append(
                "the question is not answerable but the output gives an answer"
            )
        notes = "; ".join(case.outcome.notes) or "the texts differ"
        return self._case_result(False, "no_match", f"No match: {notes}.", case)

    # --- tiers, in the order of _TIER_TABLE: each returns its reason when it matches ------

    def _exact_tier(self, case: Case) -> str | None:
        if case.gold is None or case.answer.text != case.gold.text:
            return None
        return "Exact match (surrounding whitespace ignored)."

    def _normalized_tier(self, case: Case) -> str | None:
        answer, gold = case.answer, case.gold
        # Lists that were read are compared item by item (the list tier): their texts in
        # normal form would equate ['a b'] with ['a', 'b'].
        if gold is None or answer.items is not None or gold.items is not None:
            return None
        if not gold.forms.joined or not answer.forms.equals(gold.forms):
            return None
        return (
            "Equal after normalising case, Unicode, punctuation, hyphens and units: "
            f"{_quote(gold.forms.joined)}."
        )

    def _contains_tier(self, case: Case) -> str | None:
        answer, gold = case.answer, case.gold
        if gold is None or case.gold_not_answerable or case.answer_format == "List":
            return None
        if answer.list_like or gold.list_like or answer.items is not None or gold.items is not None:
            return None
        if not answer.forms.joined:
            return None
        if gold.number is None and not gold_is_searchable(gold.forms):
            if gold.forms.joined and quoted_gold(answer.text, gold.forms):
                return f"The output quotes the gold answer {_quote(gold.text)}."
            if named_letter(answer.text, gold.forms):
                return f"The output names the letter {_quote(gold.text)}."
            return None
        gold_date = read_date(gold.text) if may_name_date(gold.text) else None
        if gold_date is not None:
            # A gold that is one date is looked for as a date, however the output writes
            # it; where the dates are read but refused, the text search is not tried.
            dated = find_gold_date(
                answer.text, gold_date, gold.forms.spaced.count(" ") + 1, context=case.context
            )
            if dated.found:
                return dated.note
            if dated.flag is not None:
                case.outcome.flags.append(dated.flag)
                case.outcome.notes.append(dated.note)
                return None
        if answer.number is not None and gold.number is not None:
            return None  # an output that is one number is the numeric tier's
        scale = scale_named(case.question)
        gold_text = search_text(gold.text)
        output_text, output_forms = answer.searched(not DIGIT_RUN.search(gold_text))
        gold_forms = normal_forms(gold_text)

        def search(
            forms: NormalForms, number: ParsedNumber | None, context: Context = case.context
        ) -> Containment:
            return find_gold(
                output_text,
                output_forms,
                forms,
                number,
                numbers_equal=lambda first, second: self._numbers_equal(first, second, scale),
                output_declines=case.abstained,
                context=context,
            )

        found = search(gold_forms, gold.number)
        if not found.found and gold.number is not None and gold.text[:1].isalpha():
            # A gold spelled out ("one") is also looked for as words ("a throw of one").
            found = search(gold_forms, None)
        if found.found:
            case.outcome.sentence_number = found.number
            return found.note
        if found.flag is not None:
            # Found whole but refused (negated, beside a second answer): its parts are
            # not looked for, as they would be refused for less.
            case.outcome.flags.append(found.flag)
            case.outcome.notes.append(found.note)
            return None
        if gold.number is None:
            return self._parts_found(case, search)
        return None

    @staticmethod
    def _parts_found(
        case: Case, search: Callable[[NormalForms, ParsedNumber | None, Context], Containment]
    ) -> str | None:
        """Any alternative of a gold written as several ("Akrotiri or Dhekelia"), or every
        item of one that enumerates ("Brazil, Colombia and Ecuador", in any order)."""
        assert case.gold is not None
        parts = gold_parts(case.gold.text)
        asked = question_words(case.question) if parts.alternatives else frozenset()
        for alternative in parts.alternatives:
            part = read_answer(alternative, "reference")
            forms = normal_forms(search_text(part.text))
            if asked.issuperset(forms.spaced.split()):
                continue  # what the question names ("EE (network)" for "EE was branded?")
            if search(forms, part.number, case.context).found:
                return f"The alternative {_quote(alternative)} of the gold answer is found."
        if not parts.items:
            return None
        # Each item is context for the others: "Ecuador, Colombia, and Brazil" holds
        # "Brazil" beside items of the answer, not beside a second answer.
        context = Context((case.question, *parts.items))
        for item in parts.items:
            part = read_answer(item, "reference")
            if not search(normal_forms(search_text(part.text)), part.number, context).found:
                return None
        return f"Every item of the gold answer {_quote(case.gold.text)} is found in the output."

    def _numeric_tier(self, case: Case) -> str | None:
        answer, gold, outcome = case.answer, case.gold, case.outcome
        if gold is None or gold.number is None:
            return None
        number = answer.number
        if number is None and case.answer_format in ("Int", "Float"):
            number = outcome.sentence_number = find_single_number(answer.text)
            if number is not None and number_negated(answer.text):
                outcome.notes.append("the output's number is negated")
                return None
        if number is None:
            if case.answer_format in ("Int", "Float"):
                outcome.notes.append("the output holds no single number to compare")
            return None
        scale = scale_named(case.question)
        if self._numbers_equal(unit_as_gold(number, gold.number), gold.number, scale):
            scaled = ""
            if scale is not None and not self._numbers_equal(number, gold.number):
                scaled = f" (a bare number read at the question's scale, x{scale:,})"
            tolerance = self._tolerance_text()
            return f"Numbers equal within {tolerance}{scaled}: {number} and {gold.number}."
        why = ""
        if scale is None and (number.scaled or gold.number.scaled):
            why = "; a scale word counts unless the question names that scale"
        outcome.notes.append(
            f"numbers differ: {number} and {gold.number} (tolerance {self._tolerance_text()}){why}"
        )
        return None

    def _list_tier(self, case: Case) -> str | None:
        answer, gold, outcome = case.answer, case.gold, case.outcome
        if gold is None:
            return None
        if not (case.answer_format == "List" or answer.list_like or gold.list_like):
            return None
        for side in (answer, gold):
            if side.list_problem in ("too_long", "too_deep", "too_many_items"):
                outcome.flags.append(f"list_{side.list_problem}")
        answer_readings = list_readings(answer)
        gold_readings = list_readings(gold)
        if not answer_readings or not gold_readings:
            outcome.notes.append("a list could not be read")
            return None
        ordered = self.ordered if self.ordered is not None else order_matters(case.question)
        outcome.ordered = ordered
        best_found = 0
        for gold_items in gold_readings:
            for answer_items in answer_readings:
                found = self._count_matched(answer_items, gold_items, ordered)
                if found == len(gold_items) == len(answer_items):
                    order = "in order" if ordered else "ignoring order"
                    return f"Lists equal {order} ({len(gold_items)} items)."
                best_found = max(best_found, found)
        gold_size = len(gold_readings[0])
        outcome.notes.append(
            f"lists differ: {best_found} of {gold_size} gold items matched"
            f" ({'in order' if ordered else 'order ignored'}), output has "
            f"{len(answer_readings[0])}"
        )
        return None

    def _not_answerable_tier(self, case: Case) -> str | None:
        if not (case.gold_not_answerable and case.abstained):
            return None
        return (
            "The question is not answerable and the output declines to answer "
            f"({_quote(case.answer.text)})."
        )

    #: The rule tiers, in the order they are tried: the first that returns a reason
    #: decides, and its name is the result's ``method``; the semantic tier comes after.
    _TIER_TABLE: ClassVar[
        tuple[tuple[Method, Callable[[AnswerMatcher, Case], str | None]], ...]
    ] = (
        ("exact", _exact_tier),
        ("normalized", _normalized_tier),
        ("contains", _contains_tier),
        ("numeric", _numeric_tier),
        ("list", _list_tier),
        ("not_answerable", _not_answerable_tier),
    )

    # --- helpers --------------------------------------------------------------------

    def _count_matched(
        self, answer_items: Sequence[Element], gold_items: Sequence[Element], ordered: bool
    ) -> int:
        return count_matched(
            answer_items, gold_items, ordered, lambda a, g: self._elements_equal(a, g, ordered)
        )

    def _elements_equal(self, first: Element, second: Element, ordered: bool) -> bool:
        """The exact, normalised and numeric rules on two list elements; nested lists
        compare as lists (same order rule)."""
        if first.nested is not None or second.nested is not None:
            if first.nested is None or second.nested is None:
                return False
            found = self._count_matched(first.nested, second.nested, ordered)
            return found == len(first.nested) == len(second.nested)
        if first.text == second.text or (first.forms.joined and first.forms.equals(second.forms)):
            return True
        return (
            first.number is not None
            and second.number is not None
            and self._numbers_equal(first.number, second.number)
        )

    def _numbers_equal(
        self, first: ParsedNumber, second: ParsedNumber, scale: Decimal | None = None
    ) -> bool:
        return numbers_match(
            first,
            second,
            tolerance=self.tolerance,
            relative_tolerance=self.relative_tolerance,
            percent_as_fraction=self.percent_as_fraction,
            scale=scale,
        )

    def _case_result(self, matched: bool, method: Method, reason: str, case: Case) -> MatchResult:
        return self._result(
            matched,
            method,
            reason,
            case.answer,
            case.gold,
            case.outcome,
            output_abstained=case.abstained,
            gold_not_answerable=case.gold_not_answerable,
        )

    def _tolerance_text(self) -> str:
        text = f"±{self.tolerance}"
        if self.relative_tolerance is not None:
            text += f" or {self.relative_tolerance * 100}% of the larger"
        return text

    def _result(
        self,
        matched: bool,
        method: Method,
        reason: str,
        answer: Answer | None,
        gold: Answer | None,
        outcome: Outcome,
        *,
        output_abstained: bool = False,
        gold_not_answerable: bool = False,
    ) -> MatchResult:
        return MatchResult(
            matched=matched,
            method=method,
            reason=reason,
            output_normalized=answer.forms.joined if answer is not None else "",
            reference_normalized=gold.forms.joined if gold is not None else "",
            output_number=_number_text(answer)
            or (None if outcome.sentence_number is None else str(outcome.sentence_number)),
            reference_number=_number_text(gold),
            ordered=outcome.ordered,
            semantic_score=outcome.semantic_score,
            output_abstained=output_abstained,
            gold_not_answerable=gold_not_answerable,
            flags=tuple(outcome.flags),
            matched_answer=gold.text if matched and gold is not None else None,
        )


#: The tiers, in the order they are tried (the matcher's table of tiers).
TIERS: tuple[Method, ...] = (
    *(method for method, _ in AnswerMatcher._TIER_TABLE),
    "semantic",
)
#: Every ``method`` a result can have.
METHODS: tuple[Method, ...] = (*TIERS, "no_match")


def _first_match(results: Sequence[MatchResult]) -> MatchResult:
    """The first result that matched; else the first that says why (it has flags)."""
    for result in results:
        if result.matched:
            return result
    return next((result for result in results if result.flags), results[0])


def _number_text(answer: Answer | None) -> str | None:
    return None if answer is None or answer.number is None else str(answer.number)


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _check_tolerance(name: str, value: object) -> Decimal:
    """A tolerance as an exact decimal of the number given (its shortest repr)."""
    number = python_value(value)  # numpy.float64(0.01) is a float whose repr is no number
    check_non_negative_number(number, name)
    return Decimal(repr(number))
