"""The ``semantic`` method's scorers and guards: the caller's scorer checked, keyword
coverage, and the negations and numbers that keep embedding similarity from matching
opposite answers."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

from opik_semantic_metrics.answers.contains import NEGATIONS
from opik_semantic_metrics.errors import ScorerError, shown
from opik_semantic_metrics.inputs import is_finite_number

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


def semantic_score(scorer: SemanticScorer, output: str, reference: str) -> float | None:
    """The caller's scorer on two texts: a finite score, or ``None`` where it cannot
    read them.

    Raises:
        ScorerError: The scorer raised (its exception is the cause), or returned
            something that is not a finite number.
    """
    name = getattr(scorer, "__name__", type(scorer).__name__)
    try:
        score = scorer(output, reference)
    except ScorerError:
        raise
    except Exception as error:  # a caller's scorer may raise anything
        raise ScorerError(
            f"the semantic scorer {name} failed: {type(error).__name__}: {error}"
        ) from error
    if score is not None and not is_finite_number(score):
        raise ScorerError(
            f"the semantic scorer {name} returned {shown(score)}, not a finite score."
        )
    return None if score is None else float(score)


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
