"""BERTScoreEngine against bert_score itself, the oracle, on the packaged MiniLM.

bert_score runs one pair at a time (``bert_score_oracle.py`` says why).
Empty strings are left out here because bert_score 0.3.13 crashes on them under
transformers 5; ``test_empty_oracle.py`` covers them with values it produced under 4.x.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from bert_score import score as bert_score_score

from opik_semantic_metrics.bertscore.baseline import Baseline, write_baseline
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from tests.bert_score_oracle import bert_score_prf, minilm_prf, prf_table

TOLERANCE = 1e-5
LONG_TEXT = " ".join(f"word{i % 97} is here" for i in range(400))  # > 512 tokens
# Long enough (24 KB) that only a leading part is tokenized (models/long_texts.py).
VERY_LONG_TEXT = "\n".join([LONG_TEXT] * 4)

EDGE_PAIRS = [
    ("A cat sits on the mat.", "A cat sat on the mat."),
    ("OK", "Okay"),
    ("  leading and trailing spaces  ", "leading and trailing spaces"),
    ("multiple    spaces   inside", "multiple spaces inside"),
    ("the the the the the", "the"),
    ("Line one\nline two\ttabbed", "line one line two tabbed"),
    ("Café naïve façade résumé", "Cafe naive facade resume"),
    ("我喜欢在公园里散步", "I like walking in the park"),
    ("東京は日本の首都です", "東京は日本の首都である"),
    ("🐱🐶 pets are great 👍", "Pets are great."),
    ("😀😀😀", "A smiling face."),
    ("!!!", "Wow."),
    ("3.14159 is approximately pi", "pi is about 3.14"),
    ("Ünïcödé ßtraße", "Unicode street"),
    ("Привет, как дела?", "Hello, how are you?"),
    ("مرحبا بالعالم", "Hello world"),
    ("A DOG RUNS IN THE SNOW.", "a dog runs in the snow."),
    (LONG_TEXT, "A short reference about words."),
    ("A short candidate about words.", LONG_TEXT),
    (LONG_TEXT, LONG_TEXT + " with an extra tail"),
    (VERY_LONG_TEXT, "A short reference about words."),
    ("A short candidate about words.", VERY_LONG_TEXT + " with an extra tail"),
]


def _ours(engine: BERTScoreEngine, candidates: list[str], references: list) -> torch.Tensor:
    return prf_table(engine.score(candidates, references))


def _assert_close(ours: torch.Tensor, oracle: torch.Tensor) -> None:
    assert ours.shape == oracle.shape
    difference = (ours - oracle.double()).abs().nan_to_num(0.0)
    assert torch.equal(ours.isnan(), oracle.isnan())
    assert difference.max().item() <= TOLERANCE, difference.max().item()


@pytest.fixture(scope="module")
def single_pairs(stsb_pairs) -> tuple[list[str], list[str]]:
    candidates = [first for first, _second, _score in stsb_pairs]
    references = [second for _first, second, _score in stsb_pairs]
    # Unrelated pairs: each sentence against a far-away pair's other sentence.
    candidates += [stsb_pairs[i][0] for i in range(0, 250, 8)]
    references += [stsb_pairs[(i + 101) % 250][1] for i in range(0, 250, 8)]
    candidates += [candidate for candidate, _reference in EDGE_PAIRS]
    references += [reference for _candidate, reference in EDGE_PAIRS]
    return candidates, references


@pytest.fixture(scope="module")
def multi_pairs(stsb_pairs) -> tuple[list[str], list[list[str]]]:
    candidates, references = [], []
    for i in range(0, 60, 3):
        candidates.append(stsb_pairs[i][0])
        references.append(
            [stsb_pairs[i + 1][1], stsb_pairs[i][1], stsb_pairs[i + 2][1]][: 2 + i % 2]
        )
    return candidates, references


@pytest.fixture(scope="module")
def baseline_file(tmp_path_factory, stsb_pairs) -> Path:
    """A MiniLM baseline (bert_score ships none for it), computed on the fixture corpus."""
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    corpus = [text for first, second, _score in stsb_pairs for text in (first, second)]
    path = tmp_path_factory.mktemp("baseline") / "minilm.tsv"
    return write_baseline(path, engine.compute_baseline(corpus, seed=3))


def test_the_oracle_set_is_large_and_varied(single_pairs, multi_pairs):
    candidates, references = single_pairs
    assert len(candidates) + len(multi_pairs[0]) >= 300
    assert any(len(text.split()) > 512 for text in candidates + references)


@pytest.mark.slow
@pytest.mark.parametrize("idf", [False, True], ids=["no-idf", "idf"])
@pytest.mark.parametrize("rescale", [False, True], ids=["raw", "rescaled"])
def test_single_reference_equals_bert_score(minilm_path, single_pairs, baseline_file, idf, rescale):
    candidates, references = single_pairs
    rescale_options = {"rescale_with_baseline": True, "baseline_path": str(baseline_file)}
    oracle = minilm_prf(
        minilm_path,
        candidates,
        references,
        idf=idf,
        lang="en",
        **(rescale_options if rescale else {}),
    )
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", idf=idf, **(rescale_options if rescale else {})
    )
    if idf:
        engine.fit_idf(references)
    _assert_close(_ours(engine, candidates, references), oracle)


@pytest.mark.slow
@pytest.mark.parametrize("idf", [False, True], ids=["no-idf", "idf"])
def test_multi_reference_equals_bert_score(minilm_path, multi_pairs, baseline_file, idf):
    candidates, references = multi_pairs
    oracle = minilm_prf(
        minilm_path,
        candidates,
        references,
        idf=idf,
        lang="en",
        rescale_with_baseline=True,
        baseline_path=str(baseline_file),
    )
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", idf=idf, baseline_path=baseline_file,
        rescale_with_baseline=True,
    )  # fmt: skip
    if idf:
        engine.fit_idf(references)
    _assert_close(_ours(engine, candidates, references), oracle)


def test_a_baseline_over_one_rescales_the_best_reference_as_bert_score(
    minilm_path, multi_pairs, tmp_path
):
    """bert_score takes the max over references first, then rescales. With a baseline value
    of 1 or more the rescaling reverses the order of scores, so the other order differs."""
    candidates, references = multi_pairs
    path = write_baseline(tmp_path / "over_one.tsv", [Baseline(1.5, 1.2, 2.0)] * 7)
    oracle = minilm_prf(
        minilm_path,
        candidates,
        references,
        lang="en",
        rescale_with_baseline=True,
        baseline_path=str(path),
    )
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", rescale_with_baseline=True, baseline_path=path
    )
    _assert_close(_ours(engine, candidates, references), oracle)


def test_bert_score_batching_is_wrong_and_ours_is_not(minilm_path, single_pairs):
    """The defect we avoid: bert_score's whole-list call differs from its own 1-pair value."""
    candidates, references = single_pairs
    candidates, references = candidates[:200], references[:200]
    options = {"model_type": str(minilm_path), "num_layers": 6}
    one_at_a_time = bert_score_prf(candidates, references, **options)
    precision, recall, f1 = bert_score_score(candidates, references, batch_size=64, **options)
    whole_list = torch.stack((precision, recall, f1), dim=1)
    assert (whole_list - one_at_a_time).abs().max().item() > 1e-4

    for batch_size in (1, 7, 64):
        engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", batch_size=batch_size)
        _assert_close(_ours(engine, candidates, references), one_at_a_time)


