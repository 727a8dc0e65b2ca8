"""The layered score's encodings: one forward pass per distinct text, through the cache.

A pass gives both a text's sentence embedding (pooled as the model's sentence-transformers
files say, see :mod:`~opik_semantic_metrics.semantic.pooling`) and its contextual
word-piece vectors; with ``token_vectors="isolated"`` a piece's vector is instead its
own encoding, framed by the special tokens and pooled like a sentence. Texts over the
model's limit are read only as far as the limit keeps (``models/long_texts.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import torch

from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.inputs import as_list, is_blank, item_name
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
from opik_semantic_metrics.semantic.references import Reference, reference_text
from opik_semantic_metrics.semantic.results import (
    FittedState,
    SemanticMatchResult,
    TextEncoding,
)

TokenVectors = Literal["contextual", "isolated"]
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


class EncodingMixin(EncoderEngine[tuple[str, Reference], SemanticMatchResult]):
    """The encoding half of :class:`~opik_semantic_metrics.semantic.engine.SemanticMatchEngine`:
    the model, embeddings, their cache, and :meth:`prepare`, on the encoder engines'
    skeleton (``batching/engine.py``)."""

    encoder: LoadedEncoder
    model_name: str
    pooling: PoolingConfig
    max_length: int
    token_vectors: TokenVectors
    state: FittedState
    _stop_words: frozenset[str]
    _load_args: dict[str, Any]

    def _load(self) -> None:
        """The model, and what the score reads of its files: pooling, length limit and
        vocabulary."""
        self.encoder = load_encoder(**self._load_args, device=self.device, dtype=self.dtype)
        self.model_name = self.encoder.name
        self.pooling = read_pooling_config(self.encoder.location)
        self.max_length = self.pooling.max_seq_length or self.encoder.max_length
        self._read_vocabulary()

    @property
    def _cache_namespace(self) -> tuple[object, ...]:
        return (self.encoder.cache_key, "semantic-match-text", self.max_length)

    def _read_vocabulary(self) -> None:
        """Which token ids are word pieces, the special tokens that frame an isolated
        piece, and whether the tokenizer reads over-long texts by their leading part."""
        tokenizer = self.encoder.tokenizer
        with self.encoder.tokenizer_lock:
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
        with self.encoder.tokenizer_lock:
            self._cuts_long_texts = transformers_tokenizer_reads_leading_parts(
                tokenizer, str.lower if self.pooling.lowercase else str
            )

    def encode(self, texts: Sequence[str]) -> list[TextEncoding]:
        """Sentence embeddings and word-piece vectors of texts, through the cache."""
        return self._cached(texts)

    def _tokenize(self, texts: Sequence[str], **options: object) -> dict[str, torch.Tensor]:
        prepared = [text.lower() for text in texts] if self.pooling.lowercase else list(texts)
        with self.encoder.tokenizer_lock:
            return self.encoder.tokenizer(prepared, **options)

    def _token_count(self, text: str) -> int:
        return len(self._tokenize([text], verbose=False)["input_ids"][0])

    def _kept_part(self, text: str) -> str:
        """The leading part of an over-long text that yields the tokens the limit keeps
        (``models/long_texts.py``)."""
        if not self._cuts_long_texts:
            return text
        return leading_part(text, self._token_count, self.max_length)

    def _kept_clean_text(self, text: str, stop_words: frozenset[str]) -> str:
        """The cleaned text, cut to the leading part that yields the tokens the limit
        keeps: only as much of an over-long text is cleaned as that part needs."""
        if not self._cuts_long_texts:
            return clean_text(text, stop_words)
        cleaned = CleanedPrefixes(text, stop_words)
        part = leading_part(
            text, lambda part: self._token_count(cleaned.of(len(part))), self.max_length
        )
        return cleaned.of(len(part))

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return self.encoder.hidden_states(input_ids, mask).float()

    def _sentence_embeddings(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pooled = pool(hidden, mask.to(hidden.device), self.pooling.modes)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def _encode_uncached(self, texts: list[str]) -> list[TextEncoding]:
        """Batches of texts of similar token count, longest first, so that they pad little
        (``batching/lengths.py``); on the CPU side by side on single-threaded workers
        (``batching/cpu_parallel.py``); halved where a batch runs out of memory
        (``batching/memory.py``)."""
        id_lists = self._tokenize(texts, truncation=True, max_length=self.max_length)["input_ids"]
        return self.forward_batches.map(
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
            full = self._tokenize([texts[i] for i in at_limit], verbose=False)["input_ids"]
            for i, ids in zip(at_limit, full, strict=True):
                cut[i] = len(ids) > self.max_length
        return cut

    def _encode_pieces(self, keys: list[str]) -> list[torch.Tensor]:
        """The isolated vector of each word piece (its id as text), encoded on its own, in
        batches of the size known to fit (:meth:`ForwardBatches.run` cuts the list)."""
        return self.forward_batches.run(self._encode_piece_batch, keys)

    def _encode_piece_batch(self, keys: list[str]) -> list[torch.Tensor]:
        before, after = self._frame
        input_ids = torch.tensor([[*before, int(key), *after] for key in keys])
        input_ids = input_ids.to(self.encoder.device)
        mask = torch.ones_like(input_ids)
        embeddings = self._sentence_embeddings(self._forward(input_ids, mask), mask)
        return [embeddings[row].clone() for row in range(len(keys))]

    def _weighted_pieces(
        self, encodings: Sequence[TextEncoding], idf: SmoothedIdf
    ) -> list[WeightedPieces]:
        """The word level's input for each encoded (cleaned) text.

        Isolated vectors depend on the piece only: those of all the texts are looked up
        (and the missing ones computed) in one call, cached by piece id.
        """
        isolated: tuple[torch.Tensor, torch.Tensor] | None = None
        if self.token_vectors == "isolated":
            namespace = (self.encoder.cache_key, "semantic-match-isolated-piece")
            ids = sorted({i for encoding in encodings for i in encoding.piece_ids})
            if ids:
                found = self.cache.get_or_compute(
                    namespace, [str(i) for i in ids], self._encode_pieces
                )
                isolated = (torch.tensor(ids, dtype=torch.long), torch.stack(found))
        weighted = []
        for encoding in encodings:
            piece_ids = torch.tensor(encoding.piece_ids, dtype=torch.long)
            vectors = encoding.piece_vectors
            if isolated is not None and encoding.piece_ids:
                known, known_vectors = isolated
                vectors = known_vectors[torch.searchsorted(known, piece_ids).to(vectors.device)]
            weights = idf.weigh(piece_ids).to(vectors.device)
            weighted.append(WeightedPieces(vectors=vectors, weights=weights))
        return weighted

    def prepare(self, references: Sequence[Reference]) -> int:
        """Encode a dataset's references into the embedding cache before scoring it.

        One pass over the whole list, in length-sorted batches, of what scoring reads of
        each reference (its raw and its cleaned text, cut where the model's limit cuts
        them; with ``token_vectors="isolated"``, its word pieces too), so that scoring
        its items encodes only their outputs. Scores are the same with or without it.
        References scoring would not encode (blank, or nothing left once cleaned) are
        skipped, by the same rule. The cache stays within its bound: where the
        references do not all fit, the leading ones are kept and a warning says how many.

        Args:
            references: Per item, a reference string or a non-empty list of strings.

        Returns:
            How many distinct texts (raw and cleaned) are in the cache.

        Raises:
            InputError: Not a list, or an item :meth:`score` would refuse, named.
        """
        corpus = as_list(references, "references")
        joined = [
            reference_text(reference, item_name("reference", index, len(corpus)))
            for index, reference in enumerate(corpus)
        ]
        texts = []
        cleaned = []
        for reference in dict.fromkeys(joined):
            if is_blank(reference):
                continue
            clean = self._kept_clean_text(reference, self._stop_words)
            if clean:
                texts += [self._kept_part(reference), clean]
                cleaned.append(clean)
        kept = self._fill_cache(texts)
        if self.token_vectors == "isolated":
            # Their word pieces' isolated vectors, cached by piece id.
            found = self._cache_lookup(cleaned)
            self._weighted_pieces(list(found.values()), self.state.idf)
        return kept
