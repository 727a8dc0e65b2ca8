"""SemanticMatch's settings are declared once (``semantic/settings.py``): the metric's
keyword arguments, the engine's settings and the combination's arguments are read from
that one declaration, and a setting given anywhere arrives where it is used."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from opik_semantic_metrics import SemanticMatch
from opik_semantic_metrics.semantic.combine import Combination
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
from opik_semantic_metrics.semantic.settings import COMBINATION_SETTINGS, SemanticMatchSettings

METRIC_OWN = ("name", "track", "project_name")


def test_every_metric_argument_is_a_setting_with_the_settings_default():
    defaults = SemanticMatchSettings()
    parameters = inspect.signature(SemanticMatch).parameters
    settings = [name for name in parameters if name not in METRIC_OWN]
    assert set(settings) <= set(SemanticMatchSettings.names())
    for name in settings:
        assert parameters[name].default == getattr(defaults, name), name


def test_the_combination_reads_its_settings_by_the_same_names():
    create = inspect.signature(Combination.create).parameters
    fields = {field.name for field in dataclasses.fields(Combination)}
    defaults = SemanticMatchSettings()
    for name in COMBINATION_SETTINGS:
        assert name in fields and create[name].default == getattr(defaults, name), name


def test_settings_given_to_the_metric_reach_the_engine_and_its_combination():
    given = {
        "weights": (0.2, 0.3, 0.5),
        "floor": 0.1,
        "snap": None,
        "softness": 0.05,
        "negation_penalty": 0.3,
        "number_penalty": 0.1,
        "long_weights": None,
        "long_sentences": 3,
        "token_vectors": "isolated",
        "cleaning": "all_stop_words",
        "paragraph_baseline": 0.2,
        "batch_size": 8,
    }
    metric = SemanticMatch(device="cpu", track=False, **given)
    engine = metric.engine
    for name, value in given.items():
        assert getattr(engine.settings, name) == value, name
    assert engine.settings.device == "cpu"
    combination = engine.combination
    assert (combination.weights, combination.floor, combination.snap) == (
        (0.2, 0.3, 0.5),
        0.1,
        None,
    )
    assert (combination.softness, combination.negation_penalty, combination.number_penalty) == (
        0.05,
        0.3,
        0.1,
    )
    assert (combination.long_weights, combination.long_sentences) == (None, 3)
    assert (engine.token_vectors, engine.cleaning, engine.fixed_baseline) == (
        "isolated",
        "all_stop_words",
        0.2,
    )
    assert engine.batch_size == 8
    # The metric rebuilt from its recorded settings has the same engine settings.
    assert type(metric)(**metric.settings, track=False, device="cpu").engine.settings == (
        engine.settings
    )


def test_the_engine_takes_settings_by_keyword_and_refuses_a_name_that_is_none():
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", seed=3, baseline_pairs=7)
    assert (engine.seed, engine.baseline_pairs, engine.settings.model) == (3, 7, "all-MiniLM-L6-v2")
    with pytest.raises(TypeError, match="no setting 'wieghts'"):
        SemanticMatchEngine(device="cpu", wieghts=(1, 1, 1))
    with pytest.raises(ValueError, match="`floor`"):
        SemanticMatchEngine(settings=SemanticMatchSettings(floor=1.5), device="cpu")
