"""CometEngine: COMET checkpoints scored natively, equal to unbabel-comet 2.2.7.

The engine knows nothing of Opik. It loads a COMET model once per process (a Hub id, a
model directory or a ``model.ckpt`` path; see ``checkpoint.py``) and scores lists of
``(source, translation, reference)``; :meth:`CometEngine.score_one` scores one item,
batched with the items other threads score at the same time.

Regression models encode the source, translation and reference separately, so each
segment's pooled embedding is kept in the process-wide embedding cache, keyed on the
checkpoint file and the exact text: the sources and references of a dataset are encoded
once, whatever the number of systems, metric instances or experiments scored against them.
Unified models (COMETKiwi, XCOMET) encode joined sequences, which cannot be shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.comet.checkpoint import (
    DEFAULT_MODEL,
    FAITHFUL_TO_COMET,
    CometHparams,
    read_checkpoint,
)
from opik_semantic_metrics.comet.models import (
    CometResult,
    ErrorSpan,
    RegressionModel,
    SentenceEmbedding,
    UnifiedModel,
    load_model,
)
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import (
    as_list,
    check_as_many,
    check_positive_int,
    check_text,
    is_empty_cell,
    item_name,
)
from opik_semantic_metrics.models.shared import LoadOnce
from opik_semantic_metrics.models.sources import checked_model_name

__all__ = ["FAITHFUL_TO_COMET", "CometEngine", "CometResult", "ErrorSpan", "LoadedComet"]

Item = tuple[str, str, str | None]


@dataclass(frozen=True, eq=False)
class LoadedComet:
    """A COMET model loaded once per process and shared; do not modify it.

    Attributes:
        name: The name it was loaded by.
        directory: Its model directory.
        revision: The Hub commit it came from; ``None`` when local.
        weights_path: The checkpoint file its weights came from.
        hparams: Its hyper-parameters.
        model: The model.
        device: Where it runs.
        dtype: The type of its transformer's weights.
    """

    name: str
    directory: Path
    revision: str | None
    weights_path: Path
    hparams: CometHparams
    model: RegressionModel | UnifiedModel
    device: torch.device
    dtype: torch.dtype

    @property
    def cache_namespace(self) -> tuple[str | None, ...]:
        """What a cached sentence embedding depends on besides its text."""
        # Keyed by the weights file, not the directory: one directory can hold several
        # checkpoints (epoch=1.ckpt, epoch=2.ckpt, ...) whose embeddings differ.
        return (
            "comet-sentence-embedding",
            str(self.weights_path),
            repr(self.hparams),
            self.revision,
            str(self.device),
            str(self.dtype),
        )

    def encode_uncached(self, texts: list[str], batches: ForwardBatches) -> list[SentenceEmbedding]:
        """Regression models' sentence embeddings (unified models encode no text alone)."""
        if not isinstance(self.model, RegressionModel):
            raise TypeError(f"{type(self.model).__name__} encodes joined texts, never one alone.")
        return self.model.embed(texts, batches)


# Loaded models per (weights file, device, dtype), and the LoadedComet of each spelling of
# the model over them: a directory written with and without a trailing "/" shares one copy.
_models: LoadOnce[tuple[str, str, str, str], RegressionModel | UnifiedModel] = LoadOnce()
_loaded: LoadOnce[tuple[str, str, str], LoadedComet] = LoadOnce()


def load_comet(model: str, device: torch.device, dtype: torch.dtype) -> LoadedComet:
    """Load (once per process, device and type) a COMET model; thread-safe.

    Raises:
        ModelUnavailableError: The model cannot be had or its checkpoint is unsafe.
        ValueError: It is of an unsupported class or setting.
    """

    def named() -> LoadedComet:
        checkpoint = read_checkpoint(model)
        weights = str(checkpoint.weights_path.resolve())
        return LoadedComet(
            name=model,
            directory=checkpoint.directory,
            revision=checkpoint.revision,
            weights_path=checkpoint.weights_path,
            hparams=checkpoint.hparams,
            # The hyper-parameters too: two directories can share one weights file (a
            # link, as the Hub cache lays files out) and differ in hparams.yaml.
            model=_models.get(
                (weights, repr(checkpoint.hparams), str(device), str(dtype)),
                lambda: load_model(checkpoint, device, dtype),
            ),
            device=device,
            dtype=dtype,
        )

    return _loaded.get((model, str(device), str(dtype)), named)


