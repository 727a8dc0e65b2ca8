"""The English words that SemanticMatch and AnswerMatch read: stop words, negations,
number words and scale words, each list in this one place.

Both metrics read these lists; the module imports nothing of the package's, so that
neither metric's folder depends on the other's for a word list. Where the two metrics read a
list differently on purpose, the difference is a name here:

- **Apostrophes.** SemanticMatch compares words as written, with plain apostrophes
  ("isn't"; NLTK's list also splits it as "isn" and "t": :data:`CONTRACTION_STEMS`), and
  reads :data:`NEGATIONS_AS_WRITTEN`. AnswerMatch's normal form deletes apostrophes
  ("isnt"), and reads :data:`NEGATIONS_IN_NORMAL_FORM` (:func:`without_apostrophes`).
- **Which negations.** A flip between two sentences counts any negation; the gold found in
  an answer is also denied by ``"without"`` (:data:`NEGATING_PREPOSITIONS`); a number is
  bounded by a negation just before it only if it negates what follows
  (:data:`NEGATING_WORDS`, :data:`NEGATIVE_VERB_FORMS`), not by a negative pronoun
  ("none", "nothing": :data:`NEGATIVE_PRONOUNS`); an abstention needs a negated verb of
  fact, not of obligation (:data:`MODAL_CONTRACTIONS`).
- **Which scales.** A scale word after a number multiplies it in both metrics
  (:data:`SCALE_WORDS`); a question names the scale of its answer only with one of the
  :data:`REPORTING_SCALE_WORDS`, not with "hundred".

Example:
    >>> "isn't" in NEGATIONS_AS_WRITTEN, "isnt" in NEGATIONS_IN_NORMAL_FORM
    (True, True)
    >>> str(SCALE_WORDS["bn"]), str(NUMBER_WORDS["twenty"])
    ('1000000000', '20')
    >>> import re
    >>> re.findall(rf"\\b(?:{SCALE_PATTERN})\\b", "5 hundred, 2 bn and 3 millions")
    ['hundred', 'bn']
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Final

# -- Stop words ---------------------------------------------------------------------------

# Source: the ``english`` list of NLTK's ``stopwords`` corpus (nltk_data,
# ``corpora/stopwords/english``; Bird, Klein and Loper, "Natural Language Processing with
# Python", O'Reilly 2009; https://www.nltk.org/nltk_data/), the 179 words it has held since
# NLTK 3.4. nltk_data is distributed under the Apache License 2.0, the stop-word lists
# under their own terms as stated in the corpus's README. The words are written out here as
# data, in the corpus's order, so that no corpus download is needed.
_NLTK_ENGLISH = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
yourselves he him his himself she she's her hers herself it it's its itself they them their
theirs themselves what which who whom this that that'll these those am is are was were be been
being have has had having do does did doing a an the and but if or because as until while of
at by for with about against between into through during before after above below to from up
down in out on off over under again further then once here there when where why how all any
both each few more most other some such no nor not only own same so than too very s t can will
just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
wouldn't
"""

#: NLTK's 179 English stop words, lower case with plain apostrophes (compare with
#: ``word.lower()``).
ENGLISH_STOP_WORDS: Final[frozenset[str]] = frozenset(_NLTK_ENGLISH.split())

# -- Negations ----------------------------------------------------------------------------

#: Adverbs that negate the verb they stand by ("is not", "never came").
NEGATING_ADVERBS: Final = frozenset({"not", "never"})
#: Words that negate what follows them: the negating adverbs, ``"no"`` and ``"nor"``.
NEGATING_WORDS: Final = NEGATING_ADVERBS | {"no", "nor"}
#: Negative pronouns and adverbs that stand for a thing, person or place ("nothing",
#: "nobody", "nowhere"): they negate a statement, not the word after them.
NEGATIVE_PRONOUNS: Final = frozenset({"none", "nothing", "nobody", "neither", "nowhere"})
#: The negated auxiliaries, as written with a plain apostrophe, and ``"cannot"``.
NEGATIVE_VERB_FORMS: Final = frozenset(
    {
        "ain't", "aren't", "can't", "cannot", "couldn't", "didn't", "doesn't", "don't",
        "hadn't", "hasn't", "haven't", "isn't", "mightn't", "mustn't", "needn't", "shan't",
        "shouldn't", "wasn't", "weren't", "won't", "wouldn't",
    }
)  # fmt: skip
#: The contractions of the modals of obligation and possibility: "The report needn't say"
#: is about what a report may do, not that it does not say (``can't``, ``couldn't``,
#: ``won't``, ``wouldn't`` do state it: "I couldn't find", "The report won't say").
MODAL_CONTRACTIONS: Final = frozenset({"mightn't", "mustn't", "needn't", "shan't", "shouldn't"})
#: A contraction's first part where it is split at the apostrophe, as NLTK's list has it
#: ("isn" of "isn t"); not "can", which is a word of its own.
CONTRACTION_STEMS: Final = frozenset(
    form.removesuffix("'t") for form in NEGATIVE_VERB_FORMS if form.endswith("'t")
) - {"can"}
#: Prepositions that deny the thing after them ("without Paris"), though not a statement.
NEGATING_PREPOSITIONS: Final = frozenset({"without"})


