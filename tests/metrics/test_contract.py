"""The four metrics' shared contract (``contract.py``), each with its own items and oracle."""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import math
import os
from pathlib import Path
from typing import Any

import opik
import pytest
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import COMET, AnswerMatch, BERTScore, SemanticMatch
from tests.metrics.contract import MetricContract, Reading, dataset_items

COMET_FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"

#: Text that is no text: an unpaired surrogate (decoded with errors="surrogateescape"),
#: which no tokenizer reads.
_TEXT_ITEMS_BAD = [
    ({"output": None, "reference": "ref"}, "the candidate to be a string, got NoneType"),
    ({"output": 42, "reference": "ref"}, "got int"),
    ({"output": 3.5, "reference": "ref"}, "got float"),
    ({"output": ["a", "b"], "reference": "ref"}, "got list"),
    ({"output": "out", "reference": None}, "the reference to be a string or a non-empty list"),
    ({"output": "out", "reference": []}, "non-empty list of strings"),
    ({"output": "out", "reference": ["fine", None]}, "only strings, found NoneType"),
    ({"output": "a \udcff b", "reference": "ref"}, "the candidate to be valid Unicode text"),
    ({"output": "out", "reference": ["fine", "\ud800"]}, "the reference to be valid Unicode text"),
]


def _pairs(stsb_pairs: list[tuple[str, str, float]], start: int, stop: int) -> list[dict[str, Any]]:
    return [{"output": first, "reference": second} for first, second, _ in stsb_pairs[start:stop]]


def _text_pair_contract(
    metric: BERTScore | SemanticMatch, items: list[dict[str, Any]], **own: Any
) -> MetricContract:
    """The contract of a metric of an output against a reference text (or texts)."""
    return MetricContract(
        name=type(metric).__name__,
        metric=metric,
        items=items,
        expected=None,
        tolerance=1e-6,
        batch_fields=("output", "reference"),
        dataset_items=dataset_items(items, None),
        failing_id=len(items),
        failure_message="the candidate to be a string, got NoneType",
        **own,
    )


def _bertscore(stsb_pairs) -> MetricContract:
    return _text_pair_contract(
        BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False),
        _pairs(stsb_pairs, 0, 40),
        bad_items=[*_TEXT_ITEMS_BAD, ({"output": "out", "reference": 7}, "non-empty list")],
        bad_batches=[
            ((None, None), "`candidates` to be a list, got NoneType"),
            ((5, ["a"]), "`candidates` to be a list, got int"),
            (((text for text in ["a"]), ["a"]), "`candidates` to be a list, got generator"),
            (({"a", "b"}, ["a", "b"]), "`candidates` to be a list, got set"),
            ((["a"], "a"), "`references` to be a list, got str"),
            ((["a", "b"], ["a"]), "as many references as candidates"),
        ],
        rebuild=lambda **settings: BERTScore(model="all-MiniLM-L6-v2", device="cpu", **settings),
        min_distinct=30,
    )


def _comet() -> MetricContract:
    metric = COMET(str(COMET_FIXTURES / "regression-xlmr"), device="cpu", track=False)
    segments = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))[:20]
    oracle = json.loads((COMET_FIXTURES / "oracle.json").read_text(encoding="utf-8"))
    scores = oracle["models"]["regression-xlmr"]["with_reference"]["scores"][:20]
    items = [{"input": s["src"], "output": s["mt"], "reference": s["ref"]} for s in segments]
    text = {"input": "A text.", "output": "Ein Text.", "reference": "Text."}
    return MetricContract(
        name="COMET",
        metric=metric,
        items=items,
        # unbabel-comet's own scores of the tiny model (scripts/comet_oracle.py).
        expected=[{"comet": score} for score in scores],
        tolerance=1e-5,
        bad_items=[
            ({**text, "input": None}, "the source to be a string"),
            ({**text, "input": 12}, "got int"),
            ({**text, "input": ["A"]}, "got list"),
            ({**text, "output": None}, "the translation"),
            ({**text, "output": 3.5}, "got float"),
            ({**text, "output": {"text": "x"}}, "got dict"),
            ({**text, "reference": None}, "needs a reference"),
            ({**text, "reference": ["a", "b"]}, "got list"),
            ({**text, "input": "A \udcff."}, "the source to be valid"),
            ({**text, "output": "Ein \ud800"}, "the translation to be"),
            ({**text, "reference": "\udcff"}, "the reference to be"),
        ],
        bad_batches=[((["a"], ["b"]), "needs a reference")],
        batch_fields=("input", "output", "reference"),
        rebuild=lambda **settings: COMET(str(COMET_FIXTURES / "regression-xlmr"), **settings),
        dataset_items=dataset_items(items, None),
        failing_id=len(items),
        failure_message="the translation",
        min_distinct=15,
    )
    return contract


