"""Each metric declares itself once, and every setting reaches a rebuilt metric.

A metric rebuilt the way a Ray actor rebuilds it (its blueprint pickled by Ray's cloudpickle,
then built), or from its settings document through the command line's JSON writer, has
the settings of the original, its fitted state, and its scores. Every constructor setting
of the four metrics is set here to a value other than its default: a setting added to a
constructor and missing from :data:`NON_DEFAULT` fails
:func:`test_this_test_sets_every_setting_of_the_metric`, so it cannot go unchecked.
"""

from __future__ import annotations

import argparse
import inspect
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import ray
import ray.cloudpickle

from opik_semantic_metrics import COMET, AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.bertscore.baseline import Baseline, write_baseline
from opik_semantic_metrics.cli import score_dataset as score_dataset_command
from opik_semantic_metrics.cli.common import CliError, json_text
from opik_semantic_metrics.cli.main import main
from opik_semantic_metrics.cli.score_dataset import METRICS
from opik_semantic_metrics.distributed import score_dataset
from opik_semantic_metrics.distributed.blueprint import blueprint_of
from opik_semantic_metrics.metrics.base import RUNTIME_ARGUMENTS, PackageMetric
from opik_semantic_metrics.metrics.settings import metric_from_document, settings_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
COMET_FIXTURE = FIXTURES / "comet" / "regression-xlmr"

OUTPUTS = [
    "A man is playing a guitar.",
    "The store is not open on Sundays.",
    "",
    "Emissions fell by 12 percent in 2022.",
]
REFERENCES = [
    "A man plays the guitar.",
    "The store is open on Sundays.",
    "A woman is slicing an onion.",
    "Emissions dropped 12% in 2022.",
]


def _bertscore_settings(files: Path, minilm: Path) -> dict[str, Any]:
    # MiniLM has 6 layers: a baseline for layers 0 to 6 (the values are arbitrary, the
    # rescaling is what must travel).
    baseline = write_baseline(
        files / "baseline.tsv", [Baseline(0.2 + i / 100, 0.25, 0.3) for i in range(7)]
    )
    return {
        "model": str(minilm),
        "num_layers": 5,
        "idf": True,
        "rescale_with_baseline": True,
        "baseline_path": baseline,
        "lang": "de",
        "name": "bs",
        "batch_size": 3,
        "micro_batch_size": 4,
        "dtype": "float32",
        "idf_references": [*REFERENCES, "A dog runs in the park.", "Prices rose by 3%."],
    }


def _non_default(files: Path, minilm: Path) -> dict[type[PackageMetric], dict[str, Any]]:
    """Every setting of each metric, at a value other than its default."""
    return {
        BERTScore: _bertscore_settings(files, minilm),
        SemanticMatch: {
            "model": str(minilm),
            "weights": (0.3, 0.3, 0.4),
            "floor": 0.2,
            "snap": 0.95,
            "token_vectors": "isolated",
            "paragraph_baseline": 0.1,
            "name": "sm",
            "batch_size": 3,
            "dtype": "float32",
            "softness": 0.05,
            "cleaning": "all_stop_words",
            "negation_penalty": 0.3,
            "number_penalty": 0.1,
            "long_weights": (0.5, 0.3, 0.2),
            "long_sentences": 3,
        },
        COMET: {
            "model": str(COMET_FIXTURE),
            "batch_size": 3,
            "name": "c",
            "dtype": "float32",
        },
        AnswerMatch: {
            "tolerance": 0.5,
            "relative_tolerance": 0.05,
            "ordered": True,
            "semantic": BERTScore(**_bertscore_settings(files, minilm), device="cpu", track=False),
            "semantic_threshold": 0.3,
            "name": "am",
            "percent_as_fraction": True,
            "abstentions": ("no idea", "not answerable"),
            "abstention_patterns": False,
        },
    }


ROWS: dict[type[PackageMetric], dict[str, list[Any]]] = {
    BERTScore: {"output": OUTPUTS, "reference": REFERENCES},
    SemanticMatch: {"output": OUTPUTS, "reference": REFERENCES},
    COMET: {
        "input": ["A man plays.", "The store.", "An onion.", "Emissions."],
        "output": OUTPUTS,
        "reference": REFERENCES,
    },
    AnswerMatch: {
        "output": [
            "The document does not say.",
            "12.4",
            "104",
            "0.82",
            "['b', 'a']",
            "No idea.",
            "The company cut its emissions.",
        ],
        "reference": ["Not answerable", "12", "100", "82%", "['a', 'b']", None, "Emissions fell."],
    },
}


