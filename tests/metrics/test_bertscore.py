"""The Opik BERTScore metric: results, metadata, bad input, and Opik's own engine."""

from __future__ import annotations

import importlib.metadata
import math
import re

import numpy as np
import pytest
import torch
from bert_score import BERTScorer
from opik.evaluation.metrics.score_result import ScoreResult
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import AnswerMatch, BERTScore
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.errors import InputError, ModelUnavailableError
from tests.bert_score_oracle import minilm_prf


@pytest.fixture(scope="module")
def metric() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


def test_score_returns_f1_precision_recall_equal_to_the_engine(metric):
    f1, precision, recall = metric.score(
        output="A man is playing a guitar.", reference="A man plays the guitar."
    )
    [expected] = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu").score(
        ["A man is playing a guitar."], ["A man plays the guitar."]
    )
    assert [r.name for r in (f1, precision, recall)] == [
        "bertscore_f1",
        "bertscore_precision",
        "bertscore_recall",
    ]
    assert (f1.value, precision.value, recall.value) == (
        expected.f1,
        expected.precision,
        expected.recall,
    )
    assert all(isinstance(r, ScoreResult) and not r.scoring_failed for r in (f1, precision, recall))
    assert 0.8 < f1.value < 1.0


def test_metadata_and_reason_explain_the_score(metric, minilm_path):
    candidate, reference = "A cat sits on the mat.", "A cat sat on the mat."
    f1, _, _ = metric.score(output=candidate, reference=reference)
    meta = f1.metadata
    assert meta["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["layer"] == 6
    assert meta["idf"] is False and meta["rescaled"] is False
    assert meta["hash"].startswith("sentence-transformers/all-MiniLM-L6-v2_L6_no-idf_version=")
    # The reference release the score reproduces: the one the oracle tests run against.
    assert meta["bert_score_version"] == importlib.metadata.version("bert-score")
    assert meta["dtype"] == "float32"
    assert meta["candidate_truncated"] is False and meta["reference_truncated"] is False
    # The best and weakest matches are the extremes of the candidate tokens' best
    # similarities, read from the matrix greedy matching works on ([CLS]/[SEP] left out).
    cand_tokens, ref_tokens, matrix = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu"
    ).token_similarity(candidate, reference)
    row_best, row_argmax = matrix[1:-1].max(dim=1)
    best, worst = int(row_best.argmax()), int(row_best.argmin())
    assert meta["best_match"] == {
        "candidate_token": cand_tokens[1 + best],
        "reference_token": ref_tokens[int(row_argmax[best])],
        "similarity": pytest.approx(float(row_best[best]), abs=1e-6),
    }
    assert meta["best_match"]["candidate_token"] == meta["best_match"]["reference_token"]
    assert meta["worst_match"] == {
        "candidate_token": "sits",
        "reference_token": "sat",
        "similarity": pytest.approx(float(row_best[worst]), abs=1e-6),
    }
    bert_score_f1 = minilm_prf(minilm_path, [candidate], [reference])[0, 2].item()
    assert f"BERTScore F1 {bert_score_f1:.3f}" in f1.reason
    assert f"weakest 'sits'->'sat' {float(row_best[worst]):.2f}" in f1.reason


def test_names_follow_the_metric_name():
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", name="caption_bs", track=False)
    assert [r.name for r in metric.score(output="a", reference="b")] == [
        "caption_bs_f1",
        "caption_bs_precision",
        "caption_bs_recall",
    ]


def test_multi_reference_takes_the_best(metric):
    [single] = [metric.score(output="A dog runs.", reference="A dog is running.")[0].value]
    f1, _, _ = metric.score(
        output="A dog runs.", reference=["Stocks fell on Monday.", "A dog is running."]
    )
    assert f1.value == pytest.approx(single, abs=1e-7)
    assert f1.metadata["best_reference"] == 1


def test_multi_reference_explains_the_reference_with_the_best_f1(metric):
    # Each reference is best on one score alone (MiniLM: P, R, F1 of the output against it
    # in the comments), so choosing by P or R would name another reference. P, R and F1
    # are each the maximum over the references (bert_score's rule), so here they come from
    # three different references.
    output = "A dog runs in the park."
    references = [
        "A dog runs in the park with a ball.",  # 0.947 0.838 0.889: best P
        "Dog runs park.",  # 0.826 0.949 0.884: best R
        "A puppy runs in the park.",  # 0.901 0.901 0.901: best F1
    ]
    singles = [metric.score(output=output, reference=reference) for reference in references]
    f1, precision, recall = metric.score(output=output, reference=references)
    assert f1.metadata["best_reference"] == 2
    # Batched with other texts, scores differ from the single ones by float rounding.
    assert f1.value == pytest.approx(singles[2][0].value, abs=1e-6)
    assert precision.value == pytest.approx(singles[0][1].value, abs=1e-6)
    assert recall.value == pytest.approx(singles[1][2].value, abs=1e-6)
    # The best and weakest token matches are those against the chosen reference.
    for key in ("best_match", "worst_match"):
        chosen = singles[2][0].metadata[key]
        assert f1.metadata[key] == {**chosen, "similarity": pytest.approx(chosen["similarity"])}
    assert f1.metadata["worst_match"]["reference_token"] == "puppy"


