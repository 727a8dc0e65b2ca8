"""Texts the layered score cannot score: the rules, and the status each gives.

They get a defined score and a status, never an exception:

- an empty output or reference, or one of only whitespace, control and zero-width
  characters: 0.0 (``empty_output``, ``empty_reference``);
- an output or reference with no word at all (punctuation alone, as "?" or "..."): 0.0
  (``no_content_output``, ``no_content_reference``); so "?" against "?" scores 0.0.
  A text of stop words alone ("I can do that.") is scored on all its words (cleaning
  never empties a text that has words, see :mod:`~opik_semantic_metrics.semantic.cleaning`),
  except that when both texts are of stop words alone (NLTK's whole list) and have the
  same words (ignoring case and punctuation, as "No." and "no"), the answers are
  identical and score 1.0 (``same_stop_words``).
- an output or reference none of whose words the model's vocabulary holds (its tokenizer
  gives only [UNK], as MiniLM's for Amharic, or drops every character): 0.0
  (``unknown_words_output``, ``unknown_words_reference``), for the model cannot read it:
  every such text of one length has the same embedding, so "hello" and "goodbye" in
  Amharic would score as alike as the same word twice. Two such texts with the same
  words are identical and score 1.0 (``same_unknown_words``). A text with some known
  pieces is scored on those, which guards nothing when most are unknown (MiniLM reads
  the Chinese "I like cats" and "I hate dogs" alike, one known character and three
  [UNK]s, and scores them 1.0).
"""

from __future__ import annotations

from typing import Final, Literal

from opik_semantic_metrics.inputs import is_blank
from opik_semantic_metrics.semantic.cleaning import has_words, word_forms
from opik_semantic_metrics.semantic.levels import WeightedPieces

Status = Literal[
    "scored",
    "empty_output",
    "empty_reference",
    "no_content_output",
    "no_content_reference",
    "same_stop_words",
    "unknown_words_output",
    "unknown_words_reference",
    "same_unknown_words",
]
#: The statuses of two answers that are the same, which score 1.0 unscored.
SAME_STATUSES: Final = ("same_stop_words", "same_unknown_words")


def text_status(
    output: str, reference: str, output_has_content: bool, reference_has_content: bool
) -> Status:
    """The status a pair's texts give before encoding: ``"scored"`` unless a rule above
    on empty or wordless texts applies (``*_has_content``: the text has a word outside
    NLTK's whole stop-word list)."""
    if is_blank(output):
        return "empty_output"
    if is_blank(reference):
        return "empty_reference"
    if not has_words(output):
        return "no_content_output"
    if not has_words(reference):
        return "no_content_reference"
    if not (output_has_content or reference_has_content) and word_forms(output) == word_forms(
        reference
    ):
        return "same_stop_words"
    return "scored"


def unknown_words_status(
    output: str, reference: str, output_pieces: WeightedPieces, reference_pieces: WeightedPieces
) -> Status | None:
    """The status of a pair one of whose texts has no word the model knows, else None."""
    if output_pieces.empty and reference_pieces.empty:
        same = word_forms(output) == word_forms(reference)
        return "same_unknown_words" if same else "unknown_words_output"
    if output_pieces.empty:
        return "unknown_words_output"
    if reference_pieces.empty:
        return "unknown_words_reference"
    return None
