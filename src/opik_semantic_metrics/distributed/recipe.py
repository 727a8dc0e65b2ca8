"""What a metric instance becomes to travel to Ray's actors: its settings and fitted state.

A metric holds a loaded model, locks and worker threads, none of which can be pickled,
and a model is better loaded once by each actor than shipped through the object store.
So :func:`recipe_of` reads a metric's settings and corpus-level state (BERTScore's idf
table and baseline file, SemanticMatch's fitted idf and paragraph baseline) into a
:class:`MetricRecipe`, and each actor calls :meth:`MetricRecipe.build` once: the same
metric class, built with the same settings, on the actor's device. Scoring then goes
through the metric's own ``score_batch`` (``score`` for AnswerMatch, which scores one
item at a time), so no score is computed twice in two ways.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from opik.evaluation.metrics import base_metric, score_result

from opik_semantic_metrics.metrics.answer_match import AnswerMatch
from opik_semantic_metrics.metrics.bertscore import BERTScore
from opik_semantic_metrics.metrics.comet import COMET
from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

MetricKind = Literal["bertscore", "comet", "semantic_match", "answer_match"]

#: The arguments each metric reads from a row, the required ones first.
_ARGUMENTS: dict[MetricKind, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bertscore": (("output", "reference"), ()),
    "semantic_match": (("output", "reference"), ()),
    "comet": (("input", "output"), ("reference",)),
    "answer_match": (("output", "reference"), ("input", "answer_format", "question")),
}


@dataclass(frozen=True)
class MetricRecipe:
    """A metric's class, settings and fitted state, picklable, to rebuild it elsewhere.

    Attributes:
        kind: Which metric.
        name: The metric's name (its scores are named after it).
        score_names: The names of the scores one item gets, in order.
        required: Arguments every row must supply (``output``, ``reference``...).
        optional: Arguments read when the dataset has them.
        settings: Keyword arguments of the metric's constructor, the device aside.
        state: Fitted state set on the rebuilt metric's engine (``None``: nothing fitted).
        baseline_file: The bytes of a BERTScore baseline file of the user's own, written
            to a temporary file where the metric is rebuilt (workers need not share a disk).
        semantic: AnswerMatch's semantic metric, as a recipe of its own.
        pickled: A metric that pickles as it is (AnswerMatch without a semantic metric).
    """

    kind: MetricKind
    name: str
    score_names: tuple[str, ...]
    required: tuple[str, ...]
    optional: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    baseline_file: bytes | None = None
    semantic: MetricRecipe | None = None
    pickled: base_metric.BaseMetric | None = None

    @property
    def arguments(self) -> tuple[str, ...]:
        """Every argument the metric reads, required first."""
        return self.required + self.optional

    @property
    def error_column(self) -> str:
        """The column that holds a row's error message (``None`` where it scored)."""
        return f"{self.name}_error"

    @property
    def requires_gpu_model(self) -> bool:
        """Whether the metric runs a model (AnswerMatch alone may not)."""
        return self.kind != "answer_match" or self.semantic is not None

    def build(self, device: str) -> base_metric.BaseMetric:
        """The metric, rebuilt with its settings and state on ``device``."""
        if self.pickled is not None:
            return self.pickled
        if self.kind == "bertscore":
            settings = dict(self.settings)
            if self.baseline_file is not None:
                handle, path = tempfile.mkstemp(suffix=".tsv", prefix="bertscore-baseline-")
                with os.fdopen(handle, "wb") as file:
                    file.write(self.baseline_file)
                settings["baseline_path"] = path
            bertscore = BERTScore(**settings, device=device, track=False)
            # The idf table fitted on the whole reference corpus, as fit_idf sets it.
            bertscore.engine.idf_table = self.state
            return bertscore
        if self.kind == "semantic_match":
            semantic_match = SemanticMatch(**self.settings, device=device, track=False)
            semantic_match.engine.state = self.state
            return semantic_match
        if self.kind == "comet":
            return COMET(**self.settings, device=device, track=False)
        assert self.semantic is not None  # an AnswerMatch that did not pickle
        return AnswerMatch(**self.settings, semantic=self.semantic.build(device), track=False)

    def score_rows(
        self, metric: base_metric.BaseMetric, rows: dict[str, list[Any]]
    ) -> list[list[float]]:
        """The scores of the rows (argument name -> values), in :attr:`score_names` order.

        Raises:
            Exception: Whatever the metric raises for these rows (a bad row fails its
                whole ``score_batch`` call: the caller narrows it down).
        """
        count = len(next(iter(rows.values())))
        if self.kind == "answer_match":
            return [
                _values(metric.score(**{name: values[i] for name, values in rows.items()}))
                for i in range(count)
            ]
        if self.kind == "comet":
            assert isinstance(metric, COMET)
            results: Sequence[Any] = metric.score_batch(
                rows["input"], rows["output"], rows.get("reference")
            )
        else:
            assert isinstance(metric, BERTScore | SemanticMatch)
            results = metric.score_batch(rows["output"], rows["reference"])
        return [_values(result) for result in results]


