"""examples/quickstart.py: real STS-B caption pairs scored through Opik's engine."""

from __future__ import annotations

import contextlib
import io

import pytest

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from tests.bert_score_oracle import minilm_prf
from tests.examples.example_modules import load_example

quickstart = load_example("quickstart.py", "quickstart_example")


def test_the_pairs_are_the_stsb_rows_the_docstring_names(stsb_pairs):
    # Their licence (CC BY-SA 4.0) holds only for the STS-B `images` rows we ship.
    shipped = set(stsb_pairs)
    for generated, reference, human in quickstart.CAPTION_PAIRS[:-1]:
        assert (generated, reference, human) in shipped
    generated, reference, human = quickstart.CAPTION_PAIRS[-1]
    assert generated == "" and human is None
    assert any(reference == first for first, _, _ in stsb_pairs)


def test_printed_scores_are_bert_scores_most_similar_first(minilm_path):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        quickstart.main()
    rows = [line.split() for line in printed.getvalue().splitlines() if line[:5].strip()]
    scored = [row for row in rows if row[0] not in ("BERTScore", "human")]
    pairs = quickstart.CAPTION_PAIRS
    assert [row[0] for row in scored] == ["5.00", "4.60", "3.60", "1.40", "0.00", "-"]
    oracle = minilm_prf(minilm_path, [g for g, _, _ in pairs[:-1]], [r for _, r, _ in pairs[:-1]])
    # Printed as F1, P, R to 3 decimals.
    printed_scores = [[float(cell) for cell in row[1:4]] for row in scored[:-1]]
    assert printed_scores == [pytest.approx([f1, p, r], abs=5e-4) for p, r, f1 in oracle.tolist()]
    assert scored[-1][1:4] == ["0.000", "0.000", "0.000"]
    assert "the output is empty, so the raw scores are 0" in printed.getvalue()
    assert f"BERTScore with {BERTScoreEngine('all-MiniLM-L6-v2').hash}" in printed.getvalue()
