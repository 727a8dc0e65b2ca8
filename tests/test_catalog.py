"""The route for adding a metric (``docs/development.md``, "Adding a metric") works and is
as short as it says: a toy fifth metric, added to a copy of the package through the
documented steps, touches only the files the page lists and is used through every public
path that knows the metrics."""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path

import pytest

import opik_semantic_metrics
from tests.probe import run_json_probe

PACKAGE = Path(opik_semantic_metrics.__file__).resolve().parent
DEVELOPMENT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "development.md"

KIND = "exact_text"
CLASS = "ExactText"

#: The toy metric: 1.0 where the output is the reference, character for character.
TOY_MODULE = '''"""ExactText: 1.0 where the output is the reference, else 0.0 (a toy metric)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opik.evaluation.metrics import score_result

from opik_semantic_metrics.metrics.base import PackageMetric


class ExactText(PackageMetric):
    """1.0 where the output equals the reference (after ``strip`` when ``strip=True``)."""

    def __init__(
        self,
        strip: bool = False,
        name: str = "exact_text",
        track: bool = True,
        project_name: str | None = None,
    ) -> None:
        super().__init__(name=name, track=track, project_name=project_name)
        self.strip = strip

    @property
    def uses_model(self) -> bool:
        return False

    def score(self, output: str, reference: str, **ignored_kwargs: Any) -> score_result.ScoreResult:
        if self.strip:
            output, reference = output.strip(), reference.strip()
        return score_result.ScoreResult(name=self.name, value=float(output == reference))

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        return [
            [self.score(output, reference)]
            for output, reference in zip(rows["output"], rows["reference"], strict=True)
        ]
'''

#: What the copy runs: the toy metric through each path that knows the metrics.
PROBE = """
import json, sys
from pathlib import Path

from opik_semantic_metrics.cli import dataset_check, score_dataset
from opik_semantic_metrics.cli.common import CliError
from opik_semantic_metrics.cli.main import build_parser

report = {"imported_early": [m for m in ("torch", "opik", "ray") if m in sys.modules]}
report["choices"] = list(score_dataset.METRICS)
report["required"] = list(dataset_check.REQUIRED_ARGUMENTS["exact-text"])
args = build_parser().parse_args(["score-dataset", "in.jsonl", "--metric", "exact-text",
                                  "--out", "out.jsonl"])
report["parsed"] = args.metric
rows = Path(sys.argv[1])
rows.write_text(json.dumps({"output": "a", "answer": "a"}) + "\\n")
try:
    dataset_check.check_dataset_input(rows, "exact-text", {})
except CliError as error:
    report["refusal"] = str(error)
dataset_check.check_dataset_input(rows, "exact-text", {"reference": "answer"})

import opik_semantic_metrics
from opik_semantic_metrics import ExactText
from opik_semantic_metrics.metrics import ExactText as from_metrics
from opik_semantic_metrics.metrics.base import PackageMetric
from opik_semantic_metrics.metrics.settings import metric_from_document, settings_document

report["same_class"] = ExactText is from_metrics
report["in_dir"] = "ExactText" in dir(opik_semantic_metrics)
report["registered"] = PackageMetric.registered()["exact_text"] is ExactText
metric = ExactText(strip=True, name="exact", track=False)
report["kind"] = metric.kind
report["document"] = settings_document(metric)
rebuilt = metric_from_document(report["document"])
report["rebuilt_settings"] = rebuilt.settings
columns = {"output": [" a", "b"], "reference": ["a ", "c"]}
report["scores"] = [[r.value for r in row] for row in rebuilt.score_rows(columns)]

from opik_semantic_metrics.distributed.blueprint import blueprint_of

blueprint = blueprint_of(metric)
report["blueprint"] = [blueprint.kind, list(blueprint.score_names), list(blueprint.required),
                       blueprint.uses_model]
report["blueprint_scores"] = blueprint.score_rows(blueprint.build("cpu"), columns)
print(json.dumps(report))
"""


def _insert_after(path: Path, anchor: str, text: str) -> None:
    source = path.read_text(encoding="utf-8")
    assert source.count(anchor) == 1, f"{path.name}: the anchor {anchor!r} moved"
    path.write_text(source.replace(anchor, anchor + text), encoding="utf-8")


def add_toy_metric(package: Path) -> None:
    """The steps of docs/development.md's "Adding a metric", done to ``package``."""
    _insert_after(
        package / "catalog.py",
        "METRICS: tuple[MetricEntry, ...] = (\n",
        f'    MetricEntry(kind="{KIND}", class_name="{CLASS}", '
        f'module="opik_semantic_metrics.metrics.{KIND}"),\n',
    )
    (package / "metrics" / f"{KIND}.py").write_text(TOY_MODULE, encoding="utf-8")
    for init in (package / "__init__.py", package / "metrics" / "__init__.py"):
        _insert_after(
            init,
            "if TYPE_CHECKING:\n",
            f"    from opik_semantic_metrics.metrics.{KIND} import {CLASS}\n",
        )
        _insert_after(init, "__all__ = [", f'"{CLASS}", ')


def _changed_files(original: Path, copy: Path) -> set[str]:
    """Files of ``copy`` that are new or differ from ``original``, relative to the package."""
    changed: set[str] = set()
    for path in copy.rglob("*.py"):
        relative = path.relative_to(copy)
        before = original / relative
        if not before.exists() or not filecmp.cmp(before, path, shallow=False):
            changed.add(relative.as_posix())
    return changed


def _documented_files() -> set[str]:
    """The ``src/`` files the development page's "Adding a metric" lists, relative to the
    package, with ``<kind>`` as the toy's kind."""
    page = DEVELOPMENT_PAGE.read_text(encoding="utf-8")
    section = page.split("## Adding a metric", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d+\. `src/opik_semantic_metrics/([^`]+)`", section, re.MULTILINE)
    return {step.replace("<kind>", KIND) for step in steps}


@pytest.mark.slow
def test_a_fifth_metric_takes_the_documented_route(tmp_path):
    pytest.importorskip("ray")
    copy = tmp_path / "src" / "opik_semantic_metrics"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    add_toy_metric(copy)

    changed = _changed_files(PACKAGE, copy)
    assert changed == _documented_files()
    assert len(changed) <= 4

    report = run_json_probe(PROBE, [str(tmp_path / "rows.jsonl")], copy.parent, timeout=300)
    # The command line's choices and early check know it, and still import nothing heavy.
    assert report["imported_early"] == []
    assert report["choices"] == [
        "exact-text",
        "bertscore",
        "semantic-match",
        "comet",
        "answer-match",
    ]
    assert report["parsed"] == "exact-text"
    assert report["required"] == ["output", "reference"]
    assert report["refusal"].startswith("No column for reference in")
    # The package, the registry, a settings document and a Ray blueprint know it.
    assert report["same_class"] and report["in_dir"] and report["registered"]
    assert report["kind"] == KIND
    assert report["document"] == {"metric": KIND, "settings": {"strip": True, "name": "exact"}}
    assert report["rebuilt_settings"] == {"strip": True, "name": "exact"}
    assert report["scores"] == [[1.0], [0.0]]
    assert report["blueprint"] == [KIND, ["exact"], ["output", "reference"], False]
    assert report["blueprint_scores"] == [[1.0], [0.0]]


def test_the_documented_route_names_four_files():
    assert _documented_files() == {
        "catalog.py",
        f"metrics/{KIND}.py",
        "__init__.py",
        "metrics/__init__.py",
    }
