"""BERTScore's token embeddings: the model loaded on first use, idf weights, the cache,
and the length-sorted forward passes (at one layer, or at every layer for baselines)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.cpu_parallel import map_longest_first
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.bertscore.idf import IdfTable, uniform_weights
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


class EmbeddingMixin:
    """The embedding half of :class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`."""

    num_layers: int
    idf: bool
    idf_table: IdfTable | None
    cache: EmbeddingCache
    _load_args: dict[str, Any]
    _encoder: LoadedEncoder | None
    _text_encoder: TextEncoder | None
    _forward_batch_size: HalvingBatchSize

    # -- loading -----------------------------------------------------------------------

    @property
    def encoder(self) -> LoadedEncoder:
        """The shared model and tokenizer, loaded on first use."""
        if self._encoder is None:
            self._encoder = load_encoder(**self._load_args)
        return self._encoder

    @property
    def text_encoder(self) -> TextEncoder:
        """bert_score-faithful tokenization for this model."""
        if self._text_encoder is None:
            encoder = self.encoder
            self._text_encoder = TextEncoder(
                encoder.tokenizer, encoder.max_length, encoder.tokenizer_lock
            )
        return self._text_encoder

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
        return self.cache.fill(self._cache_namespace, texts, self._encode_and_embed)

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
        namespace = self._cache_namespace
        from_cache = list(dict.fromkeys(cached))
        cached_set = set(from_cache)
        fresh = [text for text in dict.fromkeys(texts) if text not in cached_set]
        known = self.cache.lookup(namespace, fresh)
        fresh = [text for text in fresh if text not in known]
        fresh_values: list[tuple[EncodedText, torch.Tensor]] = []

        def encode_with_fresh(missing: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
            values = self._encode_and_embed(missing + fresh)
            fresh_values.extend(values[len(missing) :])
            return values[: len(missing)]

        if from_cache:
            cached_values = self.cache.get_or_compute(namespace, from_cache, encode_with_fresh)
        else:
            cached_values = []
        if fresh and not fresh_values:  # every cached text was a hit
            fresh_values = self._encode_and_embed(fresh)
        unique = from_cache + list(known) + fresh
        computed = cached_values + list(known.values()) + fresh_values
        weights = self._weights([encoded for encoded, _embeddings in computed])
        return {
            text: TextEmbedding(encoded=encoded, embeddings=embeddings, weights=text_weights)
            for text, (encoded, embeddings), text_weights in zip(
                unique, computed, weights, strict=True
            )
        }

    def _encode_and_embed(self, texts: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
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
        forward = functools.partial(self._forward_batch, all_layers=all_layers)
        embeddings = map_longest_first(
            # Out of memory halves the batch (batching/memory.py).
            functools.partial(self._forward_batch_size.run, forward),
            present,
            batch_size=self._forward_batch_size.size,
            length=len,
            device=self.encoder.device,
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
