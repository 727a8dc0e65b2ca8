"""Outputs that decline to answer, phrased freely.

Besides its list of abstention phrases, :class:`~opik_semantic_metrics.answers.tiers.AnswerMatcher`
reads a sentence as declining when it says that the source does not hold the answer
(:func:`declines`). Each rule is a pattern over one sentence's spaced normal form (so
``"doesn't"`` arrives as ``"doesnt"``):

- a source that does not say: a source word (``document``, ``report``, ``text``,
  ``context``, ``it``, ``this``...) before a negation and a verb of saying (``say``,
  ``state``, ``mention``, ``specify``, ``provide``...): "The report does not say.", "The
  document doesn't specify the number of sites.". A verb that can also be the answer's
  own (``include``, ``contain``, ``report``, ``list``, ``cover``, ``disclose``...) counts
  only with an object that is about information ("this", "any", "the answer",
  "information", "whether"...): "The report does not include Scope 3 emissions" is an
  answer, "The report does not include this information" declines;
- a negated finding: "not stated", "is not mentioned", "cannot be found", "not
  available", "not specified in the document", "not in the report";
- a silent source: "The report is silent on this.";
- a failed search: "I could not find", "unable to determine", "cannot confirm";
- no information: "no information", "no specific data on", "no mention of",
  "insufficient information" (``"no data centres"`` is not: the word after must be
  about information, or the sentence must end);
- ``not sure``, ``no idea``;
- a chat model's refusal: "As an AI language model, I don't have access to real-time
  information", "I cannot browse the internet", "my knowledge cutoff";
- in a sentence of at most six words, ``unknown``,
  ``unclear``, ``unspecified``, ``undisclosed``, ``N/A`` ("an unknown supplier" in a
  longer sentence describes, not declines).

A sentence that merely holds a negation ("No, the company does not report Scope 3.",
"Paris is not the largest city.") is an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from opik_semantic_metrics.answers.normalize import NormalForms, normal_forms, prepare
from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.inputs import check_flag
from opik_semantic_metrics.vocabulary import (
    MODAL_CONTRACTIONS,
    NEGATING_ADVERBS,
    NEGATIVE_VERB_FORMS,
    without_apostrophes,
)

#: Outputs that decline to answer (compared in normal form, as whole words).
DEFAULT_ABSTENTIONS = (
    "not answerable",
    "unanswerable",
    "cannot be answered",
    "can not be answered",
    "cannot answer",
    "cannot be determined",
    "can not be determined",
    "cant be determined",
    "cannot determine",
    "fail to answer",
    "failed to answer",
    "not enough information",
    "insufficient information",
    "no answer",
    "i dont know",
    "not mentioned",
)
#: Longer outputs that mention an abstention phrase are answers, not abstentions.
MAX_ABSTENTION_WORDS = 40

# A negated verb of fact, in normal form: "not", "never", the negated auxiliaries other
# than those of obligation ("The report needn't say" declines nothing).
_NEGATION = "(?:{})".format(
    "|".join(
        sorted(NEGATING_ADVERBS | without_apostrophes(NEGATIVE_VERB_FORMS - MODAL_CONTRACTIONS))
    )
)
_SOURCE = (
    r"(?:document|documents|report|reports|text|texts|context|passage|passages|source|sources"
    r"|article|paper|filing|page|pages|table|tables|excerpt|excerpts|material|materials|data"
    r"|information|it|this|they|i|we|question)"
)
_SAYING = (
    r"(?:say|says|said|state|states|stated|mention|mentions|mentioned|specify|specifies"
    r"|specified|indicate|indicates|indicated|tell|tells|told|give|gives|given|provide"
    r"|provides|provided|reveal|reveals|revealed|answer|answers|answered|clarify|clarifies"
    r"|clarified|explain|explains|explained|define|defines|defined|quantify|quantifies"
    r"|specif\w*)"
)
# Verbs that may be the answer's own ("does not include Scope 3"): declining only with
# an object about information.
_HOLDING = (
    r"(?:include|includes|included|contain|contains|contained|report|reports|reported|list"
    r"|lists|listed|cover|covers|covered|disclose|discloses|disclosed|address|addresses"
    r"|addressed|discuss|discusses|discussed|detail|details|detailed|identify|identifies"
    r"|identified|show|shows|shown|offer|offers|offered|have|has|had)"
)
# "any", "such" and "enough" are about information only before an information word or
# at the sentence's end: "It does not contain any almonds." is an answer.
_ABOUT_INFORMATION = (
    r"(?:this|that|it|the answer|an answer|information|info|details|data"
    r"|specifics|whether|how|what|which|who|whom|when|where|why|explicitly|specifically"
    r"|clearly|directly"
    r"|(?:any|such|enough)(?: \w+)?? (?:information|info|details|data|specifics|mention"
    r"|answer|reference|figures|figure)|(?:any|such|enough)$)\b"
)
_FINDING = (
    r"(?:stated|mentioned|specified|given|provided|available|indicated|known|clear"
    r"|determinable|determined|addressed|discussed|found|explained|defined|quantified)"
)
_SEARCH = (
    r"(?:find|found|locate|located|determine|determined|identify|identified|infer"
    r"|inferred|deduce|deduced|confirm|confirmed|answer|answered|tell|say|verify|verified"
    r"|establish|established|ascertain|ascertained)"
)
_INFORMATION = r"(?:information|info|data|details|detail|mention|answer|reference|figures|figure)"
_AFTER_INFORMATION = (
    r"(?= (?:on|about|regarding|concerning|is|are|was|were|available|given|provided|in"
    r"|for|to|that|of|this|as|can|could|from|which|whatsoever|at)\b|$)"
)
_WORDS = r"(?: \w+)"
_DECLINING = re.compile(
    "|".join(
        (
            rf"\b{_SOURCE}{_WORDS}{{0,3}} {_NEGATION}{_WORDS}{{0,2}} {_SAYING}\b",
            rf"\b{_SOURCE}{_WORDS}{{0,3}} {_NEGATION}{_WORDS}{{0,2}} {_HOLDING}"
            rf"(?:$| (?:\w+ )?{_ABOUT_INFORMATION})",
            rf"\b{_NEGATION}(?: be| been)?(?: explicitly| specifically| clearly| directly)?"
            rf" {_FINDING}\b",
            r"\b(?:not|nowhere)(?: explicitly| specifically)?(?: stated| mentioned)? (?:in"
            r"|within|from|part of) (?:the |this |that |any )?(?:provided |given |available )?"
            r"(?:document|documents|report|reports|text|context|passage|source|sources|article"
            r"|paper|filing|pages|excerpt|material|materials)\b",
            rf"\b(?:cannot|cant|couldnt|can not|could not|unable to|not able to|fail to"
            rf"|failed to|did not|didnt|was not able to)(?: \w+)? {_SEARCH}\b",
            rf"\bno(?: \w+)? {_INFORMATION}{_AFTER_INFORMATION}",
            r"\b(?:insufficient|not enough|not sufficient|inadequate)(?: \w+)?"
            r" (?:information|data|context|details|evidence)\b",
            r"\b(?:outside|beyond) the scope of (?:the|this)\b",
            rf"\b{_SOURCE}{_WORDS}{{0,2}} (?:is|are|was|were|remains|remain) silent\b",
            r"\b(?:not sure|no idea)\b",
            # A chat model's refusal: "As an AI language model, I don't have access to
            # real-time information", "I cannot browse the internet".
            r"\bas an ai\b|\bai language model\b",
            r"\bi (?:do not|dont|cannot|cant|am unable to) (?:have (?:access|the ability|real"
            r" time)|access|browse)\b",
            r"\bmy (?:knowledge|training)(?: data)? (?:cutoff|cut off)\b",
        )
    )
)
# Words that decline by themselves, in a short sentence ("Unknown.", "It is unclear."):
# in a longer one they describe something ("an unknown supplier").
_DECLINING_WORD = re.compile(r"\b(?:unknown|unclear|unspecified|undisclosed|n a)\b")
_SHORT_SENTENCE_WORDS = 6
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n+")


def declines(text: str, spaced: str | None = None) -> bool:
    """Whether a sentence of ``text`` declines to answer (the rules above).

    Args:
        text: The output.
        spaced: Its spaced normal form, if known (a text of one sentence is then not
            normalised again).

    Example:
        >>> declines("The report does not say."), declines("This cannot be determined.")
        (True, True)
        >>> declines("The document provides no information on this.")
        True
        >>> declines("No, the company does not report Scope 3 emissions.")
        False
    """
    sentences = [part for part in _SENTENCE_END.split(prepare(text)) if part.strip()]
    if len(sentences) == 1 and spaced is not None:
        return _sentence_declines(spaced)
    return any(_sentence_declines(normal_forms(sentence).spaced) for sentence in sentences)


def _sentence_declines(spaced: str) -> bool:
    if not spaced:
        return False
    if _DECLINING.search(spaced) is not None:
        return True
    return spaced.count(" ") < _SHORT_SENTENCE_WORDS and _DECLINING_WORD.search(spaced) is not None


def checked_abstentions(abstentions: object) -> tuple[str, ...]:
    """The abstention phrases as a tuple, each a non-empty string, at least one."""
    if isinstance(abstentions, str) or not isinstance(abstentions, Iterable):
        raise ValueError(
            f"Expected `abstentions` to be a list of non-empty strings, got {shown(abstentions)}."
        )
    phrases = tuple(abstentions)  # once: a generator would be used up by the check
    if not all(isinstance(phrase, str) and phrase.strip() for phrase in phrases):
        raise ValueError("Expected `abstentions` to be a list of non-empty strings.")
    if not phrases:
        raise ValueError("Expected at least one abstention phrase.")
    return phrases


class Abstentions:
    """What counts as declining to answer: the phrases (as whole words, in an output of
    fewer than :data:`MAX_ABSTENTION_WORDS` words) and, with ``patterns``, the freely
    phrased sentences of :func:`declines`. A longer output declines when its first
    sentence does ("As an AI language model, I don't have access to ... However, ..."):
    what follows such an opening is not an answer the model stands behind.

    Args:
        phrases: Phrases that decline to answer.
        patterns: Also read freely phrased abstentions.

    Raises:
        ValueError: An empty phrase list, a phrase with no word, ``patterns`` not a bool.
    """

    def __init__(self, phrases: Sequence[str], patterns: bool) -> None:
        self.phrases = checked_abstentions(phrases)
        self.patterns = check_flag(patterns, "abstention_patterns")
        spaced = sorted({normal_forms(phrase).spaced for phrase in self.phrases}, key=len)
        if "" in spaced:
            # An empty alternative in the pattern below would find an abstention in
            # every text that has a word.
            raise ValueError(
                "Expected every abstention phrase to hold a word: punctuation alone "
                '("-", "?") normalises to nothing.'
            )
        self._set = frozenset(spaced)
        self._pattern = re.compile(
            r"\b(?:" + "|".join(re.escape(phrase) for phrase in reversed(spaced)) + r")\b"
        )

    def is_phrase(self, forms: NormalForms) -> bool:
        """Whether a whole text is one of the phrases ("Not answerable")."""
        return forms.spaced in self._set or forms.joined in self._set

    def declined(self, text: str, forms: NormalForms) -> bool:
        """Whether an output declines to answer."""
        spaced = forms.spaced
        if spaced.count(" ") >= MAX_ABSTENTION_WORDS:
            first = _FIRST_SENTENCE.match(text.strip())
            if first is None or len(first.group()) >= len(text.strip()):
                return False
            return self.declined(first.group(), normal_forms(first.group()))
        if self._pattern.search(spaced) is not None:
            return True
        return self.patterns and declines(text, spaced)


_FIRST_SENTENCE = re.compile(r".+?[.!?](?=\s|$)", re.DOTALL)
