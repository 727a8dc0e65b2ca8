"""Pooling settings read from sentence-transformers files, and each pooling mode by hand."""

from __future__ import annotations

import json
import math

import pytest
import torch

from opik_semantic_metrics.semantic.pooling import DEFAULT_POOLING, pool, read_pooling_config

# Two texts of widths 2: the second has one padded position.
HIDDEN = torch.tensor(
    [
        [[1.0, 2.0], [3.0, -4.0], [5.0, 0.0]],
        [[2.0, 2.0], [0.0, 6.0], [99.0, 99.0]],
    ]
)
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])


def _write_model(tmp_path, modules, pooling=None, settings=None):
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    if pooling is not None:
        (tmp_path / "1_Pooling").mkdir()
        (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    if settings is not None:
        (tmp_path / "sentence_bert_config.json").write_text(json.dumps(settings))
    return str(tmp_path)


TRANSFORMER = {
    "idx": 0,
    "name": "0",
    "path": "",
    "type": "sentence_transformers.models.Transformer",
}
POOLING = {
    "idx": 1,
    "name": "1",
    "path": "1_Pooling",
    "type": "sentence_transformers.models.Pooling",
}


def test_packaged_minilm_is_mean_pooled_normalised_and_cut_at_256(minilm_path):
    config = read_pooling_config(str(minilm_path))
    assert config.modes == ("mean",)
    assert config.normalize is True
    assert config.max_seq_length == 256
    assert config.lowercase is False
    assert config.source == "sentence-transformers modules.json"


def test_a_plain_transformers_model_is_mean_pooled(tmp_path):
    assert read_pooling_config(str(tmp_path)) == DEFAULT_POOLING
    assert DEFAULT_POOLING.modes == ("mean",)


def test_legacy_flags_and_the_new_key_give_the_same_modes(tmp_path):
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    _write_model(
        legacy,
        [TRANSFORMER, POOLING],
        {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True},
        {"max_seq_length": 128, "do_lower_case": True},
    )
    config = read_pooling_config(str(legacy))
    # sentence-transformers concatenates the legacy flags in its own order: cls first.
    assert config.modes == ("cls", "mean")
    assert config.normalize is False and config.max_seq_length == 128 and config.lowercase
    current = tmp_path / "current"
    current.mkdir()
    _write_model(current, [TRANSFORMER, POOLING], {"pooling_mode": ["max", "lasttoken"]})
    assert read_pooling_config(str(current)).modes == ("max", "lasttoken")


def test_other_pipeline_modules_are_refused(tmp_path):
    dense = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
    path = _write_model(tmp_path, [TRANSFORMER, POOLING, dense], {"pooling_mode": "mean"})
    with pytest.raises(ValueError, match="Dense"):
        read_pooling_config(path)


def test_unknown_pooling_mode_is_refused(tmp_path):
    path = _write_model(tmp_path, [TRANSFORMER, POOLING], {"pooling_mode": "median"})
    with pytest.raises(ValueError, match="pooling"):
        read_pooling_config(path)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("cls", [[1.0, 2.0], [2.0, 2.0]]),
        ("max", [[5.0, 2.0], [2.0, 6.0]]),
        ("mean", [[3.0, -2 / 3], [1.0, 4.0]]),
        (
            "mean_sqrt_len_tokens",
            [[9 / math.sqrt(3), -2 / math.sqrt(3)], [2 / math.sqrt(2), 8 / math.sqrt(2)]],
        ),
        # Position weights 1, 2, 3 (and 1, 2 for the padded text).
        ("weightedmean", [[(1 + 6 + 15) / 6, (2 - 8 + 0) / 6], [(2 + 0) / 3, (2 + 12) / 3]]),
        ("lasttoken", [[5.0, 0.0], [0.0, 6.0]]),
    ],
)
def test_each_pooling_mode_by_hand(mode, expected):
    flat = [value for row in expected for value in row]
    assert pool(HIDDEN, MASK, (mode,)).flatten().tolist() == pytest.approx(flat)


def test_modes_are_concatenated_in_order():
    pooled = pool(HIDDEN, MASK, ("cls", "max"))
    assert pooled.shape == (2, 4)
    assert pooled[0].tolist() == [1.0, 2.0, 5.0, 2.0]
