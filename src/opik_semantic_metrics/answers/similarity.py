"""The ``semantic`` method's scorers and guards: the caller's scorer checked (one pair
or a batch), keyword coverage, and the negations, numbers and names that keep embedding
similarity from matching a different answer.

Embeddings place "The Atlantic Ocean" near "The Pacific Ocean" and "Michelangelo" near
"Leonardo da Vinci": they say two texts are about the same thing, not that they give the
same answer. So before any score, :func:`semantic_guard` refuses a pair where one side
is negated and the other is not, where a number of either side is missing from the
other ("8" against "Spiders have six legs"; number words count as their digits), where
the output names what the gold does not ("Michelangelo" for "Leonardo da Vinci", "The
Atlantic Ocean" for "The Pacific Ocean"), or where it holds fewer than half of the gold's
names ("The room was booked." for "The CEO was travelling."; "da Vinci" for "Leonardo
da Vinci" passes). A name is a capitalised word that is not a stop word (the first word
of a sentence only in a text of at most four words), and a word the question holds is
none.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

from opik_semantic_metrics.answers.contains import (
    NEGATIONS,
    NO_CONTEXT,
    STEM_MAX_ENDING,
    Context,
)
from opik_semantic_metrics.answers.normalize import normal_forms, search_text
from opik_semantic_metrics.errors import ScorerError, shown
from opik_semantic_metrics.inputs import is_finite_number
from opik_semantic_metrics.vocabulary import ENGLISH_STOP_WORDS

#: A number in a normal form, alone or inside a word ("scope1", "q2").
DIGIT_RUN = re.compile(r"\d+(?:\.\d+)?")
#: The semantic tier's model-free mode.
KEYWORDS = "keywords"
#: Keyword coverage counts the gold's words at least this long, i.e. longer than 3
#: characters (the MMESGBench answer analysis's rule).
KEYWORD_MIN_LENGTH = 4
#: ``(output, reference) -> score``, or ``None`` where the scorer cannot judge the pair
#: (its model reads a word of either text only as unknown).
SemanticScorer = Callable[[str, str], float | None]


#: A capitalised word (a name, an acronym, a month).
_CAPITALISED = re.compile(r"\b[A-Z][^\W_]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)[\"'(\u201c]*([A-Z][^\W_]*)")
#: A gold of at most this many words is a name or a phrase: every capitalised word in
#: it is a name. In a longer gold, the first word of a sentence may just be capitalised.
_NAME_GOLD_WORDS = 4


def semantic_guard(
    output: str, gold: str, context: Context = NO_CONTEXT
) -> tuple[str | None, str] | None:
    """Why the semantic tier must not judge a pair, as ``(flag, note)``; ``None`` when it
    may. See the module docstring.

    Example:
        >>> semantic_guard("The Atlantic Ocean", "The Pacific Ocean")
        ('other_name', "the output names ['atlantic'], which the gold does not")
        >>> semantic_guard("Spiders stand on eight legs.", "Spiders have 8 legs.") is None
        True
    """
    # The search form writes numbers in words as digits ("eight" is 8).
    output_text, gold_text = search_text(output), search_text(gold)
    output_forms, gold_forms = normal_forms(output_text), normal_forms(gold_text)
    output_words, gold_words = output_forms.spaced.split(), gold_forms.spaced.split()
    if negated(output_words) != negated(gold_words):
        return "negation_mismatch", "one answer is negated and the other is not"
    if all(len(word) == 1 for word in gold_words):
        # An option letter ("B"): embeddings of two letters say nothing about the answer.
        return None, "a gold of single letters is matched exactly or not at all"
    # Digits inside words count ("SSP1", "Q2"): embeddings barely tell them apart.
    gold_numbers = set(DIGIT_RUN.findall(gold_forms.spaced))
    output_numbers = set(DIGIT_RUN.findall(output_forms.spaced))
    missing = gold_numbers - output_numbers
    if missing:
        return "gold_number_missing", f"the output lacks the gold's number(s) {sorted(missing)}"
    extra = output_numbers - gold_numbers if gold_numbers else set()
    if extra:
        return "output_number_extra", f"the output has number(s) {sorted(extra)} the gold lacks"
    gold_vocabulary = {*gold_words, *gold_forms.joined.split()}
    other = [
        name
        for name in _names(output_text)
        if name not in context and not any(_stem_of(name, word) for word in gold_vocabulary)
    ]
    if other:
        return "other_name", f"the output names {other}, which the gold does not"
    vocabulary = {*output_words, *output_forms.joined.split()}
    names = [name for name in _names(gold_text) if name not in context]
    found = [name for name in names if any(_stem_of(name, word) for word in vocabulary)]
    if 2 * len(found) < len(names):
        absent = [name for name in names if name not in found]
        return "gold_name_missing", f"the output lacks the gold's name(s) {absent}"
    return None


def text_names(gold: str) -> list[str]:
    """A text's names, in normal form: its capitalised words that are not stop words,
    but for the first word of a sentence in a text of more than four words.

    Example:
        >>> text_names("Leonardo da Vinci"), text_names("It was moved as the CEO was away.")
        (['leonardo', 'vinci'], ['ceo'])
    """
    return _names(search_text(gold))


def _names(text: str) -> list[str]:
    """:func:`text_names` of a text already in its search form (capitals kept)."""
    starts = set()
    if len(text.split()) > _NAME_GOLD_WORDS:
        starts = {found.start(1) for found in _SENTENCE_START.finditer(text)}
    names = []
    for found in _CAPITALISED.finditer(text):
        if found.start() in starts:
            continue
        word = normal_forms(found.group()).joined
        if word and word not in ENGLISH_STOP_WORDS and word not in names:
            names.append(word)
    return names


def _stem_of(name: str, word: str) -> bool:
    return word == name or (
        word.startswith(name) and len(word) <= len(name) + STEM_MAX_ENDING and len(name) > 3
    )


def semantic_scores(scorer: SemanticScorer, pairs: Sequence[tuple[str, str]]) -> list[float | None]:
    """The caller's scorer on many ``(output, reference)`` pairs: in one call of its
    ``score_pairs`` where it has one (a batch of forward passes), else pair by pair. Each
    score is finite, or ``None`` where the scorer cannot read the pair.

    Raises:
        ScorerError: The scorer raised (its exception is the cause), or returned
            something that is not a finite number, or not one score a pair.
    """
    name = getattr(scorer, "__name__", type(scorer).__name__)
    score_pairs = getattr(scorer, "score_pairs", None)
    try:
        if score_pairs is None:
            scores = [scorer(output, reference) for output, reference in pairs]
        else:
            scores = list(score_pairs(pairs))
    except ScorerError:
        raise
    except Exception as error:  # a caller's scorer may raise anything
        raise ScorerError(
            f"the semantic scorer {name} failed: {type(error).__name__}: {error}"
        ) from error
    if len(scores) != len(pairs):
        raise ScorerError(
            f"the semantic scorer {name} returned {len(scores)} scores for {len(pairs)} pairs."
        )
    for score in scores:
        if score is not None and not is_finite_number(score):
            raise ScorerError(
                f"the semantic scorer {name} returned {shown(score)}, not a finite score."
            )
    return [None if score is None else float(score) for score in scores]


def semantic_score(scorer: SemanticScorer, output: str, reference: str) -> float | None:
    """:func:`semantic_scores` of one pair."""
    return semantic_scores(scorer, [(output, reference)])[0]


def negated(words: Sequence[str]) -> bool:
    return any(word in NEGATIONS for word in words)


def keyword_coverage(output_words: Sequence[str], gold_words: Sequence[str]) -> float | None:
    """Share of the gold's distinct words longer than 3 characters that begin an output
    word (so ``"report"`` is found in ``"reports"``); ``None`` when the gold has none.

    Both sides are words of the normal form (spaced).

    Example:
        >>> keyword_coverage("sellers report scope 1".split(), "seller reports scope 1".split())
        0.6666666666666666
    """
    keywords = {word for word in gold_words if len(word) >= KEYWORD_MIN_LENGTH}
    if not keywords:
        return None
    vocabulary = sorted(set(output_words))
    found = 0
    for keyword in keywords:
        position = bisect.bisect_left(vocabulary, keyword)
        found += position < len(vocabulary) and vocabulary[position].startswith(keyword)
    return found / len(keywords)