def test_an_empty_reference_tied_at_f1_zero_is_not_the_one_explained(metric):
    # MiniLM reads this Amharic output as [UNK] only; against "The cat." its P and R have
    # opposite signs, so its F1 is 0, as is an empty reference's. The tie went to the
    # first reference: with the empty one first, the reason said "the raw scores are 0"
    # beside R 0.030, and the metadata changed with the order of the references.
    output = " ".join(["ሰላም", "ዓለም", "እንዴት", "ነህ", "ጤና", "ይስጥልኝ"] * 20)
    alone, _, alone_recall = metric.score(output=output, reference="The cat.")
    assert alone.metadata["opposite_signs"] is True
    for references, place in ((["", "The cat."], 1), (["The cat.", ""], 0)):
        f1, _, recall = metric.score(output=output, reference=references)
        assert (f1.value, recall.value) == (0.0, pytest.approx(alone_recall.value, abs=1e-6))
        assert f1.metadata["best_reference"] == place
        assert f1.metadata["reference_empty"] is False and f1.metadata["opposite_signs"] is True
        assert "is empty" not in f1.reason and "opposite signs" in f1.reason


def test_multi_reference_flags_a_cut_reference_even_when_another_is_chosen(metric):
    # reference_truncated says that at least one of the references was cut (the engine's
    # BERTScoreResult documents it so): P, R and F1 can each come from a different
    # reference, so a cut one may have given a score. Here the long reference is neither
    # the first nor the chosen one.
    output = "A dog runs."
    long_reference = "word " * 700
    f1, _, _ = metric.score(output=output, reference=["A dog is running.", long_reference])
    assert f1.metadata["best_reference"] == 0
    assert f1.metadata["reference_truncated"] is True
    assert f1.metadata["candidate_truncated"] is False
    assert "reference cut to 512 tokens" in f1.reason
    # The same references without the long one: nothing is flagged.
    short, _, _ = metric.score(output=output, reference=["A dog is running.", "Word, word."])
    assert short.metadata["reference_truncated"] is False
    assert "cut to" not in short.reason


def test_f1_is_zero_where_precision_and_recall_have_opposite_signs(metric, minilm_path):
    # MiniLM reads every Amharic word as [UNK]; against a two-token reference, P and R come
    # out tiny and of opposite signs, and bert_score's 2PR / (P + R) leaves [-1, 1].
    output, reference = "ሰላም " * 116, "The cat."
    theirs = minilm_prf(minilm_path, [output], [reference])[0]
    assert theirs[0].item() * theirs[1].item() < 0 and abs(theirs[2].item()) > 1
    f1, precision, recall = metric.score(output=output, reference=reference)
    assert precision.value == pytest.approx(theirs[0].item(), abs=1e-5)
    assert recall.value == pytest.approx(theirs[1].item(), abs=1e-5)
    assert f1.value == 0.0
    assert f1.metadata["opposite_signs"] is True
    assert "P and R have opposite signs, so the raw F1 is 0" in f1.reason
    # The same in a batch beside ordinary pairs, and not flagged for those.
    batch = metric.score_batch([output, "A cat."], [reference, "A cat sat."])
    assert batch[0][0].value == 0.0
    assert [results[0].metadata["opposite_signs"] for results in batch] == [True, False]
    # AnswerMatch's semantic tier no longer takes the unbounded F1 for a match.
    matched = AnswerMatch(semantic=metric, track=False).score(
        output=output, reference=reference, answer_format="Str"
    )
    assert matched.value == 0.0


def test_long_texts_are_cut_and_flagged(metric):
    long_text = "word " * 700
    f1, _, _ = metric.score(output=long_text, reference="A short reference.")
    assert f1.metadata["candidate_truncated"] is True
    assert f1.metadata["reference_truncated"] is False
    assert "output cut to 512 tokens" in f1.reason


