"""The combination: weights, floor rescaling, clamping, snapping, paragraph baseline."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from opik_semantic_metrics.semantic.combine import (
    DEFAULT_WEIGHTS,
    RECIPE_WEIGHTS,
    Combination,
    check_baseline,
    rescale_by_baseline,
)


def test_defaults():
    combination = Combination.create()
    assert combination.weights == pytest.approx(DEFAULT_WEIGHTS) == (0.1, 0.1, 0.8)
    assert combination.long_weights == pytest.approx((0.65, 0.35, 0.0))
    assert (combination.long_sentences, combination.aligned_flips) == (2, True)
    assert (combination.floor, combination.snap, combination.softness) == (0.25, 0.99, 0.15)
    assert (combination.negation_penalty, combination.number_penalty) == (0.15, 0.2)


def test_the_weights_move_from_one_sentence_to_long_texts_linearly():
    """One-sentence texts take ``weights``, texts of ``long_sentences`` sentences or more
    ``long_weights``, and the texts between a straight mix; the raw score of a row of levels
    with its sentence count is the same one pair by one and many at once."""
    combination = Combination.create(
        weights=(0, 0, 1), long_weights=(1, 0, 0), long_sentences=3, negation_penalty=0.2
    )
    assert combination.weights_for(1.0) == (0.0, 0.0, 1.0)
    assert combination.weights_for(2.0) == pytest.approx((0.5, 0.0, 0.5))
    assert combination.weights_for(3.0) == combination.weights_for(7.5) == (1.0, 0.0, 0.0)
    rows = np.array(
        [[0.9, 0.5, 0.3, 0.0, 0.0, 1.0], [0.9, 0.5, 0.3, 0.5, 0.0, 2.0], [0.9, 0.5, 0.3, 0, 0, 4.0]]
    )
    expected = [0.3, 0.6 - 0.1, 0.9]
    assert combination.raw_array(rows) == pytest.approx(expected, abs=1e-12)
    assert [combination.raw(*row) for row in rows.tolist()] == pytest.approx(expected, abs=1e-12)
    # Without long weights, or without the column, every row takes ``weights``.
    single = Combination.create(weights=(0, 0, 1), long_weights=None, negation_penalty=0)
    assert single.weights_for(5.0) == (0.0, 0.0, 1.0)
    assert single.raw_array(rows) == pytest.approx([0.3, 0.3, 0.3])
    assert combination.raw_array(rows[:, :5]) == pytest.approx([0.3, 0.2, 0.3])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"long_weights": (1, 1)}, "long_weights"),
        ({"long_weights": (0, 0, 0)}, "long_weights"),
        ({"long_sentences": 1}, "long_sentences"),
        ({"long_sentences": 2.5}, "long_sentences"),
        ({"long_sentences": True}, "long_sentences"),
    ],
)
def test_bad_long_text_settings_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        Combination.create(**arguments)


def test_the_flip_penalties_come_off_the_raw_score_row_by_row():
    combination = Combination.create(weights=(1, 1, 2), negation_penalty=0.3, number_penalty=0.2)
    rows = np.array([[0.8, 0.6, 0.7, 0.0, 0.0], [0.8, 0.6, 0.7, 1.0, 0.5], [1, 1, 1, 0, 0]])
    expected = [0.7, 0.7 - 0.3 - 0.1, 1.0]
    assert combination.raw_array(rows) == pytest.approx(expected, abs=1e-12)
    assert [combination.raw(*row) for row in rows.tolist()] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", ["negation_penalty", "number_penalty"])
@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, True, "0.1", None])
def test_a_penalty_outside_0_1_is_refused(name, value):
    with pytest.raises(ValueError, match=f"`{name}` in \\[0, 1\\]"):
        Combination.create(**{name: value})


def _reference_smooth_floor(raw: float, floor: float, softness: float) -> float:
    """The smooth floor written out: t * log(1 + exp((x - floor) / t)), divided by its value
    at 1, clamped to [0, 1] (math.log1p(math.exp()) overflows beyond exp(709))."""

    def bend(x: float) -> float:
        return softness * math.log1p(math.exp((x - floor) / softness))

    return min(1.0, max(0.0, bend(raw) / bend(1.0)))


@pytest.mark.parametrize("softness", [0.01, 0.05, 0.15, 0.5, 1.0])
def test_the_smooth_floor_is_its_formula_increasing_and_keeps_one(softness):
    combination = Combination.create(weights=(1, 1, 1), floor=0.25, snap=None, softness=softness)
    raws = np.linspace(-1.0, 1.0, 401)
    finals = [combination.final(float(raw)) for raw in raws]
    for raw, final in zip(raws, finals, strict=True):
        assert final == pytest.approx(
            _reference_smooth_floor(float(raw), 0.25, softness), abs=1e-12
        )
    assert all(0.0 <= final <= 1.0 for final in finals)
    assert all(a < b for a, b in itertools.pairwise(finals))
    assert combination.final(1.0) == 1.0 and combination.final(1.0000001) == 1.0
    assert np.array_equal(combination.final_array(raws), np.array(finals))


def test_a_small_softness_approaches_the_hard_floor_and_orders_what_it_ties():
    hard = Combination.create(weights=(1, 1, 1), floor=0.25, snap=None, softness=0)
    soft = Combination.create(weights=(1, 1, 1), floor=0.25, snap=None, softness=0.01)
    for raw in (-0.5, 0.0, 0.1, 0.25, 0.3, 0.6, 0.9):
        assert soft.final(raw) == pytest.approx(hard.final(raw), abs=0.01)
    below = [soft.final(raw) for raw in (0.1, 0.15, 0.2)]
    assert [hard.final(raw) for raw in (0.1, 0.15, 0.2)] == [0.0, 0.0, 0.0]
    assert 0.0 < below[0] < below[1] < below[2] < 0.01  # ordered, not tied


def test_a_nan_raw_score_gives_zero_on_either_curve():
    for softness in (0.0, 0.15):
        combination = Combination.create(snap=None, softness=softness)
        assert combination.final(math.nan) == 0.0


@pytest.mark.parametrize("softness", [-0.1, 1.5, math.nan, "0.1", True, None])
def test_a_bad_softness_is_refused(softness):
    with pytest.raises(ValueError, match="`softness`"):
        Combination.create(softness=softness)


def test_identical_answers_score_one_and_the_literal_recipe_formula_would_not():
    combination = Combination.create(weights=RECIPE_WEIGHTS, floor=0.25, snap=0.95, softness=0)
    raw = combination.raw(1.0, 1.0, 1.0)
    assert raw == pytest.approx(1.0)
    assert max(0.0, raw - 0.25) == pytest.approx(0.75)  # the recipe, taken literally
    assert combination.final(raw) == 1.0


def test_the_hard_floor_maps_to_zero_and_is_a_linear_rescaling_above_it():
    combination = Combination.create(weights=(1, 1, 1), floor=0.25, snap=None, softness=0)
    assert combination.final(0.25) == 0.0
    assert combination.final(0.05) == 0.0
    assert combination.final(-0.3) == 0.0
    assert combination.final(0.625) == pytest.approx(0.5)
    assert combination.final(1.0) == pytest.approx(1.0)
    assert combination.final(1.0000001) == 1.0  # float rounding never exceeds 1


def test_snap_applies_to_the_rescaled_score():
    combination = Combination.create(floor=0.2, snap=0.9, softness=0)
    # rescaled = (raw - 0.2) / 0.8: 0.93 -> 0.9125 snaps, 0.91 -> 0.8875 does not.
    assert combination.final(0.93) == 1.0 and combination.snaps(0.93)
    assert combination.final(0.91) == pytest.approx(0.8875)
    assert not combination.snaps(0.91)


def test_weights_are_relative():
    combination = Combination.create(weights=(2, 0, 2))
    assert combination.weights == (0.5, 0.0, 0.5)
    assert combination.raw(0.2, 0.9, 0.6) == pytest.approx(0.4)


@pytest.mark.parametrize(
    "weights", [(0.5, 0.5), (1, 1, 1, 1), (-0.1, 0.6, 0.5), (0, 0, 0), (math.nan, 1, 1), "abc"]
)
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError, match="weights"):
        Combination.create(weights=weights)


def test_numpy_numbers_are_numbers():
    # Values read from a NumPy array or a pandas frame were refused (np.float32 is no
    # Python float, and an array no Sequence); they now give what their floats give.
    from_numpy = Combination.create(
        weights=np.array([1.0, 1.0, 2.0], dtype=np.float32),
        floor=np.float32(0.25),
        snap=np.float64(0.9),
    )
    assert from_numpy == Combination.create(weights=(1.0, 1.0, 2.0), floor=0.25, snap=0.9)
    assert all(type(weight) is float for weight in from_numpy.weights)
    assert check_baseline(np.float32(0.5)) == 0.5
    with pytest.raises(ValueError, match="`floor`"):
        Combination.create(floor=np.bool_(False))
    with pytest.raises(ValueError, match="weights"):
        Combination.create(weights=np.array([1.0, 1.0]))


@pytest.mark.parametrize(("floor", "snap"), [(1.0, 0.95), (-0.1, 0.95), (0.25, 0.0), (0.2, 1.5)])
def test_bad_floor_or_snap_is_refused(floor, snap):
    with pytest.raises(ValueError, match=r"`(floor|snap)`"):
        Combination.create(floor=floor, snap=snap)


def test_paragraph_baseline_rescaling():
    assert rescale_by_baseline(0.3, 0.3) == 0.0
    assert rescale_by_baseline(1.0, 0.3) == pytest.approx(1.0)
    assert rescale_by_baseline(0.65, 0.3) == pytest.approx(0.5)
    assert rescale_by_baseline(0.1, 0.3) < 0  # below the baseline: negative, floored later
    assert check_baseline(0) == 0.0
    assert check_baseline(0.99) == 0.99
    for bad in (1.0, 0.9999999, -1.5, float("nan"), "0.2", True, None):
        with pytest.raises(ValueError, match="paragraph_baseline"):
            check_baseline(bad)  # type: ignore[arg-type]
