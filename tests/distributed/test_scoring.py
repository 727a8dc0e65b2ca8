"""score_dataset on a real local Ray cluster: equal to score_batch, nothing lost."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray

from opik_semantic_metrics import COMET, AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.cli.main import main
from opik_semantic_metrics.distributed import score_dataset, scoring_summary
from opik_semantic_metrics.distributed.blueprint import blueprint_of
from opik_semantic_metrics.distributed.scoring import BatchScorer

COMET_FIXTURE = Path(__file__).parents[1] / "fixtures" / "comet" / "regression-xlmr"
SCORES = ("bertscore_f1", "bertscore_precision", "bertscore_recall")
TOLERANCE = 1e-6
#: The title Ray gives the process of an actor running BatchScorer.
ACTOR_TITLE = "ray::MapWorker(MapBatches(BatchScorer))"

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.fixture(scope="module")
def bertscore() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


@pytest.fixture(scope="module")
def rows(stsb_pairs) -> list[dict]:
    """60 caption pairs and, among them, rows the metric cannot score (empty cells)."""
    rows = [
        {"id": i, "mt": first, "ref": second}
        for i, (first, second, _) in enumerate(stsb_pairs[:60])
    ]
    rows[7]["mt"] = None
    rows[31]["ref"] = None
    rows[44]["mt"] = None
    return rows


def _expected(metric, rows: list[dict]) -> dict[int, list[float] | str]:
    """Per id: the scores of score_batch over every good row in one call, or the message
    score_batch raises for the bad row alone."""
    good = [row for row in rows if row["mt"] is not None and row["ref"] is not None]
    results = metric.score_batch([row["mt"] for row in good], [row["ref"] for row in good])
    expected: dict[int, list[float] | str] = {
        row["id"]: [result.value for result in scores]
        for row, scores in zip(good, results, strict=True)
    }
    for row in rows:
        if row["id"] not in expected:
            with pytest.raises(Exception) as raised:
                metric.score_batch([row["mt"]], [row["ref"]])
            expected[row["id"]] = str(raised.value)
    return expected


def _check(scored_rows: list[dict], expected: dict, names=SCORES, error="bertscore_error"):
    ids = [row["id"] for row in scored_rows]
    assert sorted(ids) == sorted(expected), "every row exactly once"
    for row in scored_rows:
        want = expected[row["id"]]
        if isinstance(want, str):
            assert row[error] == want
            assert all(row[name] is None for name in names)
        else:
            assert row[error] is None
            for name, value in zip(names, want, strict=True):
                assert row[name] == pytest.approx(value, abs=TOLERANCE), (row["id"], name)


@pytest.mark.parametrize(
    ("num_actors", "batch_size", "blocks", "shuffled"),
    [(1, 16, 3, False), (2, 7, 11, True), (1, 1000, 1, False)],
)
def test_scores_equal_score_batch_whatever_actors_blocks_and_order(
    bertscore, rows, num_actors, batch_size, blocks, shuffled
):
    expected = _expected(bertscore, rows)
    data = list(rows)
    if shuffled:
        random.Random(0).shuffle(data)
    dataset = ray.data.from_items(data, override_num_blocks=blocks)
    scored = score_dataset(
        dataset,
        bertscore,
        columns={"output": "mt", "reference": "ref"},
        num_actors=num_actors,
        batch_size=batch_size,
    )
    result = scored.take_all()
    _check(result, expected)
    # Every input column is kept as it was.
    assert {row["id"]: (row["mt"], row["ref"]) for row in result} == {
        row["id"]: (row["mt"], row["ref"]) for row in rows
    }
    summary = scoring_summary(scored)
    assert (summary.rows, summary.failed_rows, summary.actors) == (60, 3, num_actors)
    assert summary.rows_per_second > 0


def test_idf_comes_from_the_whole_reference_column(stsb_pairs):
    pairs = stsb_pairs[:48]
    rows = [{"id": i, "output": a, "reference": b} for i, (a, b, _) in enumerate(pairs)]
    unfitted = BERTScore(model="all-MiniLM-L6-v2", idf=True, device="cpu", track=False)
    corpus = BERTScore(
        model="all-MiniLM-L6-v2",
        idf=True,
        idf_references=[b for _, b, _ in pairs],
        device="cpu",
        track=False,
    )
    expected = {
        row["id"]: [result.value for result in scores]
        for row, scores in zip(
            rows,
            corpus.score_batch([a for a, _, _ in pairs], [b for _, b, _ in pairs]),
            strict=True,
        )
    }
    # idf fitted on one block of 8 would give other scores: this test can tell them apart.
    block = BERTScore(
        model="all-MiniLM-L6-v2",
        idf=True,
        idf_references=[b for _, b, _ in pairs[:8]],
        device="cpu",
        track=False,
    )
    per_block = block.score_batch([a for a, _, _ in pairs[:8]], [b for _, b, _ in pairs[:8]])
    assert max(abs(per_block[i][0].value - expected[i][0]) for i in range(8)) > 1e-3

    dataset = ray.data.from_items(rows, override_num_blocks=6)
    scored = score_dataset(dataset, unfitted, num_actors=2, batch_size=8)
    _check(scored.take_all(), expected)
    assert unfitted.engine.idf_table is None  # the caller's metric is left as it was


def test_a_killed_actor_is_restarted_and_every_row_scored_once(bertscore, stsb_pairs, tmp_path):
    pairs = [(a, b) for a, b, _ in stsb_pairs] * 8
    rows = [{"id": i, "output": a, "reference": b} for i, (a, b) in enumerate(pairs)]
    marker = tmp_path / "first-block-scored"

    def mark(batch: pa.Table) -> pa.Table:
        # Runs on each scored block: the first one says that scoring is under way.
        marker.touch()
        return batch

    lazy = score_dataset(
        ray.data.from_items(rows, override_num_blocks=20),
        bertscore,
        num_actors=2,
        batch_size=16,
        materialize=False,
    ).map_batches(mark, batch_format="pyarrow", batch_size=None, num_cpus=0.1)
    outcome: dict[str, object] = {}
    runner = threading.Thread(target=lambda: outcome.update(rows=lazy.take_all()))
    runner.start()
    deadline = time.monotonic() + 300
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marker.exists(), "no block was scored within 5 minutes"
    actors = [
        process
        for process in psutil.process_iter(["cmdline"])
        if " ".join(process.info["cmdline"] or []).startswith(ACTOR_TITLE)
    ]
    assert actors, "no scoring actor process found"
    assert runner.is_alive(), "the run ended before an actor could be killed"
    victim = actors[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    runner.join(timeout=600)
    assert not runner.is_alive()
    scored = outcome["rows"]
    assert isinstance(scored, list)
    ids = sorted(row["id"] for row in scored)
    assert ids == list(range(len(rows))), "every row exactly once"
    assert all(row["bertscore_error"] is None for row in scored)
    some = sorted(scored, key=lambda row: row["id"])[:: len(rows) // 20]
    want = bertscore.score_batch(
        [row["output"] for row in some], [row["reference"] for row in some]
    )
    for row, results in zip(some, want, strict=True):
        assert row["bertscore_f1"] == pytest.approx(results[0].value, abs=TOLERANCE)


def test_command_line_scores_a_file_into_parquet(bertscore, rows, tmp_path):
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows[:20]), encoding="utf-8")
    out = tmp_path / "scored.parquet"
    status = main(
        [
            "score-dataset",
            str(source),
            "--metric",
            "bertscore",
            "--model",
            "all-MiniLM-L6-v2",
            "--columns",
            "output=mt,reference=ref",
            "--actors",
            "1",
            "--gpus-per-actor",
            "0",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    table = pq.read_table(out)
    # Issue 54, item 3: the scores name the model that made them.
    assert set(table.column_names) == {
        "id", "mt", "ref", *SCORES, "bertscore_error", "bertscore_model"
    }  # fmt: skip
    assert set(table.column("bertscore_model").to_pylist()) == {bertscore.engine.model_name}
    assert bertscore.engine.model_name == "sentence-transformers/all-MiniLM-L6-v2"
    _check(table.to_pylist(), _expected(bertscore, rows[:20]))


def test_command_line_writes_a_directory_and_says_its_summary_once(rows, tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows[:20]), encoding="utf-8")
    out = tmp_path / "scored"
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = True  # as in a terminal: the summary under Ray's bars
    try:
        status = main(
            ["score-dataset", str(source), "--metric", "semantic-match", "--columns",
             "output=mt,reference=ref", "--actors", "1", "--gpus-per-actor", "0",
             "--out", str(out)]
        )  # fmt: skip
    finally:
        context.enable_progress_bars = False
    assert status == 0
    captured = capsys.readouterr()
    # It was printed on stdout by the command and on stderr by score_dataset.
    assert (captured.out + captured.err).count("Scored 20 rows (1 failed)") == 1
    assert captured.out == f"Wrote {out}.\n"
    table = pq.read_table(out)
    assert table.num_rows == 20
    models = table.column("semantic_match_model").to_pylist()
    assert models == ["sentence-transformers/all-MiniLM-L6-v2"] * 20


def test_command_line_names_a_missing_column(tmp_path, capsys):
    source = tmp_path / "pairs.csv"
    source.write_text("mt,gold\nA cat.,A cat.\n", encoding="utf-8")
    status = main(["score-dataset", str(source), "--out", str(tmp_path / "out.parquet")])
    assert status == 2
    error = capsys.readouterr().err
    assert "No column for output, reference" in error and "mt, gold" in error


def test_comet_scores_equal_score_batch_and_reuse_embeddings_within_an_actor():
    metric = COMET(str(COMET_FIXTURE), device="cpu", track=False)
    sources = [f"Sentence {i} about the weather in Paris." for i in range(6)]
    references = [f"Satz {i} über das Wetter in Paris." for i in range(6)]
    systems = {
        "a": [f"Satz {i} zum Wetter in Paris." for i in range(6)],
        "b": [f"Der Satz {i} über Paris und das Wetter." for i in range(6)],
    }
    rows = [
        {"id": f"{name}{i}", "system": name, "src": sources[i], "mt": mt, "ref": references[i]}
        for name, outputs in systems.items()
        for i, mt in enumerate(outputs)
    ]
    want = metric.score_batch(
        [row["src"] for row in rows], [row["mt"] for row in rows], [row["ref"] for row in rows]
    )
    expected = {row["id"]: [result.value] for row, result in zip(rows, want, strict=True)}
    columns = {"input": "src", "output": "mt", "reference": "ref"}
    scored = score_dataset(rows, metric, columns=columns, num_actors=1, batch_size=6)
    _check(scored.take_all(), expected, names=("comet",), error="comet_error")

    # One actor's scorer, given system a's block then system b's: b's sources and
    # references come from the cache, only its translations are encoded.
    scorer = BatchScorer(blueprint_of(metric), columns, "cpu", threads=1)
    cache = scorer.metric.engine.cache
    fresh = [{**row, **{key: row[key] + " (new)" for key in ("src", "mt", "ref")}} for row in rows]
    misses, hits = cache.misses, cache.hits
    scorer(pa.Table.from_pylist(fresh[:6]))
    assert cache.misses - misses == 18  # 6 sources, 6 translations, 6 references
    misses, hits = cache.misses, cache.hits
    scorer(pa.Table.from_pylist(fresh[6:]))
    assert (cache.misses - misses, cache.hits - hits) == (6, 12)


def test_answer_match_rows_and_a_row_it_cannot_read():
    metric = AnswerMatch(semantic="keywords", track=False)
    rows = [
        {"id": 0, "output": "82.0", "reference": "82%", "answer_format": "Float"},
        {"id": 1, "output": "Scope 2 emissions", "reference": "scope 2", "answer_format": "Str"},
        {"id": 2, "output": "['C', 'B']", "reference": "['B', 'C']", "answer_format": "List"},
        {"id": 3, "output": "12", "reference": "13", "answer_format": "Banana"},
        {"id": 4, "output": "Not answerable", "reference": "Fail", "answer_format": None},
    ]
    expected: dict = {}
    for row in rows:
        arguments = {key: row[key] for key in ("output", "reference", "answer_format")}
        try:
            expected[row["id"]] = [metric.score(**arguments).value]
        except Exception as error:
            expected[row["id"]] = str(error)
    assert isinstance(expected[3], str)
    scored = score_dataset(rows, metric, num_actors=1, batch_size=2)
    _check(scored.take_all(), expected, names=("answer_match",), error="answer_match_error")


def test_answer_match_reads_a_list_column_of_acceptable_answers():
    # Ray Data hands a list column to the actors as NumPy arrays; any one answer matches.
    metric = AnswerMatch(track=False)
    rows = [
        {"id": 0, "output": "It was Rudolf Nureyev.", "answers": ["Nuriev", "Rudolf Nureyev"]},
        {"id": 1, "output": "It was Baryshnikov.", "answers": ["Nuriev", "Rudolf Nureyev"]},
        {"id": 2, "output": "Spiders have eight legs.", "answers": ["8"]},
    ]
    scored = score_dataset(
        rows, metric, columns={"acceptable_answers": "answers"}, num_actors=1, batch_size=2
    )
    _check(
        scored.take_all(),
        {0: [1.0], 1: [0.0], 2: [1.0]},
        names=("answer_match",),
        error="answer_match_error",
    )


def test_a_fitted_semantic_match_travels_with_its_fit(stsb_pairs):
    pairs = stsb_pairs[60:90]
    metric = SemanticMatch(device="cpu", track=False).fit([b for _, b, _ in pairs])
    rows = [{"id": i, "output": a, "reference": b} for i, (a, b, _) in enumerate(pairs)]
    want = metric.score_batch([a for a, _, _ in pairs], [b for _, b, _ in pairs])
    expected = {i: [result.value] for i, result in enumerate(want)}
    unfitted = SemanticMatch(device="cpu", track=False).score_batch(
        [a for a, _, _ in pairs], [b for _, b, _ in pairs]
    )
    # The fit changes the scores: a fit lost on the way would show.
    assert max(abs(u.value - expected[i][0]) for i, u in enumerate(unfitted)) > 1e-3
    scored = score_dataset(rows, metric, num_actors=1, batch_size=10)
    _check(scored.take_all(), expected, names=("semantic_match",), error="semantic_match_error")


def test_semantic_match_is_fitted_on_the_whole_reference_column(stsb_pairs):
    pairs = stsb_pairs[60:90]
    references = [b for _, b, _ in pairs]
    fitted = SemanticMatch(device="cpu", track=False).fit(references)
    want = fitted.score_batch([a for a, _, _ in pairs], references)
    expected = {i: [result.value] for i, result in enumerate(want)}
    # Fitted on one block of 5 the baseline and idf differ: this test can tell them apart.
    block = SemanticMatch(device="cpu", track=False).fit(references[:5])
    per_block = block.score_batch([a for a, _, _ in pairs[:5]], references[:5])
    assert max(abs(per_block[i].value - expected[i][0]) for i in range(5)) > 1e-3

    unfitted = SemanticMatch(device="cpu", track=False)
    rows = [{"id": i, "output": a, "reference": b} for i, (a, b, _) in enumerate(pairs)]
    dataset = ray.data.from_items(rows, override_num_blocks=6)
    scored = score_dataset(dataset, unfitted, num_actors=2, batch_size=5, fit_on_references=True)
    _check(scored.take_all(), expected, names=("semantic_match",), error="semantic_match_error")
    assert not unfitted.fitted_state().fitted  # the caller's metric is left as it was
    answer_match = AnswerMatch(track=False)
    with pytest.raises(ValueError, match="AnswerMatch fits nothing on references"):
        score_dataset(rows, answer_match, fit_on_references=True)