@pytest.fixture(scope="module")
def non_default(tmp_path_factory, minilm_path) -> dict[type[PackageMetric], dict[str, Any]]:
    return _non_default(tmp_path_factory.mktemp("settings"), minilm_path)


@pytest.fixture(scope="module")
def metrics(non_default) -> dict[type[PackageMetric], PackageMetric]:
    built: dict[type[PackageMetric], PackageMetric] = {}
    for metric_class, settings in non_default.items():
        runtime: dict[str, Any] = {"track": False}
        if "device" in inspect.signature(metric_class).parameters:
            runtime["device"] = "cpu"
        built[metric_class] = metric_class(**settings, **runtime)
    fitted = built[SemanticMatch]
    assert isinstance(fitted, SemanticMatch)
    fitted.fit(REFERENCES)
    return built


CLASSES = [BERTScore, SemanticMatch, COMET, AnswerMatch]


@pytest.mark.parametrize("metric_class", CLASSES, ids=lambda c: c.__name__)
def test_this_test_sets_every_setting_of_the_metric(metric_class, non_default):
    parameters = inspect.signature(metric_class).parameters
    settings = set(parameters) - set(RUNTIME_ARGUMENTS)
    missing = settings - set(non_default[metric_class])
    assert not missing, (
        f"{metric_class.__name__} has setting(s) {sorted(missing)} this test does not set: "
        "give each a value other than its default in _non_default()"
    )
    for key, value in non_default[metric_class].items():
        assert value != parameters[key].default, f"{key} is at its default"


def test_the_command_line_offers_every_metric():
    assert set(METRICS) == {kind.replace("_", "-") for kind in PackageMetric.registered()}


def _comparable(metric: PackageMetric) -> dict[str, Any]:
    """The settings as a rebuilt metric must have them: a file by its bytes, a nested
    metric by its own settings and state; those the fitted state stands for left out."""
    found: dict[str, Any] = {}
    for key, value in metric.settings.items():
        if key in metric.entry.state_settings:
            continue
        if key in metric.entry.file_settings and value is not None:
            value = Path(value).read_bytes()
        elif isinstance(value, PackageMetric):
            value = (_comparable(value), value.fitted_state())
        elif isinstance(value, list | tuple):
            value = list(value)
        found[key] = value
    return found


def _scores(metric: PackageMetric, rows: dict[str, list[Any]]) -> list[list[Any]]:
    return [
        [(result.name, result.value, result.metadata) for result in row]
        for row in metric.score_rows(rows)
    ]


def _same_scores(got: list[list[Any]], want: list[list[Any]]) -> None:
    assert len(got) == len(want)
    for got_row, want_row in zip(got, want, strict=True):
        for (name, value, metadata), (want_name, want_value, want_metadata) in zip(
            got_row, want_row, strict=True
        ):
            assert name == want_name
            assert value == pytest.approx(want_value, abs=1e-6)
            assert set(metadata) == set(want_metadata)


@pytest.mark.parametrize("metric_class", CLASSES, ids=lambda c: c.__name__)
def test_a_metric_rebuilt_as_a_ray_actor_rebuilds_it_is_the_same(metric_class, metrics):
    metric = metrics[metric_class]
    blueprint = ray.cloudpickle.loads(ray.cloudpickle.dumps(blueprint_of(metric)))
    rebuilt = blueprint.build("cpu")
    assert type(rebuilt) is metric_class and rebuilt is not metric
    assert _comparable(rebuilt) == _comparable(metric)
    assert rebuilt.fitted_state() == metric.fitted_state()
    assert blueprint.score_names == metric.score_names()
    rows = ROWS[metric_class]
    _same_scores(_scores(rebuilt, rows), _scores(metric, rows))


