"""The package's metrics, each named once: what every other module reads to know them.

Each :class:`MetricEntry` says what can be known of a metric without importing it (which
would import Opik and PyTorch, seconds the command line should not pay): its kind, its
class and module, the row arguments it reads, and the settings that need care where it is
rebuilt. The package's ``__getattr__``, :meth:`PackageMetric.registered
<opik_semantic_metrics.metrics.base.PackageMetric.registered>`, ``score-dataset``'s
``--metric`` choices and its early check of a dataset's columns all read :data:`METRICS`.
This module imports only the standard library.

Adding a metric: ``docs/development.md`` ("Adding a metric") gives the route.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RowArguments:
    """The arguments a metric reads from a dataset row.

    Attributes:
        required: Every row must supply them.
        optional: Read where the dataset has them.
        one_of: Optional arguments of which a dataset must supply at least one
            (AnswerMatch's ``reference`` or ``acceptable_answers``).
    """

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        """Every argument, required first."""
        return self.required + self.optional


@dataclass(frozen=True)
class MetricEntry:
    """One metric of the package, as known without importing it.

    Attributes:
        kind: Its name in the registry and in settings documents (``"semantic_match"``);
            on the command line with hyphens (:attr:`command_name`).
        class_name: Its class, exported by the package under this name.
        module: The module defining the class.
        reads: The row arguments it reads (an instance may refine them:
            :meth:`~opik_semantic_metrics.metrics.base.PackageMetric.row_arguments`).
        file_settings: Settings that name a file the metric reads: the file travels as
            bytes where the metric is rebuilt (workers need not share a disk).
        state_settings: Settings that the fitted state stands for (references fitted on
            at construction): recorded at their defaults, so that the metric does not keep
            them; a rebuilt metric gets the state instead.
        command_line_model: The model a command line builds it with where neither a
            model nor a language chooses one (``None``: the constructor's default), so
            that a command line works offline by default.
    """

    kind: str
    class_name: str
    module: str
    reads: RowArguments = RowArguments(("output", "reference"))
    file_settings: tuple[str, ...] = ()
    state_settings: tuple[str, ...] = ()
    command_line_model: str | None = None

    @property
    def command_name(self) -> str:
        """Its name on the command line: the kind with hyphens (``semantic-match``)."""
        return self.kind.replace("_", "-")


#: Every metric of the package, in the order the command line lists them.
METRICS: tuple[MetricEntry, ...] = (
    MetricEntry(
        kind="bertscore",
        class_name="BERTScore",
        module="opik_semantic_metrics.metrics.bertscore",
        file_settings=("baseline_path",),
        state_settings=("idf_references",),
        command_line_model="all-MiniLM-L6-v2",
    ),
    MetricEntry(
        kind="semantic_match",
        class_name="SemanticMatch",
        module="opik_semantic_metrics.metrics.semantic_match",
    ),
    MetricEntry(
        kind="comet",
        class_name="COMET",
        module="opik_semantic_metrics.metrics.comet",
        reads=RowArguments(("input", "output"), ("reference",)),
    ),
    MetricEntry(
        kind="answer_match",
        class_name="AnswerMatch",
        module="opik_semantic_metrics.metrics.answer_match",
        reads=RowArguments(
            ("output",),
            ("reference", "acceptable_answers", "input", "answer_format", "question"),
            one_of=("reference", "acceptable_answers"),
        ),
    ),
)


def metric_entry(kind: str) -> MetricEntry:
    """The entry of the metric of ``kind`` (with underscores or hyphens).

    Raises:
        ValueError: No metric of the package has that kind.

    Example:
        >>> metric_entry("semantic-match").class_name
        'SemanticMatch'
    """
    for entry in METRICS:
        if kind in (entry.kind, entry.command_name):
            return entry
    raise ValueError(
        f"Expected a metric of this package ({', '.join(e.kind for e in METRICS)}), got {kind!r}."
    )


def lazy_metric_exports(
    namespace: dict[str, object],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's module-level ``__getattr__`` and ``__dir__`` that import each metric
    class from its module when it is first asked for, and keep it in ``namespace``.

    Used as ``__getattr__, __dir__ = lazy_metric_exports(globals())``.
    """
    modules = metric_modules()
    package = namespace.get("__name__")

    def __getattr__(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *modules})

    return __getattr__, __dir__


def metric_modules() -> dict[str, str]:
    """Class name -> the module defining it, for every metric (the package's lazy imports).

    Example:
        >>> metric_modules()["COMET"]
        'opik_semantic_metrics.metrics.comet'
    """
    return {entry.class_name: entry.module for entry in METRICS}