def _check_items(
    sources: Sequence[object],
    translations: Sequence[object],
    references: Sequence[object] | None,
    needs_reference: bool,
    reads_reference: bool,
) -> list[str | None]:
    """Validate inputs once, at the entry point; return the references the model reads."""
    sources, translations = as_list(sources, "sources"), as_list(translations, "translations")
    check_as_many(sources, "sources", translations, "translations")
    count = len(translations)
    for name, values in (("source", sources), ("translation", translations)):
        for index, text in enumerate(values):
            check_text(text, item_name(name, index, count))
    if references is None:
        references = [None] * len(translations)
    # Checked even where the model ignores references: a list of another length is
    # misaligned data.
    references = as_list(references, "references")
    check_as_many(references, "references", translations, "translations")
    if not reads_reference:
        return [None] * len(translations)
    checked: list[str | None] = []
    for index, reference in enumerate(references):
        # A table's empty cell (NaN, pandas' NA) is no reference, as None is.
        reference = None if is_empty_cell(reference) else reference
        if reference is None and needs_reference:
            raise InputError(
                f"This COMET model needs a reference; {item_name('item', index, count)} has "
                "none. Use a reference-free model (e.g. Unbabel/wmt22-cometkiwi-da) to score "
                "without one."
            )
        what = item_name("reference", index, count)
        if reference is not None and not isinstance(reference, str):
            raise InputError(
                f"Expected {what} to be a string or None, got {type(reference).__name__}."
            )
        checked.append(None if reference is None else check_text(reference, what))
    return checked


