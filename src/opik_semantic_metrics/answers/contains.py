"""The gold answer found inside a longer output, with the guards a grader needs.

:func:`find_gold` looks for the gold answer in the output as a whole phrase of its
normal form (a text gold: ``"Paris"`` in ``"The capital of France is Paris."``) or as a
number equal within the tolerance (a number gold: ``"82%"`` in ``"In 2020, 82.0% of
sites were audited."``, a unit after the gold's own allowed: ``"5 employees total"``
holds ``"5 employees"``); :func:`find_gold_date` looks for a gold that is one date as a
date (``"March 3, 1999"`` in ``"It premiered on 3 March 1999."``;
:mod:`~opik_semantic_metrics.answers.dates`), within the same guards. The output is read
clause by clause (split at sentence ends,
commas, semicolons, colons, spaced dashes and before ``but``, ``however``, ``although``,
``though``, ``whereas``, ``instead``), and a place where the gold is found counts only
if:

- **no negation is on it**: no negation word (``not``, ``no``, ``never``, ``isn't``...,
  or ``incorrect``, ``wrong``, ``false``, ``untrue``) within three words of it in its
  clause, and not past an ``and``/``but``/``which`` after it, besides the gold's own words
  ("It is not Paris", "Not Paris", "Paris is not correct"), no later clause
  that only says no ("Paris? No.", "Paris - wrong."), and, for a number, the clause
  does not bound it ("less than 5", "up to 5", "5+");
- **no second answer stands beside it**: for a text, no ``either`` before it in its
  clause, and no ``or``/``nor`` next to it in a short output or in a clause that hedges
  (``could``, ``might``, ``perhaps``...: "Paris or London", "It could be Paris or Lyon";
  a slash between words reads as ``or``: "Paris/London"; in a longer sentence without a
  hedge, "is called evaporation or vaporization" names the answer twice), no
  ``and``/``&``/``vs``/``plus`` joining it to another content word ("Paris and
  London"), and the whole output is not a short enumeration of which the gold is one item
  ("Paris, London"); for a number, no other number of its kind anywhere in the output
  ("12 or 15", "12 sites in 2019, 15 in 2020"; in an output of several sentences, its
  sentence, and in an output past 40 words, its clause): numbers of different units, or a year
  (a whole number from 1900 to 2100) beside a gold that is not one, are of different
  kinds ("In 2020, 82% of 120 sites" holds 82% once);
- **the gold means something found**: it holds a word of two or more characters that is
  not a stop word, or a number (``"B"`` or ``"the"`` would be found nearly anywhere), and
  the output has at most ``max(40, 4 x the gold's words)`` words: a gold found in a
  pasted passage says little about what the passage answers. A long gold (a sentence)
  found whole is strong evidence and is accepted;
- a yes/no gold (``yes``, ``no``, ``true``, ``false``) is found only as the first word of
  an output that does not decline to answer, with no negation or opposite in its first
  clause ("No, it does not." holds "No"; "Yes and no" and "No information is given."
  hold neither).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opik_semantic_metrics.answers.dates import CalendarDate, FoundDate, read_dates
from opik_semantic_metrics.answers.lists import split_plain_list
from opik_semantic_metrics.answers.normalize import NormalForms, normal_forms, prepare, search_text
from opik_semantic_metrics.answers.numbers import ParsedNumber, is_number_word, numbers_in_text
from opik_semantic_metrics.vocabulary import (
    ENGLISH_STOP_WORDS,
    NEGATING_PREPOSITIONS,
    NEGATIONS_IN_NORMAL_FORM,
)

#: Outputs of at most this many words (or 4 times the gold's, if more) are searched
#: whole; in a longer one, the gold is looked for in its lead (:data:`LEAD_WORDS`).
CONTAINS_MAX_WORDS = 40
#: An output may be this many times as long as the gold, in words, if over 40.
CONTAINS_LENGTH_RATIO = 4
#: A long output's lead: its first sentences, up to this many words (at least one
#: sentence). An answer in prose states its answer first and explains after; a gold
#: found only deep in the explanation is more often mentioned than asserted.
LEAD_WORDS = 80
#: ``and`` joining the gold to another content word reads as a second answer only in an
#: output of at most twice the gold's words and this many more ("Paris and London",
#: "It is Paris and London."); in a longer sentence it more often adds a detail ("Man Ray
#: was famous in the field of photography and surrealism.").
JOINS_EXTRA_WORDS = 3
#: A negating word counts against the gold within this many words of it, in its clause.
NEGATION_REACH = 3
#: A gold's last word of at least this many letters is also found with an ending of at
#: most :data:`STEM_MAX_ENDING` letters ("Colombia" in "Colombian", "architect" in
#: "architecture"): answers are inflected and derived, and golds are sometimes cut short.
STEM_MIN_LENGTH = 5
STEM_MAX_ENDING = 3
#: An enumeration whose items have at most this many words is a list of answers.
_ENUMERATION_ITEM_WORDS = 4
#: Negations, in normal form ("isn't" is "isnt"): every negation of
#: :data:`~opik_semantic_metrics.vocabulary.NEGATIONS_IN_NORMAL_FORM`, and "without",
#: which denies a gold after it ("a trip without Paris").
NEGATIONS = NEGATIONS_IN_NORMAL_FORM | NEGATING_PREPOSITIONS
#: Words that deny what stands in their clause: the negations and the words that judge
#: an answer wrong.
NEGATING_WORDS = NEGATIONS | {"incorrect", "wrong", "false", "untrue", "nope"}
POLAR_ANSWERS = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
_ALTERNATIVES = frozenset({"or", "nor"})
#: Words that make an ``or`` in a longer sentence a hedge between candidates ("It could
#: be Paris or perhaps Lyon"). Without one, such an ``or`` more often gives another name
#: or a detail of the answer ("is called evaporation or vaporization", "Orange or yellow
#: golf balls are used"), and people judge the answer right: on EVOUNA's development
#: half, 22 of 22 answers refused for such an ``or`` were judged right.
HEDGE_WORDS = frozenset(
    {"either", "could", "might", "may", "maybe", "perhaps", "possibly", "probably",
     "likely", "unsure", "uncertain", "whether", "guess"}
)  # fmt: skip
#: Words that, with a negation and stop words only, make a clause that says no.
_JUDGING_WORDS = frozenset({"correct", "right", "true", "answer", "case", "really", "sorry"})
#: Stop words that may stand inside a name ("Port of Santos", "Institute for Energy").
_NAME_WORDS = frozenset({"of", "the", "and", "for", "a", "an"})
#: Words that, with a number, make a clause that only sets the time or place of the
#: answer ("In 2022, ...", "As of 2021, ..."): its number is no second answer.
_SETTING_WORDS = frozenset(
    {"in", "as", "of", "since", "during", "for", "by", "at", "end", "the", "fiscal", "year", "fy"}
)
_JOINERS = frozenset({"and", "vs", "versus", "plus"})
#: Words after the gold that begin what is said of something else: a negation past one
#: is not on the gold ("Paris and not London", "vegetarians and does not contain").
_NEW_PREDICATE = frozenset({"and", "but", "or", "which", "who", "while", "because"})
_CLAUSE_BREAK = re.compile(
    r"[.!?;:]+(?=\s|$)|,(?=\s|$)|\n+|\s-+\s"
    r"|\s(?=(?:but|however|although|though|whereas|instead)\b)"
)
_YEAR_RANGE = (1900, 2100)
_SLASH_BETWEEN_WORDS = re.compile(r"(?<=\w)\s?/\s?(?=\w)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Containment:
    """What the search found.

    Attributes:
        found: The gold was found in a place that passes every guard.
        note: The match's reason, or why a place where the gold was found did not count
            (``""`` when the gold was not found at all).
        flag: ``gold_negated``, ``second_answer``, ``output_too_long`` or ``None``.
        number: The output's number found equal to a number gold.
    """

    found: bool
    note: str = ""
    flag: str | None = None
    number: ParsedNumber | None = None


NOT_FOUND = Containment(False)


@dataclass(frozen=True)
class _Clause:
    text: str
    forms: NormalForms

    @property
    def words(self) -> tuple[list[str], list[str]]:
        return self.forms.spaced.split(), self.forms.joined.split()


def clauses(text: str, *, slash_as_or: bool = False) -> list[str]:
    """The clauses of a text (see the module docstring), ``&`` read as ``and``.

    Example:
        >>> clauses("It is Paris, not London; but maybe Lyon.")
        ['it is paris', 'not london', 'but maybe lyon']
    """
    text = prepare(text).replace("&", " and ")
    if slash_as_or and "/" in text:
        text = _SLASH_BETWEEN_WORDS.sub(" or ", text)
    return [part.strip() for part in _CLAUSE_BREAK.split(text) if part.strip()]


class Context:
    """Words an answer may repeat as context (:func:`question_words` of the question and
    of the item's other acceptable answers), read on the first look: most outputs never
    need them, and an item may have dozens of acceptable answers."""

    def __init__(self, texts: Sequence[object] = ()) -> None:
        self._texts = texts
        self._words: frozenset[str] | None = None

    def __contains__(self, word: object) -> bool:
        if self._words is None:
            self._words = frozenset().union(
                *(question_words(text) for text in self._texts if isinstance(text, str))
            )
        return word in self._words


NO_CONTEXT = Context()


def question_words(text: str | None) -> frozenset[str]:
    """The words of ``text`` (a question, or another acceptable answer) in both normal
    forms: what an answer repeats from them is context, not a second answer, and a
    negation it repeats from the question ("Who never married him?") is not on the gold."""
    if not text:
        return frozenset()
    forms = normal_forms(search_text(text))
    return frozenset(forms.spaced.split()) | frozenset(forms.joined.split())


#: A quoted phrase: not an apostrophe inside a word ("state's") on either side.
_QUOTED = re.compile(
    r"(?<!\w)[\"'\u201c\u2018]([^\"'\u201c\u201d\u2018\u2019]{1,40})[\"'\u201d\u2019](?!\w)"
)


def quoted_gold(output: str, gold_forms: NormalForms) -> bool:
    """Whether the output quotes the gold on its own (``'The preposition is "in".'``,
    ``"It is 'Q.'"``): the one way a gold too short to search for (a letter, a stop word)
    is asserted rather than met by chance.

    Example:
        >>> quoted_gold('The preposition in the sentence is "in".', normal_forms("In"))
        True
    """
    return any(
        normal_forms(found.group(1)).equals(gold_forms) for found in _QUOTED.finditer(output)
    )


_NAMED_LETTER = re.compile(r"\bletter\s+[\"'\u201c\u2018]?([a-z])\b", re.IGNORECASE)


def named_letter(output: str, gold_forms: NormalForms) -> bool:
    """Whether a one-letter gold is named as a letter in the output ("It is the letter
    Q."), the other way besides quoting that a letter is asserted.

    Example:
        >>> named_letter("The only letter missing is the letter Q.", normal_forms("Q"))
        True
    """
    if len(gold_forms.spaced) != 1:
        return False
    return any(
        found.group(1).lower() == gold_forms.spaced
        for found in _NAMED_LETTER.finditer(prepare(output))
    )


def gold_is_searchable(gold_forms: NormalForms) -> bool:
    """Whether a gold holds a word that means something when found (see above), or is
    a yes/no answer."""
    if gold_forms.spaced in POLAR_ANSWERS:
        return True
    return any(
        is_number_word(word) or (len(word) > 1 and word not in ENGLISH_STOP_WORDS)
        for word in gold_forms.spaced.split()
    )


def find_gold(
    output: str,
    output_forms: NormalForms,
    gold_forms: NormalForms,
    gold_number: ParsedNumber | None,
    *,
    numbers_equal: Callable[[ParsedNumber, ParsedNumber], bool],
    output_declines: bool,
    context: Context = NO_CONTEXT,
) -> Containment:
    """Search ``output`` for the gold answer, within the guards of the module docstring.

    Args:
        output: The output's text.
        output_forms: Its normal forms.
        gold_forms: The gold's normal forms.
        gold_number: The gold read as one number (``None`` for a text gold).
        numbers_equal: Whether an output's number equals the gold's (the matcher's
            tolerance and options).
        output_declines: The output declines to answer (a yes/no gold is then not found).
        context: Words that the output may repeat without their counting as a second
            answer or a negation (:func:`question_words` of the question and of the
            item's other acceptable answers).

    Example:
        >>> def equal(a, b):
        ...     return a.value == b.value
        >>> def find(output, gold):
        ...     return find_gold(output, normal_forms(output), normal_forms(gold), None,
        ...                      numbers_equal=equal, output_declines=False)
        >>> find("The capital of France is Paris.", "Paris").found
        True
        >>> find("It is not Paris.", "Paris").flag, find("Paris or London", "Paris").flag
        ('gold_negated', 'second_answer')
    """
    gold_words = gold_forms.spaced.split()
    output_words = output_forms.spaced.count(" ") + 1
    if output_words > max(CONTAINS_MAX_WORDS, CONTAINS_LENGTH_RATIO * len(gold_words)):
        lead = _lead(output)
        if len(lead) < len(output):
            if gold_number is None and not _may_hold(output_forms, gold_forms):
                return NOT_FOUND  # one linear look, as the output may be any length
            lead_forms = normal_forms(lead)
            if gold_number is None and not _may_hold(lead_forms, gold_forms):
                return Containment(
                    False,
                    f"the gold answer is in the output, but not in its first {LEAD_WORDS} "
                    "words, where an answer in prose states its answer",
                    "output_too_long",
                )
            output, output_forms = lead, lead_forms
    if len(gold_words) == 1 and gold_words[0] in POLAR_ANSWERS and gold_number is None:
        return _find_polar(output, gold_words[0], output_declines)
    if gold_number is None and not _may_hold(output_forms, gold_forms):
        return NOT_FOUND
    return _find(output, gold_forms, gold_number, numbers_equal, context)


#: Stands for a date read in an output while the output is split into sentences and
#: clauses (a date's own dots and commas, "Sept. 2, 1945", split nothing).
_DATE_MARK = "zqdatezq"
#: Words right before a date that bound it: "before March 3, 1999" is not that date.
_DATE_BOUNDS = frozenset({"before", "after", "until", "till", "than"})


_SLASH_AFTER_YEAR = re.compile(r"(?<=\b[12]\d{3})/(?=\d)")


def find_gold_date(
    output: str, gold: CalendarDate, gold_words: int, *, context: Context = NO_CONTEXT
) -> Containment:
    """Search ``output`` for a date that agrees with the gold date on every field the
    gold gives (:mod:`~opik_semantic_metrics.answers.dates`), within the text search's
    guards: an output of over 40 words is searched in its lead; a date negated (or bounded:
    "before", "after", "until", "than") does not count, nor one beside another answer
    ("3 or 4 March 1999") or with a second date as precise as the gold that says another
    day (in its sentence, or in a long output its clause: "March 3, 1999 or March 4,
    1999"). Dates are compared, not texts: "3 March 1999" holds the gold "March 3, 1999".

    Args:
        output: The output's text.
        gold: The gold, read as one date.
        gold_words: The gold's number of words (the bound of the length guard).
        context: Words the output may repeat (a date the question names is no second
            answer).

    Example:
        >>> from opik_semantic_metrics.answers.dates import read_date
        >>> find_gold_date("It was released on 3 March 1999.", read_date("March 3, 1999"), 3).note
        "The gold date 1999-03-03 is found in the output as '3 March 1999'."
        >>> find_gold_date("It was not on 3 March 1999.", read_date("March 3, 1999"), 3).flag
        'gold_negated'
    """
    if "/" in output:
        # "31 December 2022/30 June 2022": two dates, not a slash date's tail.
        output = _SLASH_AFTER_YEAR.sub(" / ", output)
    size = len(output.split())
    if size > max(CONTAINS_MAX_WORDS, CONTAINS_LENGTH_RATIO * gold_words):
        lead = _lead(output)
        if len(lead) < len(output):
            found = _find_date(lead, gold, context, long=True, joins_count=False)
            if found.found or found.flag is not None:
                return found
            if any(date.date.agrees_with(gold) for date in read_dates(output)):
                return Containment(
                    False,
                    f"the gold date is in the output, but not in its first {LEAD_WORDS} "
                    "words, where an answer in prose states its answer",
                    "output_too_long",
                )
            return NOT_FOUND
    joins_count = size <= 2 * gold_words + JOINS_EXTRA_WORDS
    return _find_date(
        output, gold, context, long=size > CONTAINS_MAX_WORDS, joins_count=joins_count
    )


def _find_date(
    output: str, gold: CalendarDate, context: Context, *, long: bool, joins_count: bool
) -> Containment:
    dates = read_dates(output)
    if not any(found.date.agrees_with(gold) for found in dates):
        return NOT_FOUND
    pieces: list[str] = []
    last = 0
    for found in dates:
        pieces.extend((output[last : found.start], f" {_DATE_MARK} "))
        last = found.end
    pieces.append(output[last:])
    marked = "".join(pieces)
    # Each clause with its group: the sentence of a short output (as for numbers), the
    # clause of a long one (a clause that opens with "or" goes on with the one before).
    if long:
        parts = [_Clause(text, normal_forms(text)) for text in clauses(marked)]
        group_of: list[int] = []
        group = 0
        for part in parts:
            if part.words[0][:1] != ["or"]:
                group += 1
            group_of.append(group)
    else:
        parts, group_of = _clauses_by_sentence(marked)
    places = [
        (index, words, position)
        for index, part in enumerate(parts)
        for words in [part.words[0]]
        for position, word in enumerate(words)
        if word == _DATE_MARK
    ]
    if len(places) != len(dates):
        return NOT_FOUND  # the output wrote the mark itself: read nothing
    refusals = _refusals(parts)
    rejection = NOT_FOUND
    for (index, words, position), found in zip(places, dates, strict=True):
        if not found.date.agrees_with(gold):
            continue
        before = words[max(0, position - 2) : position]
        if (
            _negated_near(words, position, position + 1, context)
            or index + 1 in refusals
            or (before and before[-1] in _DATE_BOUNDS)
            or before == ["prior", "to"]
        ):
            rejection = Containment(
                False, "the gold date is in the output, but negated or bounded", "gold_negated"
            )
            continue
        others = [
            other.date
            for (where, *_), other in zip(places, dates, strict=True)
            if group_of[where] == group_of[index]
            and not other.date.agrees_with(gold)
            and other.date.as_precise_as(gold)
            and not _date_in_context(other, context)
        ]
        if others or _beside_another(
            words, position, position + 1, context, joins_count=joins_count
        ):
            rejection = Containment(
                False,
                "the gold date is in the output, but beside another answer",
                "second_answer",
            )
            continue
        return Containment(True, f"The gold date {gold} is found in the output as {found.text!r}.")
    return rejection


def _date_in_context(found: FoundDate, context: Context) -> bool:
    """Whether the words of a date all stand in the question (or the other acceptable
    answers): a date the question names is context, not a second answer."""
    words = normal_forms(found.text).spaced.split()
    return all(word in context or word in _DATE_FILLER_WORDS for word in words)


#: Words of a date that say nothing of it: ordinal suffixes and "of" ("the 3rd of March").
_DATE_FILLER_WORDS = frozenset({"st", "nd", "rd", "th", "of"})


def _lead(output: str) -> str:
    """The output's first sentences, up to :data:`LEAD_WORDS` words (at least one)."""
    kept: list[str] = []
    count = 0
    for sentence in _SENTENCE_END.split(output.strip()):
        size = len(sentence.split())
        if kept and count + size > LEAD_WORDS:
            break
        kept.append(sentence)
        count += size
    return " ".join(kept)


def _may_hold(output_forms: NormalForms, gold_forms: NormalForms) -> bool:
    """A linear look before reading clauses: a gold found in a clause is a substring of
    the whole output's normal form, in one of its two forms."""
    return gold_forms.spaced in output_forms.spaced or gold_forms.joined in output_forms.joined


def _find(
    output: str,
    gold_forms: NormalForms,
    gold_number: ParsedNumber | None,
    numbers_equal: Callable[[ParsedNumber, ParsedNumber], bool],
    context: Context,
) -> Containment:
    if gold_number is not None:
        if len(output.split()) > CONTAINS_MAX_WORDS:
            parts = [_Clause(text, normal_forms(text)) for text in clauses(output)]
            return _find_number(parts, gold_number, numbers_equal, context, clause_by_clause=True)
        sentence_parts, sentence_of = _clauses_by_sentence(output)
        return _find_number(
            sentence_parts, gold_number, numbers_equal, context, sentence_of=sentence_of
        )
    # "Paris/London" offers two answers; a gold with a slash of its own ("AC/DC") is
    # found in the whole output below.
    parts = [_Clause(text, normal_forms(text)) for text in clauses(output, slash_as_or=True)]
    places = [
        (index, *span) for index, part in enumerate(parts) for span in _spans(part, gold_forms)
    ]
    if not places:
        # A gold that spans clauses ("Seller reports Scope 1, buyer reports Scope 2")
        # is looked for in the whole output, which is then its one clause.
        whole = _Clause(output, normal_forms(prepare(output).replace("&", " and ")))
        places = [(len(parts), *span) for span in _spans(whole, gold_forms)]
    if not places:
        return NOT_FOUND
    refusals = _refusals(parts)
    joins_count = len(output.split()) <= 2 * len(gold_forms.spaced.split()) + JOINS_EXTRA_WORDS
    stated = _stated_answer_clauses(parts)
    # (A gold found only across clauses, in the whole output, is not checked here.)
    if stated and not any(index in stated or index == len(parts) for index, *_ in places):
        return Containment(
            False,
            "the gold answer is in the output, but the answer it states is another",
            "second_answer",
        )
    rejection = NOT_FOUND
    for index, words, start, end in places:
        if _negated_near(words, start, end, context) or index + 1 in refusals:
            rejection = Containment(
                False, "the gold answer is in the output, but negated", "gold_negated"
            )
            continue
        # A gold that ends its clause is read with the next one: "Paris, or London".
        following: list[str] = []
        if end == len(words) and index + 1 < len(parts):
            following = parts[index + 1].words[0]
        if _beside_another([*words, *following], start, end, context, joins_count=joins_count):
            rejection = Containment(
                False,
                "the gold answer is in the output, but beside another answer",
                "second_answer",
            )
            continue
        if _one_of_an_enumeration(output, gold_forms, context):
            return Containment(
                False,
                "the gold answer is one item of a list of answers in the output",
                "second_answer",
            )
        return Containment(True, f"The gold answer {_shown(gold_forms)} is found in the output.")
    return rejection


def _clauses_by_sentence(output: str) -> tuple[list[_Clause], list[int]]:
    """The output's clauses and the sentence of each. In a short output of several
    sentences, a number counts as a second answer only in the sentence of the match
    ("She was born on 17 September 1931. That is the 1930s." holds 1930s once); a
    sentence that hedges ("Or was it 1932?", "It might be 1932.") goes on with the one
    before it."""
    parts: list[_Clause] = []
    sentence_of: list[int] = []
    sentence = 0
    for text in _SENTENCE_END.split(output.strip()):
        sentence_parts = [_Clause(clause, normal_forms(clause)) for clause in clauses(text)]
        words = [word for part in sentence_parts for word in part.words[0]]
        if words[:1] != ["or"] and HEDGE_WORDS.isdisjoint(words):
            sentence += 1
        parts.extend(sentence_parts)
        sentence_of.extend([sentence] * len(sentence_parts))
    return parts, sentence_of


_STATED_ANSWER = re.compile(
    r"\b(?:correct |right |final |true )?answer (?:is|was|would be|should be)\b|^answer$"
)


def _stated_answer_clauses(parts: Sequence[_Clause]) -> frozenset[int]:
    """The clauses that hold the answer an output states in so many words ("the answer
    is Lyon", "Answer: Lyon"): a clause that says so, and the one after it."""
    stated: set[int] = set()
    for index, part in enumerate(parts):
        if _STATED_ANSWER.search(part.forms.spaced):
            stated.update((index, index + 1))
    return frozenset(stated)


def _refusals(parts: Sequence[_Clause]) -> frozenset[int]:
    """The indices of the clauses that only say no ("No.", "wrong", "that is not
    correct"); each takes back the clause just before it ("Paris? No."), not a clause
    further back ("The kiwi. Apteryx means 'without' or 'not'.")."""
    return frozenset(
        index
        for index, part in enumerate(parts)
        if NEGATING_WORDS.intersection(words := part.forms.spaced.split())
        and all(
            word in NEGATING_WORDS or word in _JUDGING_WORDS or word in ENGLISH_STOP_WORDS
            for word in words
        )
    )


def _is_negation(words: Sequence[str], position: int, context: Context) -> bool:
    """Whether the word at ``position`` negates: a negating word that the question does
    not hold ("Who never married him?"), and not "no" before a number ("a No 1 hit")."""
    word = words[position]
    if word not in NEGATING_WORDS or word in context:
        return False
    return not (
        word == "no" and words[position + 1 : position + 2] and words[position + 1][:1].isdigit()
    )


def _negated_near(words: Sequence[str], start: int, end: int, context: Context) -> bool:
    """A negation within :data:`NEGATION_REACH` words of the gold in its clause ("not
    Paris", "Paris is not correct"), not one on another word further away ("The only
    letter that does not appear in any state's name is Q")."""
    before = range(max(0, start - NEGATION_REACH), start)
    after: list[int] = []
    for position in range(end, min(len(words), end + NEGATION_REACH)):
        if words[position] in _NEW_PREDICATE:
            break  # "suitable for vegetarians and does not contain": another predicate
        after.append(position)
    return any(_is_negation(words, position, context) for position in (*before, *after))


def _spans(part: _Clause, gold_forms: NormalForms) -> list[tuple[list[str], int, int]]:
    """Where the gold's words stand in a clause's words, in either normal form."""
    spans = []
    for words, gold_words in zip(
        part.words, (gold_forms.spaced.split(), gold_forms.joined.split()), strict=True
    ):
        size = len(gold_words)
        if not size:
            continue
        head, last = gold_words[:-1], gold_words[-1]
        stretches = len(last) >= STEM_MIN_LENGTH and last.isalpha()
        for start in range(len(words) - size + 1):
            word = words[start + size - 1]
            if words[start : start + size - 1] == head and (
                word == last or (stretches and _extends(word, last))
            ):
                spans.append((words, start, start + size))
    return spans


def _extends(word: str, stem: str) -> bool:
    return (
        len(stem) < len(word) <= len(stem) + STEM_MAX_ENDING
        and word.startswith(stem)
        and word.isalpha()
    )


def _beside_another(
    words: Sequence[str],
    start: int,
    end: int,
    context: Context,
    *,
    joins_count: bool = True,
) -> bool:
    """An alternative or a second content word joined to the gold in its clause. A word
    of the context that is not also the gold's is no second answer ("between China and
    North Korea" for a question naming China; "evaporation or vaporization" where both
    are acceptable)."""
    before = words[start - 1] if start > 0 else ""
    after = words[end] if end < len(words) else ""
    gold = frozenset(words[start:end])

    def another(word: str) -> bool:
        # No word ("and orange" opening a clause) is no second answer for "and"; an "or"
        # opening a clause is one (tested apart below).
        return bool(word) and _is_content(word) and (word not in context or word in gold)

    other_before = words[start - 2] if start > 1 else ""
    other_after = words[end + 1] if end + 1 < len(words) else ""
    if "either" in words[:start]:
        return True
    hedged = joins_count or not HEDGE_WORDS.isdisjoint(words)
    if hedged and before in _ALTERNATIVES and (another(other_before) or not other_before):
        return True
    if hedged and after in _ALTERNATIVES and (another(other_after) or not other_after):
        return True
    if not joins_count:
        return False
    return (before in _JOINERS and another(other_before)) or (
        after in _JOINERS and another(other_after)
    )


def _is_content(word: str) -> bool:
    return word not in ENGLISH_STOP_WORDS and word not in NEGATING_WORDS


def _one_of_an_enumeration(output: str, gold_forms: NormalForms, context: Context) -> bool:
    """The output is a short list ("Paris, London") of which the gold is one item, and
    another item is not context ("China and North Korea" for a question naming China)."""
    text = prepare(output).rstrip(".!?")
    for reading in split_plain_list(text):
        if len(reading) < 2:
            continue
        items = [normal_forms(item) for item in reading]
        if any(item.spaced.count(" ") >= _ENUMERATION_ITEM_WORDS for item in items):
            continue
        if not any(item.equals(gold_forms) for item in items):
            continue
        others = [
            item
            for item in items
            if not item.equals(gold_forms)
            and not all(
                word in context or word in ENGLISH_STOP_WORDS for word in item.spaced.split()
            )
        ]
        if others and all(map(_names_something, others)):
            return True
    return False


def _names_something(item: NormalForms) -> bool:
    """Whether an enumeration's item reads as an answer ("London", "Port of Santos"), not
    as a phrase about one ("according to the report")."""
    return all(
        word in _NAME_WORDS or (word not in ENGLISH_STOP_WORDS and word not in NEGATING_WORDS)
        for word in item.spaced.split()
    )


def _find_number(
    parts: Sequence[_Clause],
    gold: ParsedNumber,
    numbers_equal: Callable[[ParsedNumber, ParsedNumber], bool],
    context: Context,
    *,
    clause_by_clause: bool = False,
    sentence_of: Sequence[int] | None = None,
) -> Containment:
    """The gold number in the clauses; with ``clause_by_clause`` (a long output), a
    second number of its kind counts only in the clause of a match, and with
    ``sentence_of`` (each clause's sentence), only in the sentence of a match."""
    if clause_by_clause:
        rejection = NOT_FOUND
        refusals = _refusals(parts)
        for index, part in enumerate(parts):
            if index + 1 in refusals and numbers_in_text(part.text):
                rejection = Containment(
                    False, "the gold number is in the output, but negated", "gold_negated"
                )
                continue
            in_clause = _find_number([part], gold, numbers_equal, context)
            if in_clause.found:
                return in_clause
            rejection = rejection if in_clause.flag is None else in_clause
        return rejection
    matched: list[tuple[int, ParsedNumber]] = []
    others: list[tuple[int, ParsedNumber | None]] = []
    rejection = NOT_FOUND
    refusals = _refusals(parts)
    for index, part in enumerate(parts):
        found_numbers = numbers_in_text(part.text)
        if found_numbers is None:
            return NOT_FOUND
        sentence = sentence_of[index] if sentence_of is not None else 0
        spaced, _ = part.words
        setting = len(found_numbers) == 1 and _SETTING_WORDS.issuperset(spaced[:-1])
        for found in found_numbers:
            number = found.number
            if number is None or not numbers_equal(unit_as_gold(number, gold), gold):
                # A number the question holds ("from 501") is context, not an answer.
                in_context = number is not None and _plain(number) in context
                if not (setting and spaced[:-1]) and not found.label and not in_context:
                    others.append((sentence, number))
            elif found.bounded:
                rejection = Containment(
                    False, "the gold number is in the output, but bounded", "gold_negated"
                )
            elif (
                any(_is_negation(spaced, position, context) for position in range(len(spaced)))
                or index + 1 in refusals
            ):
                rejection = Containment(
                    False, "the gold number is in the output, but negated", "gold_negated"
                )
            else:
                matched.append((sentence, number))
    if not matched:
        return rejection
    for sentence, number in matched:
        if not any(_same_kind(other, gold) for where, other in others if where == sentence):
            return Containment(
                True, f"The gold number {gold} is found in the output as {number}.", number=number
            )
    return Containment(
        False,
        "the gold number is in the output, but beside another number of its kind",
        "second_answer",
    )


def number_negated(text: str) -> bool:
    """Whether a clause of ``text`` that holds a number also holds a negating word
    ("82% is not correct"), or a later clause only says no ("82%? No.")."""
    parts = [_Clause(clause, normal_forms(clause)) for clause in clauses(text)]
    refusals = _refusals(parts)
    for index, part in enumerate(parts):
        if not numbers_in_text(part.text):
            continue
        if index + 1 in refusals or NEGATING_WORDS.intersection(part.forms.spaced.split()):
            return True
    return False


def _plain(number: ParsedNumber) -> str:
    """A number as a normal form writes it ("501", "2.5")."""
    value = number.value
    return str(int(value)) if value == value.to_integral_value() else f"{value:f}"


def unit_as_gold(number: ParsedNumber, gold: ParsedNumber) -> ParsedNumber:
    """``number`` with the gold's unit when its unit begins with it ("5 employees total"
    is a number of employees, as the gold "5 employees" is)."""
    if gold.unit and number.unit.startswith(gold.unit + " "):
        return dataclasses.replace(number, unit=gold.unit)
    return number


def _same_kind(other: ParsedNumber | None, gold: ParsedNumber) -> bool:
    """Whether a second number could be a second answer to the gold's question."""
    if other is None:
        return True  # unreadable: it may be anything
    if _is_year(other) != _is_year(gold):
        return False
    other_unit = ("%" if other.percent else "") + other.unit
    gold_unit = ("%" if gold.percent else "") + gold.unit
    return not (other_unit and gold_unit and other_unit != gold_unit)


def _is_year(number: ParsedNumber) -> bool:
    value = number.value
    return (
        not number.percent
        and not number.unit
        and value == value.to_integral_value()
        and _YEAR_RANGE[0] <= value <= _YEAR_RANGE[1]
    )


def _find_polar(output: str, gold: str, output_declines: bool) -> Containment:
    if output_declines:
        return NOT_FOUND
    first = clauses(output)[:1]
    words = normal_forms(first[0]).spaced.split() if first else []
    if not words or words[0] != gold:
        return NOT_FOUND
    rest = set(words[1:])
    if NEGATING_WORDS.intersection(rest) or POLAR_ANSWERS[gold] in rest:
        return Containment(
            False, "the output begins with the gold answer, but negates it", "gold_negated"
        )
    return Containment(True, f"The output begins with the gold answer {gold!r}.")


def _shown(forms: NormalForms, limit: int = 80) -> str:
    text = forms.spaced
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