@pytest.mark.parametrize("output", ["", "   ", "\n\t"])
def test_empty_output_scores_zero_with_a_reason(metric, output):
    results = metric.score(output=output, reference="A real reference.")
    assert [r.value for r in results] == [0.0, 0.0, 0.0]
    assert results[0].metadata["candidate_empty"] is True
    assert "output is empty" in results[0].reason


def test_empty_reference_scores_zero(metric):
    results = metric.score(output="Something.", reference=" ")
    assert [r.value for r in results] == [0.0, 0.0, 0.0]
    assert results[0].metadata["reference_empty"] is True


@pytest.mark.parametrize(
    ("references", "message"),
    [
        ("A dog runs.", "`references` to be a list, got str"),
        (None, "`references` to be a list, got NoneType"),
        ([], "at least one reference in `references`"),
        ([1], "the reference of `references` to be a string or a non-empty list of strings"),
        (["a", None], "reference 1 of `references` to be a string or a non-empty list of"),
        ([["a", 2]], "the reference of `references` to hold only strings, found int"),
    ],
)
def test_bad_idf_corpus_raises_metric_computation_error(references, message):
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    with pytest.raises(MetricComputationError, match=message):
        metric.fit_idf(references)


def test_idf_needs_fitting_and_then_works(stsb_pairs, minilm_path):
    references = [second for _, second, _ in stsb_pairs]
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    with pytest.raises(MetricComputationError, match="fit_idf"):
        metric.score(output="A dog.", reference="A dog runs.")
    metric.fit_idf(references)
    f1, precision, recall = metric.score(output="A dog runs.", reference="A dog is running.")
    assert f1.metadata["idf"] is True and "_idf_" in f1.metadata["hash"]
    # bert_score with its idf weights taken from the same references.
    oracle = BERTScorer(
        model_type=str(minilm_path), num_layers=6, batch_size=1, nthreads=0, idf=True,
        idf_sents=references,
    ).score(["A dog runs."], ["A dog is running."])  # fmt: skip
    assert [precision.value, recall.value, f1.value] == pytest.approx(
        [float(column) for column in oracle], abs=1e-5
    )


def test_an_output_of_special_tokens_only_has_undefined_precision_without_idf(metric):
    # bert_score weighs [CLS] and [SEP] 0 with idf off too: P of "[SEP]" is 0/0 there.
    f1, precision, _recall = metric.score(output="[SEP]", reference="a cat")
    assert (f1.value, precision.value, f1.metadata["undefined"]) == (0.0, 0.0, ["precision"])
    assert "precision undefined (every token weighs 0), reported as 0" in f1.reason


def test_undefined_idf_precision_is_reported_as_zero():
    # Fitted on one reference, every token of it weighs 0: bert_score's P and R are NaN.
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    metric.fit_idf(["a dog runs"])
    f1, precision, recall = metric.score(output="a dog runs", reference="a dog runs")
    assert precision.value == 0.0 and recall.value == 0.0 and f1.value == 0.0
    assert set(f1.metadata["undefined"]) == {"precision", "recall"}
    assert not math.isnan(f1.value)


def test_rescaling_uses_bert_scores_packaged_baseline_when_there_is_one(tmp_path):
    with pytest.raises(ValueError, match="No baseline"):
        BERTScore(model="all-MiniLM-L6-v2", lang="en", rescale_with_baseline=True, track=False)
    with pytest.raises(ValueError, match="lang"):
        BERTScore(model="all-MiniLM-L6-v2", rescale_with_baseline=True, track=False)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"dtype": "int8"}, "dtype"),
        ({"micro_batch_size": 0}, "`micro_batch_size` to be a positive integer, got 0"),
        # Accepted before, each failed every score() later with a TypeError.
        ({"micro_batch_size": 2.5}, "`micro_batch_size` to be a positive integer, got 2.5"),
        ({"batch_size": 2.5}, "`batch_size` to be a positive integer, got 2.5"),
        ({"batch_size": True}, "`batch_size` to be a positive integer, got True"),
        (
            {"num_layers": 2.0},
            "`num_layers` to be an integer between 0 and 6 for "
            "'sentence-transformers/all-MiniLM-L6-v2', got 2.0",
        ),
        # A string is true: "False" switched idf on, then failed every item ("not
        # fitted"), and switched a rescaling on that moved F1 from 0.84 to 0.69.
        ({"idf": "False"}, "`idf` to be True or False, got 'False'"),
        (
            {"rescale_with_baseline": "False", "baseline_path": "baseline.tsv"},
            "`rescale_with_baseline` to be True or False, got 'False'",
        ),
        ({"idf_references": ["A cat."]}, "`idf_references` are used only with `idf=True`"),
        (
            {"idf": True, "idf_references": ["A cat.", None]},
            "reference 1 of `idf_references` to be a string",
        ),
        ({"lang": 1, "rescale_with_baseline": True}, "`lang` to be a language code"),
        ({"device": "meta"}, "`device` to be 'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu'"),
        ({"dtype": torch.float8_e4m3fn}, "`dtype` to be 'fast'"),
        ({"baseline_path": "baseline.tsv"}, "only with `rescale_with_baseline=True`"),
        (
            {"baseline_path": "missing.tsv", "rescale_with_baseline": True},
            "Cannot read `baseline_path`: Baseline file not found: missing.tsv",
        ),
    ],
)
def test_bad_settings_fail_when_the_metric_is_made(settings, message):
    # Not on every item of an experiment, where each failure would be a traceback.
    with pytest.raises(ValueError, match=re.escape(message)):
        BERTScore(**{"model": "all-MiniLM-L6-v2", "device": "cpu", "track": False, **settings})