def without_apostrophes(words: Iterable[str]) -> frozenset[str]:
    """The words as a normal form that deletes apostrophes has them ("isn't" -> "isnt")."""
    return frozenset(word.replace("'", "") for word in words)


#: Every negation as SemanticMatch compares words: plain apostrophes kept, and NLTK's split
#: stems.
NEGATIONS_AS_WRITTEN: Final = (
    NEGATING_WORDS | NEGATIVE_PRONOUNS | NEGATIVE_VERB_FORMS | CONTRACTION_STEMS
)
#: Every negation as AnswerMatch's normal form has it, apostrophes deleted ("isnt").
NEGATIONS_IN_NORMAL_FORM: Final = without_apostrophes(
    NEGATING_WORDS | NEGATIVE_PRONOUNS | NEGATIVE_VERB_FORMS
)

# -- Numbers ------------------------------------------------------------------------------

_UNITS: Final = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",
)  # fmt: skip
_TENS: Final = ("thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

#: English number words and their values: zero to twenty, the tens, "dozen", "twice".
NUMBER_WORDS: Final[dict[str, Decimal]] = {
    **{word: Decimal(value) for value, word in enumerate(_UNITS)},
    **{word: Decimal(10 * tens) for tens, word in enumerate(_TENS, start=3)},
    "dozen": Decimal(12),
    "twice": Decimal(2),
}

_IRREGULAR_ORDINALS: Final = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
    "nine": "ninth", "twelve": "twelfth",
}  # fmt: skip


def _ordinal(cardinal: str) -> str:
    if cardinal in _IRREGULAR_ORDINALS:
        return _IRREGULAR_ORDINALS[cardinal]
    return cardinal[:-1] + "ieth" if cardinal.endswith("ty") else cardinal + "th"


#: Ordinal words and the number words they are made from: "sixteenth" is "sixteen",
#: "twentieth" "twenty", "hundredth" "hundred" (read as "16th", "20th", "100th").
ORDINAL_WORDS: Final[dict[str, str]] = {
    _ordinal(word): word for word in (*_UNITS[1:], *_TENS, "hundred", "thousand")
}

#: Scale words, which multiply the number just before them ("26 million", "$3 bn").
#: Not "m" or "k": after a number they are metres and a unit as often as a scale.
SCALE_WORDS: Final[dict[str, Decimal]] = {
    "hundred": Decimal(10) ** 2,
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
}
#: Scale words that are abbreviations and take no plural "s".
SCALE_ABBREVIATIONS: Final = frozenset({"bn"})
#: The scales a figure is reported in ("in thousands", "how many million hectares"): not
#: "hundred", as "the hundred largest firms" names no scale for the answer's figure.
REPORTING_SCALE_WORDS: Final = frozenset(SCALE_WORDS) - {"hundred"}


def _alternatives(words: Iterable[str]) -> str:
    # Longest first, so that no word is matched by a shorter one it starts with.
    return "|".join(sorted(words, key=lambda word: (-len(word), word)))


#: A regular-expression alternation of the scale words (no group; put it between ``\b``).
SCALE_PATTERN: Final = _alternatives(SCALE_WORDS)
#: The :data:`REPORTING_SCALE_WORDS` and the plurals of the spelled-out ones ("in
#: millions"), as an alternation like :data:`SCALE_PATTERN`.
REPORTING_SCALE_PATTERN: Final = _alternatives(
    f"{word}s?" if word not in SCALE_ABBREVIATIONS else word for word in REPORTING_SCALE_WORDS
)


def singular_scale(word: str) -> str:
    """A scale word without its plural "s" (``"millions"`` -> ``"million"``).

    Example:
        >>> singular_scale("millions"), singular_scale("bn"), singular_scale("thousand")
        ('million', 'bn', 'thousand')
    """
    return word if word in SCALE_WORDS else word.removesuffix("s")