def _semantic_match(stsb_pairs) -> MetricContract:
    metric = SemanticMatch(device="cpu", track=False)
    metric.fit([reference for _, reference, _ in stsb_pairs])
    return _text_pair_contract(
        metric,
        _pairs(stsb_pairs, 100, 124),
        bad_items=[
            *_TEXT_ITEMS_BAD,
            ({"output": {"text": "a"}, "reference": "ref"}, "got dict"),
            ({"output": "out", "reference": 7}, "got int"),
        ],
        bad_batches=[
            ((["a", "b"], ["a"]), "as many references"),
            ((["a", None], ["a", "b"]), "candidate 1"),
        ],
        rebuild=lambda **settings: SemanticMatch(device="cpu", **settings),
        min_distinct=16,
    )


def _answer_match() -> MetricContract:
    items = [
        {"output": "82.0", "reference": "82%", "answer_format": "Float"},
        {"output": '["SSP1", "SSP2"]', "reference": "['SSP1', 'SSP2']", "answer_format": "List"},
        {"output": "['C', 'B', 'A']", "reference": "['A', 'B', 'C']", "answer_format": "List",
         "input": "Rank the three largest emitters."},
        {"output": "Fail to answer", "reference": None, "answer_format": "None"},
        {"output": None, "reference": "12.8", "answer_format": "Float"},
    ]  # fmt: skip
    # Written out by hand: what each tier decides for these answers.
    decided = [(1.0, "numeric"), (1.0, "list"), (0.0, "no_match"), (1.0, "not_answerable")]
    decided.append((0.0, "no_match"))
    return MetricContract(
        name="AnswerMatch",
        metric=AnswerMatch(track=False),
        items=items,
        expected=[
            {"answer_match": value, "answer_match.method": method} for value, method in decided
        ],
        tolerance=0.0,
        bad_items=[
            (
                {"output": {"answer": "82%"}, "reference": "82%"},
                "AnswerMatch: Expected the output to be .* got dict",
            ),
            ({"output": "82%", "reference": {1, 2}}, "reference .* got set"),
            ({"output": "82%", "reference": math.inf}, "got the number inf"),
            ({"output": "82%", "reference": "82%", "answer_format": "percent"}, "answer_format"),
            ({"output": [[[[["x"]]]]], "reference": "x"}, "nested deeper"),
            (
                {"output": "caf\udce9", "reference": "café"},
                "the output to be valid Unicode text, found the unpaired",
            ),
            (
                {"output": "café", "reference": "caf\udce9"},
                "the reference to be valid Unicode text",
            ),
        ],
        bad_batches=[],
        batch_fields=None,
        rebuild=lambda **settings: AnswerMatch(**settings),
        dataset_items=dataset_items(
            items, {"not": "an answer"}, {"reference": "answer", "input": "question"}
        ),
        scoring_key_mapping={"reference": "answer", "input": "question"},
        failing_id=len(items),
        failure_message="got dict",
        read_method=True,
    )


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported_once() -> None:
    """Import litellm in one thread before Opik's engine runs: Opik imports it from its
    worker threads on the first metric error, and concurrent first imports can deadlock."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    importlib.import_module("litellm")


@pytest.fixture(scope="module", params=["BERTScore", "COMET", "SemanticMatch", "AnswerMatch"])
def contract(request, stsb_pairs) -> MetricContract:
    builders = {
        "BERTScore": lambda: _bertscore(stsb_pairs),
        "COMET": _comet,
        "SemanticMatch": lambda: _semantic_match(stsb_pairs),
        "AnswerMatch": _answer_match,
    }
    return builders[request.param]()


@pytest.fixture(scope="module")
def sequential(contract) -> list[Reading]:
    """Each item scored alone, one call after another: what every other way must give."""
    return [contract.score(item) for item in contract.items]


def _assert_same(got: list[Reading], expected: list[Reading], tolerance: float) -> None:
    assert len(got) == len(expected)
    for got_reading, expected_reading in zip(got, expected, strict=True):
        assert got_reading.keys() == expected_reading.keys()
        for key, value in expected_reading.items():
            if isinstance(value, str):
                assert got_reading[key] == value, key
            else:
                assert got_reading[key] == pytest.approx(value, abs=tolerance), key


def test_scores_are_the_oracles_and_real(contract, sequential):
    if contract.expected is not None:
        _assert_same(sequential, contract.expected, contract.tolerance)
    distinct = {tuple(sorted(reading.items())) for reading in sequential}
    assert len(distinct) >= contract.min_distinct  # real, varied scores


def test_bad_input_fails_the_item_with_a_named_error(contract):
    for item, message in contract.bad_items:
        with pytest.raises(MetricComputationError, match=message) as raised:
            contract.metric.score(**item)
        assert str(raised.value).startswith(f"{contract.name}: ")


def test_bad_batches_fail_the_call_with_a_named_error(contract):
    if not hasattr(contract.metric, "score_batch"):
        assert not contract.bad_batches
        pytest.skip(f"{contract.name} has no score_batch")
    for arguments, message in contract.bad_batches:
        with pytest.raises(MetricComputationError, match=message):
            contract.metric.score_batch(*arguments)


def test_a_setting_of_the_wrong_type_fails_the_build(contract):
    # Opik's BaseMetric reads any true value as on: "False" tracked every call.
    with pytest.raises(ValueError, match="`track` to be True or False, got 'False'"):
        contract.rebuild(track="False")


def test_sixteen_threads_give_the_sequential_scores(contract, sequential):
    calls = list(range(len(contract.items))) * max(1, -(-32 // len(contract.items)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        threaded = list(pool.map(lambda index: contract.score(contract.items[index]), calls))
    _assert_same(threaded, [sequential[index] for index in calls], contract.tolerance)


def test_score_batch_gives_the_sequential_scores(contract, sequential):
    if contract.batch_fields is None:
        pytest.skip(f"{contract.name} has no score_batch")
    batched = contract.score_batch()
    _assert_same(batched, sequential, contract.tolerance)
    if contract.expected is not None:
        _assert_same(batched, contract.expected, contract.tolerance)


def test_opiks_engine_gives_the_sequential_scores_and_fails_only_the_bad_item(contract, sequential):
    result = opik.evaluate_on_dict_items(
        items=contract.dataset_items,
        task=lambda item: {"output": item["prediction"]},
        scoring_metrics=[contract.metric],
        scoring_key_mapping=dict(contract.scoring_key_mapping) or None,
        scoring_threads=16,
    )
    by_id = {tr.test_case.dataset_item_content["id_"]: tr for tr in result.test_results}
    assert len(by_id) == len(contract.items) + 1
    got = [contract.read(by_id[index].score_results) for index in range(len(contract.items))]
    _assert_same(got, sequential, contract.tolerance)
    if contract.expected is not None:
        _assert_same(got, contract.expected, contract.tolerance)
    failed = by_id[contract.failing_id].score_results
    assert failed and all(score.scoring_failed for score in failed)
    assert all(contract.failure_message in score.reason for score in failed)