def test_numpy_integers_and_bools_are_settings_like_pythons(stsb_pairs):
    # A sweep over np.arange(...) layers: refused before, as "`layer` ..., got 3".
    outputs, references = [p[0] for p in stsb_pairs[:8]], [p[1] for p in stsb_pairs[:8]]
    settings = {"num_layers": 3, "batch_size": 4, "micro_batch_size": 8, "idf": True}
    numpy_settings = {
        "num_layers": np.int64(3),
        "batch_size": np.int32(4),
        "micro_batch_size": np.uint8(8),
        "idf": np.True_,
    }
    python, numpy_made = (
        BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False, **options)
        for options in (settings, numpy_settings)
    )
    for metric in (python, numpy_made):
        metric.fit_idf(references)
    assert type(numpy_made.engine.num_layers) is int and numpy_made.engine.idf is True
    assert [r.f1 for r in numpy_made.engine.score(outputs, references)] == [
        r.f1 for r in python.engine.score(outputs, references)
    ]


def test_the_model_may_be_a_path_and_nothing_else_but_a_string(minilm_path, tmp_path):
    [f1, *_] = BERTScore(model=minilm_path, device="cpu", track=False).score(
        output="A cat.", reference="A cat sat."
    )
    assert f1.metadata["model"] == str(minilm_path)
    # Not an AttributeError ('PosixPath' object has no attribute 'startswith').
    with pytest.raises(ModelUnavailableError, match="there is no directory"):
        BERTScore(model=tmp_path / "missing", device="cpu", track=False)
    for bad in (123, b"all-MiniLM-L6-v2"):
        with pytest.raises(ValueError, match="Expected `model` to be a Hub id or a directory"):
            BERTScore(model=bad, device="cpu", track=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("layer", [-1, 7])
def test_a_layer_the_model_does_not_have_fails_when_the_metric_is_made(layer):
    # Not on every item of an experiment: checked from the configuration, before loading.
    with pytest.raises(ValueError, match=f"between 0 and 6 .*got {layer}"):
        BERTScore(model="all-MiniLM-L6-v2", num_layers=layer, device="cpu", track=False)


def test_a_model_that_cannot_be_loaded_fails_when_the_metric_is_made(
    tmp_path, minilm_path, monkeypatch
):
    # Its configuration reads, its weights are missing: every item of an experiment
    # used to fail on its own retried load (37 load attempts for 32 items).
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        if (minilm_path / name).exists():
            (tmp_path / name).write_bytes((minilm_path / name).read_bytes())
    # The directory is there: the message gives the loader's reason, not "no directory"
    # nor (for a relative spelling such as "models/x") the Hub's.
    with pytest.raises(ModelUnavailableError, match="could not be loaded from the directory"):
        BERTScore(model=str(tmp_path), device="cpu", track=False)
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(ModelUnavailableError, match="could not be loaded from the directory"):
        BERTScore(model=tmp_path.name, device="cpu", track=False)


def test_unfitted_idf_fails_each_item_before_any_forward_pass(monkeypatch):
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    passes = []
    forward = metric.engine.loaded.forward
    monkeypatch.setattr(
        metric.engine.loaded, "forward", lambda *a, **k: passes.append(1) or forward(*a, **k)
    )
    with pytest.raises(MetricComputationError, match="fit_idf"):
        metric.score(output="A dog.", reference="A dog runs.")
    with pytest.raises(InputError, match="fit_idf"):
        metric.engine.score(["A dog."], ["A dog runs."])
    assert passes == []
