"""BERTScore's token embeddings: the model and its bert_score-faithful tokenization, idf
weights, the cache, and the forward passes (at one layer, or at every layer for baselines),
on the encoder engines' skeleton (``batching/engine.py``)."""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.bertscore.idf import IdfTable, uniform_weights
from opik_semantic_metrics.bertscore.results import BERTScoreResult
from opik_semantic_metrics.bertscore.tokenize import EncodedText, TextEncoder
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import as_list, item_name, reference_texts
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.layers import hidden_size
from opik_semantic_metrics.models.loading import load_encoder

Reference = str | Sequence[str]


@dataclass(frozen=True)
class TextEmbedding:
    """A text's token ids, L2-normalised token embeddings ``(length, dim)`` and weights."""

    encoded: EncodedText
    embeddings: torch.Tensor
    weights: torch.Tensor


class EmbeddingMixin(EncoderEngine[tuple[str, Reference], BERTScoreResult]):
    """The embedding half of :class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`."""

    num_layers: int
    idf: bool
    idf_table: IdfTable | None
    _load_args: dict[str, Any]
    #: The shared model and tokenizer.
    encoder: LoadedEncoder
    #: bert_score-faithful tokenization for this model.
    text_encoder: TextEncoder

    # -- loading -----------------------------------------------------------------------

    def _load(self) -> None:
        self.encoder = load_encoder(**self._load_args, device=self.device, dtype=self.dtype)
        self.text_encoder = TextEncoder(
            self.encoder.tokenizer, self.encoder.max_length, self.encoder.tokenizer_lock
        )

    def _check_idf_fitted(self) -> None:
        if self.idf and self.idf_table is None:
            raise InputError(
                "idf weights are not fitted: call `fit_idf(references)` on your dataset's "
                "references first (idf is a corpus-level statistic, never fitted per item)."
            )

    def _weights(self, encoded: Sequence[EncodedText]) -> list[torch.Tensor]:
        """Token weights of each text, looked up for all their tokens at once."""
        self._check_idf_fitted()
        if not encoded:
            return []
        ids = torch.tensor(list(itertools.chain.from_iterable(item.ids for item in encoded)))
        if self.idf_table is not None and self.idf:
            weights = self.idf_table.weigh(ids)
        else:
            tokenizer = self.encoder.tokenizer
            # bert_score zeroes exactly these two ids when idf is off (GPT-2 has neither).
            special = [tokenizer.cls_token_id, tokenizer.sep_token_id]
            weights = uniform_weights(ids, [token for token in special if token is not None])
        return list(weights.split([len(item.ids) for item in encoded]))

    # -- embeddings --------------------------------------------------------------------

    @property
    def _cache_namespace(self) -> tuple[Hashable, str]:
        return (self.encoder.cache_key, "bertscore-token-embeddings")

    def prepare(self, references: Sequence[Reference]) -> int:
        """Encode a dataset's references into the embedding cache before scoring it.

        One pass over the whole list, in length-sorted batches, so that scoring its
        items (per item from Opik's threads, or in lists) encodes only their candidates:
        a few items at a time make small batches, the whole list makes full ones. Scores
        are the same with or without it. The cache stays within its bound: where the
        references do not all fit, the leading ones are kept and a warning says how
        many (``EmbeddingCache.fill``).

        Args:
            references: Per item, a reference text or a non-empty list of them, as
                :meth:`score` takes them; repeats are encoded once.

        Returns:
            How many distinct reference texts are in the cache.

        Raises:
            InputError: Not a list, or an item :meth:`score` would refuse, named.
        """
        items = as_list(references, "references")
        texts = [
            text
            for index, item in enumerate(items)
            for text in reference_texts(item, item_name("reference", index, len(items)))
        ]
        return self._fill_cache(texts)

    def _embed(
        self, texts: Sequence[str], *, cached: Sequence[str] = ()
    ) -> dict[str, TextEmbedding]:
        """Token ids, embeddings and weights of the distinct ``texts`` and ``cached`` texts.

        Ids and embeddings of ``cached`` texts come from the process-wide cache, keyed on
        the exact text and everything the embeddings depend on, so a reference is encoded
        once per process whatever metric, item or experiment asks for it. ``texts`` are
        not stored, but one that is cached already (an output equal to a reference) is
        taken from the cache. The cache's misses and ``texts`` are encoded together, in
        one list of forward passes, so that a micro-batch of a few items still makes
        batches as large as it can. Weights depend on the engine's idf table and are
        looked up afresh.
        """
        from_cache = list(dict.fromkeys(cached))
        cached_set = set(from_cache)
        fresh = [text for text in dict.fromkeys(texts) if text not in cached_set]
        known = self._cache_lookup(fresh)
        fresh = [text for text in fresh if text not in known]
        fresh_values: list[tuple[EncodedText, torch.Tensor]] = []

        def encode_with_fresh(missing: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
            values = self._encode_uncached(missing + fresh)
            fresh_values.extend(values[len(missing) :])
            return values[: len(missing)]

        cached_values = self._cached(from_cache, encode_with_fresh) if from_cache else []
        if fresh and not fresh_values:  # every cached text was a hit
            fresh_values = self._encode_uncached(fresh)
        unique = from_cache + list(known) + fresh
        computed = cached_values + list(known.values()) + fresh_values
        weights = self._weights([encoded for encoded, _embeddings in computed])
        return {
            text: TextEmbedding(encoded=encoded, embeddings=embeddings, weights=text_weights)
            for text, (encoded, embeddings), text_weights in zip(
                unique, computed, weights, strict=True
            )
        }

    def _encode_uncached(self, texts: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
        encoded = self.text_encoder.encode_many(texts)
        embeddings = self._forward([item.ids for item in encoded])
        return list(zip(encoded, embeddings, strict=True))

    def _forward(
        self, id_lists: Sequence[Sequence[int]], all_layers: bool = False
    ) -> list[torch.Tensor]:
        """L2-normalised float32 token embeddings of each id list, in order.

        Each is ``(length, dim)``, or ``(layers, length, dim)`` with ``all_layers``. Texts
        run in batches of similar length, longest first, so that each batch pads little
        (``batching/lengths.py``); on the CPU the batches run side by side on
        single-threaded workers (``batching/cpu_parallel.py``). An id list with no ids
        (an empty text, with a tokenizer that adds no special tokens, as GPT-2's) gets no
        embeddings: a model cannot run on it.
        """
        present = [ids for ids in id_lists if ids]
        embeddings = self.forward_batches.map(
            lambda batch: self._forward_batch(batch, all_layers=all_layers), present, len
        )
        if len(present) == len(id_lists):
            return embeddings
        width = hidden_size(self.encoder.model)
        shape = (self.num_layers + 1, 0, width) if all_layers else (0, width)
        none = torch.empty(shape, device=self.encoder.device)
        computed = iter(embeddings)
        return [next(computed) if ids else none for ids in id_lists]

    def _forward_batch(
        self, id_lists: Sequence[Sequence[int]], all_layers: bool
    ) -> list[torch.Tensor]:
        encoder = self.encoder
        pad_id = encoder.tokenizer.pad_token_id or 0
        input_ids, mask = padded_batch(id_lists, pad_id, encoder.device)
        with torch.inference_mode():
            if all_layers:
                hidden = torch.stack(encoder.all_hidden_states(input_ids, mask), dim=1)
            else:
                hidden = encoder.hidden_states(input_ids, mask)
            hidden = hidden.float()
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            # Copies, so that a cached text does not keep its whole batch alive.
            return [hidden[row, ..., : len(ids), :].clone() for row, ids in enumerate(id_lists)]
