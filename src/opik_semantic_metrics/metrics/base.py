"""What the package's four Opik metrics share, so that each metric file holds its own logic.

- :class:`PackageMetric` checks the settings every metric takes (``track``) when it is
  built, turns an engine's refusal of one item (:class:`~opik_semantic_metrics.errors.InputError`,
  and for AnswerMatch a failed semantic scorer) into the ``MetricComputationError`` with
  which Opik fails that item and goes on (:meth:`PackageMetric.failing_item`), and fails
  a call whose model gave a score that is no number (:meth:`PackageMetric.check_scores`:
  a model's output, not the user's input, so not a check of
  :mod:`~opik_semantic_metrics.inputs`).
- Each metric describes itself once (:class:`PackageMetric`'s declaration): its entry in
  :mod:`~opik_semantic_metrics.catalog` (kind, row arguments, file and state settings);
  its constructor's arguments are its settings, recorded as it is built
  (:attr:`PackageMetric.settings`); it names its fitted state and the scores it returns.
  A hook that only some metrics need is not on the base: fitting on a reference column
  is a :class:`~opik_semantic_metrics.metrics.reference_fit.ReferenceFit` the metric
  returns. Ray's blueprint (``distributed/blueprint.py``), the
  ``score-dataset`` command and the settings document
  (:mod:`~opik_semantic_metrics.metrics.settings`) read that, and know no metric by name.
- :func:`record_metadata` writes an engine's frozen record (a token match, an error
  span) into a result's ``metadata`` as a plain dictionary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from opik.evaluation.metrics import base_metric, score_result

from opik_semantic_metrics.catalog import METRICS, MetricEntry, RowArguments
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import check_flag, is_finite_number, item_name
from opik_semantic_metrics.metrics.failure import metric_failure
from opik_semantic_metrics.metrics.reference_fit import ReferenceFit

#: Constructor arguments that say where and how a metric runs, not what it scores: they
#: are not settings, and a rebuilt metric gets its own.
RUNTIME_ARGUMENTS = ("device", "track", "project_name")

__all__ = ["RUNTIME_ARGUMENTS", "PackageMetric", "RowArguments", "record_metadata"]

#: The entry of a class that is no metric of the catalog (a base, a user's own subclass
#: of this base): no kind, so not in the registry.
_NOT_CATALOGUED = MetricEntry(kind="", class_name="PackageMetric", module=__name__)


class PackageMetric(base_metric.BaseMetric):
    """An Opik metric of this package: Opik's ``BaseMetric`` with the shared failure path
    and the metric's declaration of itself.

    The declaration, which rebuilding a metric elsewhere (a Ray actor, a settings
    document) reads and nothing else restates:

    - its settings: every argument its constructor was given, defaults applied, recorded
      before the constructor runs (:attr:`settings`; :data:`RUNTIME_ARGUMENTS` aside);
      a setting that names a file the rebuilt metric must read, or that the fitted state
      stands for, is named in its catalog entry (:attr:`entry`);
    - its fitted state (:meth:`fitted_state`, :meth:`restore_fitted_state`), and how it
      is fitted on a reference column where it is (:meth:`reference_fit`);
    - the row arguments it reads (:meth:`row_arguments`) and the scores it returns
      (:meth:`score_names`, :meth:`score_rows`).

    Args:
        name: Metric name.
        track: Track the metric's calls in Opik; a bool (a string such as ``"False"``
            would switch tracking on, so it is refused).
        project_name: Opik project for the tracked calls.

    Raises:
        ValueError: ``track`` is not a bool.
    """

    #: The metric's entry in :mod:`~opik_semantic_metrics.catalog` (what it reads, its
    #: file and state settings), found by the class's module and name when it is defined.
    entry: ClassVar[MetricEntry] = _NOT_CATALOGUED
    #: The metric's name in the package's registry (its entry's kind; ``""``: none).
    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only the class the catalog names: a user's subclass of SemanticMatch inherits
        # its entry, and is never the class the registry rebuilds.
        for entry in METRICS:
            if (cls.__module__, cls.__qualname__) == (entry.module, entry.class_name):
                cls.entry, cls.kind = entry, entry.kind
        init = cls.__dict__.get("__init__")
        if init is not None:
            cls.__init__ = _recording(init)  # type: ignore[method-assign]

    def __init__(self, name: str, track: bool, project_name: str | None) -> None:
        super().__init__(name=name, track=check_flag(track, "track"), project_name=project_name)

    @staticmethod
    def registered() -> Mapping[str, type[PackageMetric]]:
        """Every metric of the package by :attr:`kind`, imported from the modules
        :data:`~opik_semantic_metrics.catalog.METRICS` names."""
        return MappingProxyType(
            {
                entry.kind: getattr(importlib.import_module(entry.module), entry.class_name)
                for entry in METRICS
            }
        )

    @classmethod
    def untracked(cls, settings: Mapping[str, Any], device: Any = None) -> PackageMetric:
        """The metric of ``settings``, built where its scores are recorded by the caller
        (a Ray actor, the command line): untracked, and on ``device`` where it takes one
        (``None``: its own default)."""
        runtime: dict[str, Any] = {"track": False}
        if device is not None and "device" in inspect.signature(cls).parameters:
            runtime["device"] = device
        return cls(**settings, **runtime)

    @property
    def settings(self) -> dict[str, Any]:
        """The constructor's arguments, defaults applied, :data:`RUNTIME_ARGUMENTS` aside:
        ``type(metric)(**metric.settings)`` builds the same metric (with its fitted state
        restored, :meth:`restore_fitted_state`)."""
        arguments: Mapping[str, Any] = self.__dict__.get("_constructor_arguments", {})
        return {key: value for key, value in arguments.items() if key not in RUNTIME_ARGUMENTS}

    def fitted_state(self) -> Any:
        """What fitting on a corpus set (``None``: nothing, or nothing fitted). Here: that of
        each metric among the settings (AnswerMatch's ``semantic=``), by setting."""
        nested = {
            key: value.fitted_state()
            for key, value in self.settings.items()
            if isinstance(value, PackageMetric)
        }
        return nested if any(state is not None for state in nested.values()) else None

    def restore_fitted_state(self, state: Any) -> None:
        """Set a state :meth:`fitted_state` returned (of a metric with the same settings)."""
        if state is None:
            return
        settings = self.settings
        if not isinstance(state, dict) or not all(
            isinstance(settings.get(key), PackageMetric) for key in state
        ):
            raise ValueError(f"{type(self).__name__} has no such fitted state to restore.")
        for key, nested in state.items():
            settings[key].restore_fitted_state(nested)

    def row_arguments(self) -> RowArguments:
        """The row arguments this metric reads (its catalog entry's)."""
        return self.entry.reads

    def score_names(self) -> tuple[str, ...]:
        """The names of the scores one item gets, in order."""
        return (self.name,)

    @property
    def uses_model(self) -> bool:
        """Whether scoring runs a model (a GPU helps)."""
        return True

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        """The results of rows given as columns (argument -> values), in
        :meth:`score_names` order per row.

        Raises:
            MetricComputationError: A row the metric refuses (the whole call fails: the
                caller narrows it down).
        """
        raise NotImplementedError

    def reference_fit(self) -> ReferenceFit | None:
        """How the metric is fitted on a dataset's reference column (``None``: it fits
        nothing there); :mod:`~opik_semantic_metrics.metrics.reference_fit`."""
        return None

    @contextlib.contextmanager
    def failing_item(self, *refusals: type[Exception]) -> Iterator[None]:
        """Within it, an engine's refusal (``InputError``, or the ``refusals`` given) is
        raised as a ``MetricComputationError`` starting with the metric's class name:
        Opik fails that item and the run goes on.

        Example:
            >>> from opik_semantic_metrics import AnswerMatch
            >>> with AnswerMatch(track=False).failing_item():
            ...     raise InputError("Expected a string.")
            Traceback (most recent call last):
            ...
            opik.exceptions.MetricComputationError: AnswerMatch: Expected a string.
        """
        refused: tuple[type[Exception], ...] = (InputError, *refusals)
        try:
            yield
        except refused as error:
            raise metric_failure(f"{type(self).__name__}: {error}") from error

    def check_scores(self, scores: Sequence[float]) -> None:
        """Fail the call where the model gave a score that is no number.

        A checkpoint whose weights hold NaN, or an overflow in float16, gives NaN for every
        text: logged as a score, it would make Opik's mean of the experiment NaN. What a
        model produced is no input of the user's, so this check lives here, with the
        metric's other failures, not in :mod:`~opik_semantic_metrics.inputs`.

        Raises:
            MetricComputationError: A score is NaN or infinite; the item is named where
                there are several.

        Example:
            >>> from opik_semantic_metrics import AnswerMatch
            >>> AnswerMatch(track=False).check_scores([0.8, float("nan")])  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            opik.exceptions.MetricComputationError: AnswerMatch: the model gave item 1 ...
        """
        for index, score in enumerate(scores):
            if not is_finite_number(score):
                where = item_name("item", index, len(scores))
                raise metric_failure(
                    f"{type(self).__name__}: the model gave {where} the score {score}, which is "
                    "no number: its weights may hold NaN, or its dtype (float16, bfloat16) "
                    "overflowed."
                )


def cut_texts_note(output_cut: bool, reference_cut: bool, limit: int) -> str | None:
    """A reason's note on the texts cut at the model's token limit (``None``: none was).

    Example:
        >>> cut_texts_note(True, True, 512)
        'output and reference cut to 512 tokens'
    """
    sides = [side for side, cut in (("output", output_cut), ("reference", reference_cut)) if cut]
    return f"{' and '.join(sides)} cut to {limit} tokens" if sides else None


def record_metadata(record: Any) -> dict[str, Any] | None:
    """An engine's frozen record as ``metadata`` holds it: its fields as a dictionary;
    ``None`` stays ``None``.

    Example:
        >>> from opik_semantic_metrics.bertscore.results import TokenMatch
        >>> record_metadata(TokenMatch("cat", "cat", 0.99))
        {'candidate_token': 'cat', 'reference_token': 'cat', 'similarity': 0.99}
    """
    return None if record is None else dataclasses.asdict(record)


def _recording(init: Callable[..., None]) -> Callable[..., None]:
    """``init``, recording the arguments it is called with (defaults applied) as the
    metric's settings before it runs: a setting added to a constructor is recorded, and
    so carried wherever the metric is rebuilt, without another line."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def recording_init(self: PackageMetric, *args: Any, **kwargs: Any) -> None:
        if "_constructor_arguments" not in self.__dict__:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)))
            for name in type(self).entry.state_settings:
                # The fitted state stands for it: a corpus of references is not kept.
                arguments[name] = signature.parameters[name].default
            self.__dict__["_constructor_arguments"] = MappingProxyType(arguments)
        init(self, *args, **kwargs)

    return recording_init