def _values(result: Any) -> list[float]:
    """The values of a ScoreResult or a list of them."""
    results = result if isinstance(result, list) else [result]
    for item in results:
        assert isinstance(item, score_result.ScoreResult)
    return [float(item.value) for item in results]


def recipe_of(metric: base_metric.BaseMetric) -> MetricRecipe:
    """The recipe of one of this package's metrics.

    Raises:
        ValueError: Not BERTScore, SemanticMatch, COMET or AnswerMatch, or an AnswerMatch
            whose semantic scorer cannot be pickled.
    """
    if isinstance(metric, BERTScore):
        return _bertscore_recipe(metric)
    if isinstance(metric, SemanticMatch):
        engine = metric.engine
        settings = {
            "model": engine.model_name,
            "weights": tuple(engine.combination.weights),
            "floor": engine.combination.floor,
            "snap": engine.combination.snap,
            "softness": engine.combination.softness,
            "negation_penalty": engine.combination.negation_penalty,
            "number_penalty": engine.combination.number_penalty,
            "long_weights": engine.combination.long_weights,
            "long_sentences": engine.combination.long_sentences,
            "cleaning": engine.cleaning,
            "token_vectors": engine.token_vectors,
            "paragraph_baseline": engine.fixed_baseline,
            "name": metric.name,
            "batch_size": engine.batch_size,
            "dtype": engine.encoder.dtype,
        }
        return _recipe("semantic_match", metric.name, (metric.name,), settings, engine.state)
    if isinstance(metric, COMET):
        loaded = metric.engine.loaded
        settings = {
            "model": loaded.name,
            "batch_size": metric.engine.batch_size,
            "dtype": loaded.dtype,
            "name": metric.name,
        }
        return _recipe("comet", metric.name, (metric.name,), settings, None)
    if isinstance(metric, AnswerMatch):
        return _answer_match_recipe(metric)
    raise ValueError(
        "Expected one of this package's metrics (BERTScore, SemanticMatch, COMET, "
        f"AnswerMatch), got {type(metric).__name__}."
    )


def _recipe(
    kind: MetricKind, name: str, score_names: tuple[str, ...], settings: dict[str, Any], state: Any
) -> MetricRecipe:
    required, optional = _ARGUMENTS[kind]
    return MetricRecipe(kind, name, score_names, required, optional, settings, state)


def _bertscore_recipe(metric: BERTScore) -> MetricRecipe:
    engine = metric.engine
    load_args: dict[str, Any] = engine._load_args
    settings: dict[str, Any] = {
        "model": load_args["model"],
        "num_layers": engine.num_layers,
        "idf": engine.idf,
        "rescale_with_baseline": engine.rescale_with_baseline,
        "lang": engine.lang,
        "name": metric.name,
        "batch_size": engine.batch_size,
        "dtype": load_args["dtype"],
    }
    baseline_file = None
    if engine.custom_baseline and engine.baseline_path is not None:
        baseline_file = engine.baseline_path.read_bytes()
    names = tuple(f"{metric.name}_{key}" for key in ("f1", "precision", "recall"))
    recipe = _recipe("bertscore", metric.name, names, settings, engine.idf_table)
    return dataclasses.replace(recipe, baseline_file=baseline_file)


def _answer_match_recipe(metric: AnswerMatch) -> MetricRecipe:
    import ray.cloudpickle

    required, optional = _ARGUMENTS["answer_match"]
    matcher = metric.matcher
    semantic_metric = _metric_inside(matcher.semantic)
    if semantic_metric is not None:
        settings = {
            # Kept as Decimal made from the float given: float() gives that float back.
            "tolerance": float(matcher.tolerance),
            "relative_tolerance": (
                None if matcher.relative_tolerance is None else float(matcher.relative_tolerance)
            ),
            "ordered": matcher.ordered,
            "semantic_threshold": matcher.semantic_threshold,
            "name": metric.name,
            "percent_as_fraction": matcher.percent_as_fraction,
            "abstentions": tuple(matcher.abstentions),
        }
        return MetricRecipe(
            "answer_match",
            metric.name,
            (metric.name,),
            required,
            optional,
            settings,
            semantic=recipe_of(semantic_metric),
        )
    try:
        ray.cloudpickle.dumps(metric)
    except Exception as error:
        raise ValueError(
            f"AnswerMatch's semantic scorer {metric.semantic_name!r} cannot be sent to Ray's "
            f"workers: {error}. Pass a function that pickles, or one of this package's metrics."
        ) from error
    return MetricRecipe(
        "answer_match", metric.name, (metric.name,), required, optional, pickled=metric
    )


def _metric_inside(scorer: Callable[..., Any] | str | None) -> base_metric.BaseMetric | None:
    """The metric whose ``score`` method AnswerMatch's semantic scorer calls, if any: it
    is wrapped in closures (see ``metrics/answer_match.py``), two levels deep."""
    pending: list[Any] = [scorer]
    for _ in range(3):
        found: list[Any] = []
        for function in pending:
            owner = getattr(function, "__self__", None)
            if isinstance(owner, base_metric.BaseMetric):
                return owner
            for cell in getattr(function, "__closure__", None) or ():
                found.append(cell.cell_contents)
        pending = found
    return None
