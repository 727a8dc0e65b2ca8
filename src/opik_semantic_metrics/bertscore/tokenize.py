"""Encoding texts into token ids exactly as bert_score 0.3.13 does (``sent_encode``).

The rules, each of which changes the score:

1. The text is stripped of surrounding whitespace first.
2. Byte-level BPE tokenizers (GPT-2, RoBERTa, BART, ...) read a leading space as part of
   the first word ("OK" and " OK" are different tokens), and bert_score encodes with a
   prefix space. bert_score decides this by the tokenizer's *class* (GPT-2's or
   RoBERTa's slow class), which misses the fast RoBERTa class; we decide by
   *behaviour*: if a leading space joins a word's first token, the tokenizer needs one.
   That equals bert_score's encoding for GPT-2 and RoBERTa tokenizers, WordPiece,
   SentencePiece and byte tokenizers (ByT5, whose space is a token of its own). It
   differs for byte-level BPE tokenizers of other classes, which bert_score encodes with
   the space only where their class derived from GPT-2's or RoBERTa's (BART and DeBERTa
   did in earlier transformers 4 releases, not in 4.40): we always read their first word
   as bert_score reads RoBERTa's.
3. Special tokens are added, and the ids are truncated to the model's limit (512 where
   the tokenizer reports none), special tokens included. An over-long text is tokenized
   only as far as its kept tokens reach, with the same ids
   (:mod:`~opik_semantic_metrics.models.long_texts`).
4. An empty or whitespace-only text is just the special tokens. Under transformers 5
   bert_score crashes there (``build_inputs_with_special_tokens`` is gone); ``encode("")``
   gives the same ids on both major versions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

from opik_semantic_metrics.forking import fork_safe_lock
from opik_semantic_metrics.models.long_texts import (
    leading_part,
    transformers_tokenizer_reads_leading_parts,
)

_PREFIX_PROBE = "OK"


@dataclass(frozen=True)
class EncodedText:
    """Token ids of one text.

    Attributes:
        ids: Token ids, special tokens included.
        truncated: True when the text was longer than the model's limit and was cut.
        empty: True when the text has no tokens besides the special ones.
    """

    ids: tuple[int, ...]
    truncated: bool
    empty: bool


def needs_prefix_space(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether a leading space changes how the first word is tokenized.

    True for byte-level BPE tokenizers that do not add the space themselves (GPT-2,
    RoBERTa, BART): the space joins the word's first token. False for WordPiece and
    SentencePiece tokenizers, which drop the space or add one themselves, and for byte and
    character tokenizers (ByT5), which read it as a token of its own before the word's
    unchanged tokens: bert_score adds no space for any of these.
    """
    word = tokenizer.tokenize(_PREFIX_PROBE)
    spaced = tokenizer.tokenize(" " + _PREFIX_PROBE)
    return spaced != word and spaced[len(spaced) - len(word) :] != word


class TextEncoder:
    """Encodes texts into bert_score-faithful token ids for one tokenizer.

    Args:
        tokenizer: The model's tokenizer.
        max_length: Token limit, special tokens included.
        lock: Serialises calls into the tokenizer when it is shared between threads.

    Example:
        >>> from opik_semantic_metrics.models.loading import load_encoder
        >>> encoder = load_encoder("all-MiniLM-L6-v2", device="cpu")
        >>> text_encoder = TextEncoder(encoder.tokenizer, encoder.max_length)
        >>> text_encoder.encode("  Hello world ").ids
        (101, 7592, 2088, 102)
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        max_length: int,
        lock: threading.Lock | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._lock = lock or fork_safe_lock()
        with self._lock:
            self.prefix_space = needs_prefix_space(tokenizer)
            self.special_ids: tuple[int, ...] = tuple(tokenizer.encode("", add_special_tokens=True))
            self._prefix = " " if self.prefix_space else ""
            self._cuts_long_texts = transformers_tokenizer_reads_leading_parts(
                tokenizer, lambda text: self._prefix + text
            )

    def encode(self, text: str) -> EncodedText:
        """Token ids of one text (see the module docstring for the rules)."""
        return self.encode_many([text])[0]

    def encode_many(self, texts: Sequence[str]) -> list[EncodedText]:
        """Token ids of several texts, in order, from one call into the tokenizer.

        One call for the list rather than one a text: a fast tokenizer then encodes it
        in one pass through its Rust core, faster and with the same ids.
        """
        stripped = [text.strip() for text in texts]
        present = [index for index, text in enumerate(stripped) if text]
        results = [EncodedText(ids=self.special_ids, truncated=False, empty=True)] * len(texts)
        if not present:
            return results
        with self._lock:
            inputs = [self._prefix + self._kept_part(stripped[index]) for index in present]
            id_lists = self.tokenizer(
                inputs, add_special_tokens=True, max_length=self.max_length, truncation=True
            )["input_ids"]
            # Only a text that reached the limit can have been cut: encode those once more
            # without the limit to know (the rare long text pays, the common one does not).
            truncated = {
                index
                for index, text, ids in zip(present, inputs, id_lists, strict=True)
                if len(ids) >= self.max_length
                and len(self.tokenizer.encode(text, add_special_tokens=True, verbose=False))
                > len(ids)
            }
        for index, ids in zip(present, id_lists, strict=True):
            results[index] = EncodedText(
                ids=tuple(ids),
                truncated=index in truncated,
                empty=len(ids) <= len(self.special_ids),
            )
        return results

    def _kept_part(self, text: str) -> str:
        """The leading part of an over-long text that yields the ids the limit keeps."""
        if not self._cuts_long_texts:
            return text
        return leading_part(
            text,
            lambda part: len(self.tokenizer.encode(self._prefix + part, verbose=False)),
            self.max_length,
        )

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Readable token strings for ids (byte-level markers such as ``Ġ`` removed)."""
        with self._lock:
            pieces = self.tokenizer.convert_ids_to_tokens(list(ids))
        return [piece.replace("\u0120", "").replace("\u2581", "") for piece in pieces]