class CometEngine(EncoderEngine[LoadedComet, Item, CometResult]):
    """COMET scores of translations, with a model loaded once per process, when the engine
    is built, and shared (the encoder engines' skeleton: ``batching/engine.py``).

    Args:
        model: Hub id (``Unbabel/wmt22-comet-da`` by default), model directory, or path of
            a ``model.ckpt``.
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available.
        dtype: Type of the encoder's weights: float32 by default (equal to unbabel-comet);
            ``"fast"`` is bfloat16 on GPUs and CPUs with native bf16 (float16 on older
            GPUs, float32 on other CPUs); any ``torch.dtype`` or its name. Layer mixing,
            pooling and the estimator run in float32 whatever the encoder's type. The fast
            mode moves scores (``docs/gpu-and-fast-mode.md``).
        batch_size: Most sequences per forward pass on a CPU (on a GPU, batches are
            sized by tokens: ``batching/forward.py``), and most items in the micro-batches
            of :meth:`score_one` at a time.
        cache: Where regression models keep sentence embeddings; the process-wide cache
            by default.

    Raises:
        ValueError: ``batch_size`` below 1, an unknown ``dtype``, or a model of an
            unsupported class or setting.
        ModelUnavailableError: The model cannot be had (offline and not cached, gated,
            not found) or its checkpoint holds pickled code.

    Example:
        A tiny test model (``tests/fixtures/comet``); unbabel-comet gives it 0.2156 too:

        >>> engine = CometEngine("tests/fixtures/comet/regression-xlmr", device="cpu")
        >>> [result] = engine.score(
        ...     ["The cat sat on the mat."],
        ...     ["Die Katze saß auf der Matte."],
        ...     ["Die Katze sitzt auf der Matte."],
        ... )
        >>> engine.class_identifier, round(result.score, 4)
        ('regression_metric', 0.2156)
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        batch_size: int = 16,
        cache: EmbeddingCache | None = None,
    ) -> None:
        batch_size = check_positive_int(batch_size, "batch_size")
        name = checked_model_name(model)
        self._build(device, dtype, lambda device, dtype: load_comet(name, device, dtype),
                    batch_size=batch_size, micro_batch_size=batch_size, cache=cache)  # fmt: skip

    @property
    def model_name(self) -> str:
        """The model's name, as given."""
        return self.loaded.name

    @property
    def revision(self) -> str | None:
        """The Hub commit of the model; ``None`` for a local model."""
        return self.loaded.revision

    @property
    def class_identifier(self) -> str:
        """COMET's model class (``regression_metric``, ``xcomet_metric``...)."""
        return self.loaded.hparams.class_identifier

    @property
    def requires_references(self) -> bool:
        """Whether every item needs a reference."""
        return self.loaded.hparams.requires_references

    @property
    def reads_references(self) -> bool:
        """Whether a reference, when given, is used (False: reference-free model)."""
        return self.loaded.hparams.reads_references

    def score(
        self,
        sources: Sequence[str],
        translations: Sequence[str],
        references: Sequence[str | None] | None = None,
    ) -> list[CometResult]:
        """COMET score of each translation.

        Args:
            sources: Source texts.
            translations: Translations (system outputs), one per source.
            references: Reference translations, one per item (``None`` items allowed for
                models that can score without); ignored by reference-free models.

        Returns:
            One :class:`CometResult` per item, in order.

        Raises:
            InputError: Unequal lengths, a non-string, or a missing reference for a model
                that needs one.
        """
        checked = _check_items(
            sources, translations, references, self.requires_references, self.reads_references
        )
        if not translations:
            return []
        # Any sequence was accepted (a deque too); scoring slices lists.
        sources, translations = list(sources), list(translations)
        model = self.loaded.model
        if isinstance(model, UnifiedModel):
            return model.score(sources, translations, checked, self.forward_batches)
        return self._score_regression(model, sources, translations, checked)

    def prepare(
        self,
        sources: Sequence[str] | None = None,
        references: Sequence[str | None] | None = None,
    ) -> int:
        """Encode a dataset's sources and references into the embedding cache before
        scoring it.

        One pass over the whole lists, in length-sorted batches, so that scoring its
        items encodes only their translations; scores are the same with or without it.
        Regression models only: unified models (COMETKiwi, XCOMET) encode each item's
        texts joined, which nothing can share, so there it does nothing and returns 0.
        The cache stays within its bound: where the texts do not all fit, the leading
        ones (sources first) are kept and a warning says how many.

        Args:
            sources: The items' source texts.
            references: The items' references; ``None`` (or an empty cell) where an item
                has none, for models that can score without. Ignored by models that read
                no reference.

        Returns:
            How many distinct texts are in the cache.

        Raises:
            InputError: A source or reference :meth:`score` would refuse, named.
        """
        texts = []
        if sources is not None:
            source_list = as_list(sources, "sources")
            texts += [
                check_text(text, item_name("source", index, len(source_list)))
                for index, text in enumerate(source_list)
            ]
        if references is not None and self.reads_references:
            reference_list = as_list(references, "references")
            count = len(reference_list)
            for index, reference in enumerate(reference_list):
                what = item_name("reference", index, count)
                if reference is None or is_empty_cell(reference):
                    if self.requires_references:
                        raise InputError(
                            "This COMET model needs a reference; "
                            f"{item_name('item', index, count)} has none. Use a reference-free "
                            "model (e.g. Unbabel/wmt22-cometkiwi-da) to score without one."
                        )
                    continue
                if not isinstance(reference, str):
                    raise InputError(
                        f"Expected {what} to be a string or None, got {type(reference).__name__}."
                    )
                texts.append(check_text(reference, what))
        model = self.loaded.model
        if isinstance(model, UnifiedModel) or not texts:
            return 0
        return self._fill_cache(texts)

    def score_one(self, source: str, translation: str, reference: str | None = None) -> CometResult:
        """Score one item, batched with the items other threads score at the same time.

        Concurrent calls (Opik's worker threads) are coalesced into one :meth:`score`
        call by a :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher`.

        Raises:
            InputError: As :meth:`score`, raised in the caller's thread before batching.
        """
        [checked] = _check_items(
            [source], [translation], [reference], self.requires_references, self.reads_references
        )
        return self.batcher.submit((source, translation, checked))

    def _score_items(self, items: list[Item]) -> list[CometResult]:
        sources, translations, references = zip(*items, strict=True)
        return self.score(list(sources), list(translations), list(references))

    def _score_regression(
        self,
        model: RegressionModel,
        sources: Sequence[str],
        translations: Sequence[str],
        references: Sequence[str | None],
    ) -> list[CometResult]:
        with_reference = model.hparams.kind == "regression"
        texts = [*sources, *translations, *(ref for ref in references if ref is not None)]
        unique = list(dict.fromkeys(texts))
        embedded = dict(zip(unique, self._cached(unique), strict=True))
        results: list[CometResult] = []
        for start in range(0, len(translations), self.batch_size):
            stop = start + self.batch_size
            source_emb = [embedded[text] for text in sources[start:stop]]
            translation_emb = [embedded[text] for text in translations[start:stop]]
            reference_emb: list[SentenceEmbedding] | None = None
            if with_reference:
                reference_emb = [embedded[text] for text in references[start:stop]]  # type: ignore[index]
            scores = model.estimate(source_emb, translation_emb, reference_emb)
            for index, score in enumerate(scores):
                parts = [("source", source_emb[index]), ("translation", translation_emb[index])]
                if reference_emb is not None:
                    parts.append(("reference", reference_emb[index]))
                results.append(
                    CometResult(
                        score=score,
                        used_reference=with_reference,
                        truncated=tuple(name for name, part in parts if part.truncated),
                    )
                )
        return results
