"""The skeleton of the three encoder engines: BERTScore's, SemanticMatch's and COMET's.

Each engine holds its loaded model side, an object of its own kind that
:class:`EncoderEngine` reads through :class:`LoadedModel` (BERTScore's
:class:`~opik_semantic_metrics.bertscore.embedding.TokenEmbedder`, SemanticMatch's
:class:`~opik_semantic_metrics.semantic.encoding.SemanticEncoder`, COMET's
:class:`~opik_semantic_metrics.comet.engine.LoadedComet`), and the skeleton writes the
parts around it once:

- **Loading.** The model loads when the engine is built: :meth:`EncoderEngine._build`
  checks the device and weight type, then calls the engine's loader, whose result it keeps
  as :attr:`EncoderEngine.loaded`. A model that cannot be had then fails once, with the
  error naming it, not on every item of an experiment (``docs/design/one-model-copy.md``);
  the loaders keep one copy per process.
- **The cache.** Per-text values (token or sentence embeddings) go through one
  :class:`~opik_semantic_metrics.batching.cache.EmbeddingCache` under the loaded model's
  :attr:`LoadedModel.cache_namespace`: :meth:`EncoderEngine._cached` while scoring,
  :meth:`EncoderEngine._fill_cache` in ``prepare``, both computing what is missing with
  :meth:`LoadedModel.encode_uncached`.
- **Forward passes.** :class:`~opik_semantic_metrics.batching.forward.ForwardBatches`:
  length-sorted batches sized by device, halved where one runs out of memory; the engine
  owns them and hands them to its loaded model, which the engines of a process may share.
- **Per-item calls.** ``score_one`` checks its item in the caller's thread and hands it to
  the engine's batcher (:func:`~opik_semantic_metrics.batching.forward.item_batcher`: one
  CPU worker policy for all), which runs :meth:`EncoderEngine._score_items` on the items
  that arrive together.

What differs between engines is only what they compute: which texts a ``prepare`` reads,
what a text's cached value is (the loaded model's business), and how a list of items is
scored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache, shared_cache
from opik_semantic_metrics.batching.forward import ForwardBatches, item_batcher, match_batch_size
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.batching.microbatch import MicroBatcher
from opik_semantic_metrics.models.devices import resolve_device, resolve_dtype


class LoadedModel(Protocol):
    """What an engine holds: a loaded model that computes the values its cache keeps."""

    @property
    def cache_namespace(self) -> Hashable:
        """Everything a cached value depends on besides its text."""
        ...

    def encode_uncached(self, texts: list[str], batches: ForwardBatches) -> list[Any]:
        """The value the cache keeps of each text, in order, computed in ``batches``."""
        ...


LoadedT = TypeVar("LoadedT", bound=LoadedModel)
ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class EncoderEngine(ABC, Generic[LoadedT, ItemT, ResultT]):
    """The loading, cache and batching every encoder engine shares (see the module).

    An engine's constructor checks its own settings, then calls :meth:`_build` with its
    loader; :meth:`_build` resolves the device and weight type, sets up the batching and
    the cache, and keeps what the loader returns as :attr:`loaded`.

    Attributes:
        loaded: The engine's loaded model side (a :class:`LoadedModel`).
        device: Where the model runs.
        dtype: The type of the model's weights.
        batch_size: The engine's ``batch_size`` setting.
        forward_batches: Its forward passes over lists of texts.
        match_batch_size: Most pairs of a batched similarity product (halved on out of
            memory; its memory is not the encoder's).
        cache: Where its per-text values are kept.
        batcher: The batcher of its per-item calls.

    Example:
        A skeleton whose "model" upper-cases text, to show the parts:

        >>> class Upper:
        ...     cache_namespace = ("upper",)
        ...     def encode_uncached(self, texts, batches):
        ...         return batches.map(lambda batch: [t.upper() for t in batch], texts, len)
        >>> class UpperEngine(EncoderEngine[Upper, str, str]):
        ...     def __init__(self) -> None:
        ...         self._build("cpu", None, lambda device, dtype: Upper(), batch_size=2,
        ...                     micro_batch_size=4, cache=EmbeddingCache())
        ...     def _score_items(self, items: list[str]) -> list[str]:
        ...         return self._cached(items)
        >>> engine = UpperEngine()
        >>> type(engine.loaded).__name__, engine._fill_cache(["ab", "c"])
        ('Upper', 2)
        >>> engine.batcher.submit("ab")
        'AB'
    """

    loaded: LoadedT
    device: torch.device
    dtype: torch.dtype
    batch_size: int
    forward_batches: ForwardBatches
    match_batch_size: HalvingBatchSize
    cache: EmbeddingCache
    batcher: MicroBatcher[ItemT, ResultT]

    def _build(
        self,
        device: str | torch.device | None,
        dtype: str | torch.dtype | None,
        load: Callable[[torch.device, torch.dtype], LoadedT],
        *,
        batch_size: int,
        micro_batch_size: int,
        cache: EmbeddingCache | None,
    ) -> None:
        """Resolve ``device`` and ``dtype``, set up the batching and the cache, then load
        the model: ``load(device, dtype)`` becomes :attr:`loaded`.

        Raises:
            ValueError: A device this machine lacks, or an unknown ``dtype``.
            ModelUnavailableError: From ``load``: the model cannot be had.
        """
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        # Length-sorted, sized by device, halved on out of memory (batching/forward.py).
        self.forward_batches = ForwardBatches(batch_size, self.device)
        self.match_batch_size = match_batch_size(batch_size, self.device)
        self.cache = cache if cache is not None else shared_cache()
        # Per-item calls: workers sharing a CPU's cores, one batch at a time on a GPU.
        self.batcher = item_batcher(self._score_items, self.device, micro_batch_size)
        self.loaded = load(self.device, self.dtype)

    # -- the cache -----------------------------------------------------------------------

    @property
    def _cache_namespace(self) -> Hashable:
        """The loaded model's cache namespace."""
        return self.loaded.cache_namespace

    def _encode_uncached(self, texts: list[str]) -> list[Any]:
        """The loaded model's values of ``texts``, in this engine's forward batches."""
        return self.loaded.encode_uncached(texts, self.forward_batches)

    def _cached(
        self,
        texts: Sequence[str],
        compute: Callable[[list[str]], Sequence[Any]] | None = None,
    ) -> list[Any]:
        """The value of each of ``texts`` (repeats allowed), computing and keeping those not
        cached, with ``compute`` where given, else :meth:`_encode_uncached`."""
        return self.cache.get_or_compute(
            self._cache_namespace, texts, compute or self._encode_uncached
        )

    def _cache_lookup(self, texts: Sequence[str]) -> dict[str, Any]:
        """The cached values of those of ``texts`` that are cached; computes nothing."""
        return self.cache.lookup(self._cache_namespace, texts)

    def _fill_cache(self, texts: Sequence[str]) -> int:
        """``prepare``'s pass: compute and keep the values of ``texts`` in length-sorted
        batches, as far as the cache's bound allows; returns how many are cached."""
        return self.cache.fill(self._cache_namespace, texts, self._encode_uncached)

    # -- per-item calls ------------------------------------------------------------------

    @abstractmethod
    def _score_items(self, items: list[ItemT]) -> list[ResultT]:
        """Score the items that arrived together, one result each, in order."""
