"""The layered score's encodings: one forward pass per distinct text.

A pass gives both a text's sentence embedding (pooled as the model's sentence-transformers
files say, see :mod:`~opik_semantic_metrics.semantic.pooling`) and its contextual
word-piece vectors; with ``token_vectors="isolated"`` a piece's vector is instead its
own encoding, framed by the special tokens and pooled like a sentence. Texts over the
model's limit are read only as far as the limit keeps (``models/long_texts.py``).

:class:`SemanticEncoder` is what a
:class:`~opik_semantic_metrics.semantic.engine.SemanticMatchEngine` holds (the encoder
engines' skeleton, ``batching/engine.py``, reads its cache namespace and uncached
encoding); the engine owns the cache, the batching and the fitted state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import torch

from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.long_texts import (
    leading_part,
    transformers_tokenizer_reads_leading_parts,
)
from opik_semantic_metrics.semantic.cleaning import CleanedPrefixes, clean_text
from opik_semantic_metrics.semantic.idf import SmoothedIdf
from opik_semantic_metrics.semantic.levels import WeightedPieces
from opik_semantic_metrics.semantic.pooling import PoolingConfig, pool, read_pooling_config
from opik_semantic_metrics.semantic.results import TextEncoding
from opik_semantic_metrics.semantic.settings import TokenVectors as TokenVectors

#: Word-piece markers that are not part of the piece's text (WordPiece, byte-level BPE,
#: SentencePiece).
_PIECE_MARKERS: Final = ("##", "\u0120", "\u2581")


def _is_word_piece(token: str) -> bool:
    """Whether a vocabulary entry is alphanumeric once its piece marker is removed."""
    for marker in _PIECE_MARKERS:
        if token.startswith(marker):
            token = token[len(marker) :]
            break
    return token.isalnum()


class SemanticEncoder:
    """A sentence-transformers model read as the layered score reads it: its pooling,
    length limit and vocabulary of word pieces.

    Build it with :meth:`load`. What it computes depends on the model only: the forward
    batches it runs in are the caller's.

    Attributes:
        encoder: The shared model and tokenizer (one copy per process).
        pooling: The model's pooling configuration.
        max_length: Token limit of a text, special tokens included.
        cuts_long_texts: Whether the tokenizer reads an over-long text by its leading
            part (``models/long_texts.py``), so that only that part is tokenized.

    Example:
        >>> from opik_semantic_metrics.batching.forward import ForwardBatches
        >>> encoder = SemanticEncoder.load("all-MiniLM-L6-v2", device=torch.device("cpu"))
        >>> [encoding] = encoder.encode_uncached(
        ...     ["A cat."], ForwardBatches(8, torch.device("cpu"))
        ... )
        >>> encoder.max_length, tuple(encoding.sentence.shape), len(encoding.piece_ids)
        (256, (384,), 2)
    """

    def __init__(self, encoder: LoadedEncoder) -> None:
        self.encoder = encoder
        self.pooling: PoolingConfig = read_pooling_config(encoder.location)
        self.max_length: int = self.pooling.max_seq_length or encoder.max_length
        tokenizer = encoder.tokenizer
        with encoder.tokenizer_lock:
            special = set(tokenizer.all_special_ids)
            vocabulary = tokenizer.get_vocab()
            # Which token ids are word pieces, looked up for a whole text at once.
            self._is_word_piece = torch.zeros(max(vocabulary.values()) + 1, dtype=torch.bool)
            self._is_word_piece[
                [i for token, i in vocabulary.items() if i not in special and _is_word_piece(token)]
            ] = True
            probe = tokenizer("a")["input_ids"]
            probe_piece = tokenizer("a", add_special_tokens=False)["input_ids"]
        # The special tokens around a one-piece text, to frame isolated pieces.
        at = next(i for i in range(len(probe)) if probe[i : i + len(probe_piece)] == probe_piece)
        self._frame = (probe[:at], probe[at + len(probe_piece) :])
        with encoder.tokenizer_lock:
            self.cuts_long_texts = transformers_tokenizer_reads_leading_parts(
                tokenizer, str.lower if self.pooling.lowercase else str
            )

    @classmethod
    def load(
        cls,
        model: str,
        *,
        device: torch.device,
        dtype: torch.dtype | None = None,
        trust_remote_code: bool = False,
    ) -> SemanticEncoder:
        """The encoder of ``model`` (its weights loaded once per process) and what the
        score reads of its files: pooling, length limit and vocabulary.

        Raises:
            ModelUnavailableError: The model cannot be had.
            ValueError: As :func:`~opik_semantic_metrics.models.loading.load_encoder`, or
                a sentence-transformers pipeline other than Transformer, Pooling, Normalize.
        """
        return cls(
            load_encoder(model, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        )

    @property
    def vocabulary_size(self) -> int:
        """How many token ids the vocabulary spans."""
        return self._is_word_piece.numel()

    # -- texts -------------------------------------------------------------------------

    @property
    def cache_namespace(self) -> tuple[object, ...]:
        """What a cached :class:`TextEncoding` depends on besides its text."""
        return (self.encoder.cache_key, "semantic-match-text", self.max_length)

    def tokenize(self, texts: Sequence[str], **options: object) -> dict[str, torch.Tensor]:
        """The tokenizer's output for ``texts`` (lower-cased where the model's is)."""
        prepared = [text.lower() for text in texts] if self.pooling.lowercase else list(texts)
        with self.encoder.tokenizer_lock:
            return self.encoder.tokenizer(prepared, **options)

    def _token_count(self, text: str) -> int:
        return len(self.tokenize([text], verbose=False)["input_ids"][0])

    def kept_part(self, text: str) -> str:
        """The leading part of an over-long text that yields the tokens the limit keeps
        (``models/long_texts.py``)."""
        if not self.cuts_long_texts:
            return text
        return leading_part(text, self._token_count, self.max_length)

    def kept_clean_text(self, text: str, stop_words: frozenset[str]) -> str:
        """The cleaned text, cut to the leading part that yields the tokens the limit
        keeps: only as much of an over-long text is cleaned as that part needs."""
        if not self.cuts_long_texts:
            return clean_text(text, stop_words)
        cleaned = CleanedPrefixes(text, stop_words)
        part = leading_part(
            text, lambda part: self._token_count(cleaned.of(len(part))), self.max_length
        )
        return cleaned.of(len(part))

    # -- forward passes ----------------------------------------------------------------

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return self.encoder.hidden_states(input_ids, mask).float()

    def _sentence_embeddings(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pooled = pool(hidden, mask.to(hidden.device), self.pooling.modes)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def encode_uncached(self, texts: list[str], batches: ForwardBatches) -> list[TextEncoding]:
        """Each text's sentence embedding and word-piece vectors, in order.

        In ``batches`` of texts of similar token count, longest first, so that they pad
        little (``batching/lengths.py``); on the CPU side by side on single-threaded
        workers (``batching/cpu_parallel.py``); halved where a batch runs out of memory
        (``batching/memory.py``).
        """
        id_lists = self.tokenize(texts, truncation=True, max_length=self.max_length)["input_ids"]
        return batches.map(
            self._encode_batch, list(zip(texts, id_lists, strict=True)), lambda item: len(item[1])
        )

    def _encode_batch(self, items: list[tuple[str, list[int]]]) -> list[TextEncoding]:
        """One forward pass: each text's sentence embedding and word-piece vectors."""
        id_lists = [ids for _, ids in items]
        pad_id = self.encoder.tokenizer.pad_token_id or 0
        input_ids, mask = padded_batch(id_lists, pad_id, self.encoder.device)
        hidden = self._forward(input_ids, mask)
        sentences = self._sentence_embeddings(hidden, mask)
        vectors = torch.nn.functional.normalize(hidden, dim=-1)
        full = self._reached_limit([text for text, _ in items], [len(ids) for ids in id_lists])
        encodings = []
        for row, ids in enumerate(id_lists):
            row_ids = torch.tensor(ids, dtype=torch.long)
            keep = self._is_word_piece[row_ids].nonzero().flatten()
            encodings.append(
                TextEncoding(
                    sentence=sentences[row].clone(),
                    piece_ids=tuple(row_ids[keep].tolist()),
                    # Indexing by a tensor of positions copies.
                    piece_vectors=vectors[row, keep.to(vectors.device)],
                    truncated=full[row],
                )
            )
        return encodings

    def _reached_limit(self, texts: list[str], lengths: list[int]) -> list[bool]:
        """Which texts were cut: only one at the limit can have been, so only those are
        tokenized again without it."""
        at_limit = [i for i, length in enumerate(lengths) if length >= self.max_length]
        cut = [False] * len(texts)
        if at_limit:
            full = self.tokenize([texts[i] for i in at_limit], verbose=False)["input_ids"]
            for i, ids in zip(at_limit, full, strict=True):
                cut[i] = len(ids) > self.max_length
        return cut

    # -- isolated word pieces ----------------------------------------------------------

    @property
    def pieces_namespace(self) -> tuple[object, ...]:
        """What a cached isolated piece vector depends on besides its piece id."""
        return (self.encoder.cache_key, "semantic-match-isolated-piece")

    def encode_pieces(self, keys: list[str], batches: ForwardBatches) -> list[torch.Tensor]:
        """The isolated vector of each word piece (its id as text), encoded on its own, in
        batches of the size known to fit (:meth:`ForwardBatches.run` cuts the list)."""
        return batches.run(self._encode_piece_batch, keys)

    def _encode_piece_batch(self, keys: list[str]) -> list[torch.Tensor]:
        before, after = self._frame
        input_ids = torch.tensor([[*before, int(key), *after] for key in keys])
        input_ids = input_ids.to(self.encoder.device)
        mask = torch.ones_like(input_ids)
        embeddings = self._sentence_embeddings(self._forward(input_ids, mask), mask)
        return [embeddings[row].clone() for row in range(len(keys))]


def weighted_pieces(
    encodings: Sequence[TextEncoding],
    idf: SmoothedIdf,
    isolated: Callable[[list[int]], list[torch.Tensor]] | None = None,
) -> list[WeightedPieces]:
    """The word level's input for each encoded (cleaned) text: its word-piece vectors
    and their idf weights.

    With ``isolated``, each piece's vector is instead ``isolated(piece_ids)``'s, asked
    once for the distinct pieces of all the texts (isolated vectors depend on the piece
    only).
    """
    found: tuple[torch.Tensor, torch.Tensor] | None = None
    if isolated is not None:
        ids = sorted({i for encoding in encodings for i in encoding.piece_ids})
        if ids:
            found = (torch.tensor(ids, dtype=torch.long), torch.stack(isolated(ids)))
    weighted = []
    for encoding in encodings:
        piece_ids = torch.tensor(encoding.piece_ids, dtype=torch.long)
        vectors = encoding.piece_vectors
        if found is not None and encoding.piece_ids:
            known, known_vectors = found
            vectors = known_vectors[torch.searchsorted(known, piece_ids).to(vectors.device)]
        weights = idf.weigh(piece_ids).to(vectors.device)
        weighted.append(WeightedPieces(vectors=vectors, weights=weights))
    return weighted
