"""Baselines: bert_score's packaged files, our files, and computing one like its authors."""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

import pytest
import torch
from bert_score import BERTScorer

from opik_semantic_metrics.bertscore.baseline import (
    PACKAGED_BASELINES,
    Baseline,
    baseline_pairs,
    compute_baseline,
    packaged_baseline_path,
    read_baseline,
    write_baseline,
)
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine


def test_reads_bert_scores_packaged_roberta_large_layer_17():
    baseline = read_baseline(packaged_baseline_path("en", "roberta-large"), 17)
    # Values of bert_score 0.3.13's rescale_baseline/en/roberta-large.tsv, row 17.
    assert baseline == Baseline(precision=0.83150584, recall=0.8314941, f1=0.83122575)


def test_the_packaged_baselines_are_bert_scores_files_unchanged():
    # The reference package is installed for the tests: its files are the originals.
    origin = find_spec("bert_score").origin
    originals = Path(origin).parent / "rescale_baseline"
    ours = {
        path.relative_to(PACKAGED_BASELINES): path for path in PACKAGED_BASELINES.rglob("*.tsv")
    }
    theirs = {path.relative_to(originals): path for path in originals.rglob("*.tsv")}
    assert len(theirs) == 72
    assert sorted(ours) == sorted(theirs)
    for name, path in ours.items():
        assert path.read_bytes() == theirs[name].read_bytes(), name


def test_write_then_read_round_trips(tmp_path):
    layers = [Baseline(0.1 * i, 0.2 * i, 0.3 * i) for i in range(4)]
    path = write_baseline(tmp_path / "b.tsv", layers)
    assert path.read_text().splitlines()[0] == "LAYER,P,R,F"
    assert [read_baseline(path, i) for i in range(4)] == layers
    with pytest.raises(ValueError, match="layers 0 to 3"):
        read_baseline(path, 4)
    with pytest.raises(FileNotFoundError):
        read_baseline(tmp_path / "missing.tsv", 0)
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(ValueError, match=r"empty\.tsv is empty"):
        read_baseline(tmp_path / "empty.tsv", 0)


def test_a_language_code_is_read_in_any_case():
    # As bert_score, which lower-cases `lang`.
    assert packaged_baseline_path("EN", "roberta-large") == packaged_baseline_path(
        "en", "roberta-large"
    )


def test_pairs_are_drawn_like_bert_scores_authors():
    lines = [f"sentence number {i}" for i in range(11)] + ["long " * 32, "   "]
    left, right = baseline_pairs(lines, seed=5)
    assert len(left) == len(right) == 5
    assert set(left).isdisjoint(right)
    assert all(len(text.split(" ")) < 32 for text in left + right)
    assert baseline_pairs(lines, seed=5) == (left, right)
    with pytest.raises(ValueError):
        baseline_pairs(["only one"])


@pytest.mark.slow
def test_computed_baseline_equals_bert_scores_all_layer_means(minilm_path, stsb_pairs):
    corpus = [text for first, second, _ in stsb_pairs[:60] for text in (first, second)]
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    computed = engine.compute_baseline(corpus, seed=11)
    assert len(computed) == 7  # embeddings + 6 layers

    candidates, references = baseline_pairs(corpus, seed=11)
    scorer = BERTScorer(model_type=str(minilm_path), num_layers=6, all_layers=True)
    # Pairs one at a time: bert_score's batched match lets padding beat negative cosines.
    rows = [
        torch.stack(scorer.score([c], [r], batch_size=1))
        for c, r in zip(candidates, references, strict=True)
    ]
    oracle = torch.cat(rows, dim=-1).double().mean(dim=-1).T  # (layers, 3)
    # In chunks that do not divide the 60 pairs too, as a corpus of a million lines is read.
    chunked = compute_baseline(engine.score_all_layers, corpus, seed=11, chunk_size=7)
    for baselines in (computed, chunked):
        ours = torch.tensor([[b.precision, b.recall, b.f1] for b in baselines], dtype=torch.float64)
        assert (ours - oracle).abs().max().item() < 1e-5


def test_rescaled_unrelated_pairs_average_near_zero(tmp_path, stsb_pairs):
    corpus = [text for first, second, _ in stsb_pairs for text in (first, second)]
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    path = write_baseline(tmp_path / "minilm.tsv", engine.compute_baseline(corpus, seed=0))
    rescaled = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", rescale_with_baseline=True, baseline_path=path
    )
    candidates, references = baseline_pairs(corpus, seed=0)
    f1 = [r.f1 for r in rescaled.score(candidates, references)]
    assert abs(sum(f1) / len(f1)) < 1e-5
    identical = rescaled.score(["A man is slicing a tomato."], ["A man is slicing a tomato."])
    assert identical[0].f1 == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"LAYER,P,R,F\n0,0.8,\xff\n", "is not a UTF-8 text file"),
        (b"LAYER,P,R,F\n0,0.8,0.7\n", "row of layer 0 to be LAYER,P,R,F with three numbers"),
        (b"LAYER,P,R,F\n0,0.8,0.7,high\n", "got 0,0.8,0.7,high"),
    ],
)
def test_a_bad_baseline_file_is_named_in_the_error(tmp_path, content, message):
    path = tmp_path / "baseline.tsv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        read_baseline(path, 0)
    assert str(path) in str(error.value)


def test_a_folder_given_as_the_baseline_file_is_said_to_be_one(tmp_path):
    # It was "not found", though it was there.
    with pytest.raises(FileNotFoundError, match=f"{re.escape(str(tmp_path))} is a folder"):
        read_baseline(tmp_path, 0)


@pytest.mark.parametrize("row", ["6,0.5,0.5,1.0", "6,nan,0.5,0.5", "6,0.5,inf,0.5"])
def test_a_baseline_of_one_or_no_finite_number_is_refused(tmp_path, row):
    # F = 1 rescaled every F1 to -inf, unflagged; P = NaN or inf made every P 0,
    # flagged as undefined, as if the item were at fault rather than the file.
    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n" + "".join(f"{n},0.8,0.8,0.8\n" for n in range(6)) + row + "\n")
    assert read_baseline(path, 5).f1 == pytest.approx(0.8)
    with pytest.raises(ValueError, match=r"layer 6 to be finite numbers other than 1, got 6,"):
        read_baseline(path, 6)
