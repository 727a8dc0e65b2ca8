"""The contract every Opik metric of the package keeps, checked the same way for each.

As torchmetrics' ``TextTester`` serves all its text metrics, :class:`MetricContract`
holds what one metric brings (how it is built, items with their expected readings, bad
input and the messages it must give), and ``test_contract.py`` runs the same checks on
each: bad input fails the item with a named ``MetricComputationError``, a bad setting
fails the build, 16 threads give what one call at a time gives, ``score_batch`` gives
what ``score`` gives, and Opik's own engine (``opik.evaluate_on_dict_items``) gives the
expected reading of every item and fails only the bad one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opik.evaluation.metrics import base_metric, score_result

#: What a test reads of one item's results: each result's value by name, and for
#: metrics that say how they matched, the ``method`` too.
Reading = dict[str, float | str]


@dataclass
class MetricContract:
    """One metric's part in the shared checks.

    Attributes:
        name: The metric's class name, as it begins its error messages.
        metric: The metric, built once for the checks.
        items: ``score()`` keyword arguments of real items, varied in their scores.
        expected: The reading each of ``items`` must give (the reference library's
            scores, the engine's, or values written out by hand), or ``None`` where the
            metric's own one-at-a-time ``score()`` is the reference.
        tolerance: How far a score may be from the expected one (and across batchings).
        bad_items: ``score()`` keyword arguments that are no item, with the message
            (a regular expression) the failure must carry.
        bad_batches: ``score_batch`` positional arguments that are no batch, with their
            messages; empty for a metric without ``score_batch``.
        batch_fields: The item fields ``score_batch`` takes, in order, as one list
            each; ``None`` for a metric that has no ``score_batch``.
        rebuild: Builds the metric with other settings (keyword arguments), for the
            settings check.
        dataset_items: Opik dataset items: ``items`` with the output under
            ``"prediction"`` (the task's answer) and an ``"id_"``, plus one bad item
            (``failing_id``).
        scoring_key_mapping: What Opik maps dataset fields to ``score()``'s arguments.
        failing_id: The ``id_`` of the dataset item whose score must fail.
        failure_message: What the failed item's reason must hold.
        min_distinct: Fewest distinct scores among ``items``: the checks compare real,
            varied scores, not one number repeated.
    """

    name: str
    metric: base_metric.BaseMetric
    items: list[dict[str, Any]]
    expected: list[Reading] | None
    tolerance: float
    bad_items: Sequence[tuple[dict[str, Any], str]]
    bad_batches: Sequence[tuple[tuple[Any, ...], str]]
    batch_fields: tuple[str, ...] | None
    rebuild: Callable[..., base_metric.BaseMetric]
    dataset_items: list[dict[str, Any]]
    failing_id: int
    failure_message: str
    scoring_key_mapping: Mapping[str, str] = field(default_factory=dict)
    min_distinct: int = 2
    read_method: bool = False

    def read(self, results: Any) -> Reading:
        """One item's results as a reading: each value by name (and the method)."""
        listed = results if isinstance(results, list) else [results]
        reading: Reading = {}
        for result in listed:
            assert isinstance(result, score_result.ScoreResult)
            assert not result.scoring_failed, result.reason
            reading[result.name] = result.value
            if self.read_method:
                reading[f"{result.name}.method"] = result.metadata["method"]
        return reading

    def score(self, item: Mapping[str, Any]) -> Reading:
        """The reading of one ``score()`` call on ``item``."""
        return self.read(self.metric.score(**item))

    def score_batch(self) -> list[Reading]:
        """The readings of one ``score_batch`` call on all of ``items``."""
        assert self.batch_fields is not None
        columns = [[item[name] for item in self.items] for name in self.batch_fields]
        return [self.read(results) for results in self.metric.score_batch(*columns)]  # type: ignore[attr-defined]


def dataset_items(
    items: Sequence[Mapping[str, Any]],
    bad_output: Any,
    renamed: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Opik dataset items for ``items``: the output under ``"prediction"``, an ``"id_"``
    each, fields renamed as a dataset names them (``renamed``: argument -> field), and a
    last item whose output is ``bad_output``."""
    renamed = renamed or {}
    rows = []
    for index, item in enumerate([*items, {**items[0], "output": bad_output}]):
        row: dict[str, Any] = {"id_": index, "prediction": item["output"]}
        for key, value in item.items():
            if key != "output":
                row[renamed.get(key, key)] = value
        rows.append(row)
    return rows