@pytest.mark.parametrize("metric_class", CLASSES, ids=lambda c: c.__name__)
def test_a_metric_rebuilt_from_its_json_settings_is_the_same(metric_class, metrics):
    metric = metrics[metric_class]
    document = json.loads(json_text(settings_document(metric)))
    rebuilt = metric_from_document(document, device="cpu")
    rebuilt.restore_fitted_state(metric.fitted_state())
    assert settings_document(rebuilt) == document
    rows = ROWS[metric_class]
    _same_scores(_scores(rebuilt, rows), _scores(metric, rows))


def test_the_abstention_case_scores_as_in_process_on_ray(ray_cluster):
    """A pattern-only abstention is a match with the patterns on and none with them off,
    in-process and on Ray's actors (AnswerMatch's abstention_patterns once did not travel
    with a semantic metric)."""
    row = {"id": 0, "output": "The document does not say.", "reference": "Not answerable"}
    semantic = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
    for patterns, expected in ((True, 1.0), (False, 0.0)):
        metric = AnswerMatch(abstention_patterns=patterns, semantic=semantic, track=False)
        in_process = metric.score(output=row["output"], reference=row["reference"])
        assert in_process.value == expected
        [scored] = score_dataset([row], metric, num_actors=1).take_all()
        assert scored["answer_match_error"] is None
        assert scored["answer_match"] == expected, f"abstention_patterns={patterns} on Ray"


def test_a_setting_that_cannot_travel_is_named():
    metric = AnswerMatch(
        semantic=lambda output, reference: 1.0, semantic_threshold=0.5, track=False
    )
    with pytest.raises(ValueError, match=r"semantic=.* cannot be written as JSON"):
        settings_document(metric)
    # A lambda pickles with cloudpickle: Ray can send it, and the blueprint carries it.
    rebuilt = blueprint_of(metric).build("cpu")
    assert rebuilt.score(output="apples", reference="oranges").value == 1.0
    lock = threading.Lock()

    def locked(output: str, reference: str) -> float:
        with lock:
            return 1.0

    unsendable = AnswerMatch(semantic=locked, semantic_threshold=0.5, track=False)
    with pytest.raises(ValueError, match=r"setting semantic=.* cannot be sent to Ray's workers"):
        blueprint_of(unsendable)


def _options(**given: Any) -> argparse.Namespace:
    options: dict[str, Any] = {
        "metric": "bertscore",
        "model": None,
        "dtype": None,
        "lang": None,
        "num_layers": None,
        "idf": False,
        "rescale_with_baseline": False,
    }
    return argparse.Namespace(**{**options, **given})


def test_the_command_line_builds_a_metric_from_its_declared_settings():
    bertscore = score_dataset_command._metric(_options(num_layers=5, idf=True))
    assert isinstance(bertscore, BERTScore)
    # The packaged MiniLM where neither a model nor a language chooses one.
    assert bertscore.settings["model"] == "all-MiniLM-L6-v2"
    assert (bertscore.settings["num_layers"], bertscore.settings["idf"]) == (5, True)
    answer_match = score_dataset_command._metric(_options(metric="answer-match"))
    assert isinstance(answer_match, AnswerMatch)
    with pytest.raises(CliError, match="--lang is no setting of --metric comet"):
        score_dataset_command._metric(_options(metric="comet", lang="en"))
    with pytest.raises(CliError, match="--num-layers is no setting of --metric answer-match"):
        score_dataset_command._metric(_options(metric="answer-match", num_layers=3))


def test_fit_is_refused_for_a_metric_that_fits_nothing(tmp_path, capsys, ray_cluster):
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps({"output": "A cat.", "reference": "A cat."}) + "\n")
    out = str(tmp_path / "out.parquet")
    assert main(["score-dataset", str(source), "--fit", "--out", out]) == 2
    assert "--fit is no setting of --metric bertscore" in capsys.readouterr().err


def test_a_users_subclass_does_not_take_the_package_metrics_place():
    # A subclass inherits its parent's kind; once it replaced SemanticMatch in the registry,
    # every SemanticMatch rebuilt for Ray or the command line came back as the subclass.
    class CustomSemanticMatch(SemanticMatch):
        pass

    assert PackageMetric.registered()["semantic_match"] is SemanticMatch
    assert CustomSemanticMatch.kind == "semantic_match"