def test_multi_reference_is_the_max_per_column_of_single_references(multi_pairs):
    candidates, references = multi_pairs
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    grouped = _ours(engine, candidates, references)
    for column in range(3):
        best_single = (
            torch.stack(
                [
                    _ours(
                        engine,
                        candidates,
                        [group[k] if k < len(group) else group[0] for group in references],
                    )[:, column]
                    for k in range(3)
                ]
            )
            .max(dim=0)
            .values
        )
        assert torch.allclose(grouped[:, column], best_single, atol=1e-7)


def test_hash_has_bert_scores_format(minilm_path, baseline_file):
    from bert_score.utils import get_hash

    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", idf=True, rescale_with_baseline=True,
        baseline_path=baseline_file,
    )  # fmt: skip
    assert engine.hash == get_hash(engine.model_name, 6, True, True, True, False)
    plain = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    assert plain.hash == get_hash(plain.model_name, 6, False, False, False, False)
    _assert_close(_ours(plain, ["a"], ["b"]), minilm_prf(minilm_path, ["a"], ["b"]))


def test_the_documented_example_shows_bert_scores_value(minilm_path):
    # The docstring examples of BERTScoreEngine and BERTScore and the README's quick look
    # print 0.9387 for this pair: the value must be bert_score's, not only ours.
    oracle = minilm_prf(minilm_path, ["A cat sits on the mat."], ["A cat sat on the mat."])
    assert round(oracle[0, 2].item(), 4) == 0.9387
