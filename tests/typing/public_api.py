"""Calls a user makes, as their type checker sees them: mypy checks this file in CI.

Nothing here runs (pytest only imports it). mypy fails if the package's annotations
reject one of these calls or return other than what a user assigns the result to: per-item
scores handed over as NumPy arrays, for one, were refused before the statistics took them.
"""

from __future__ import annotations

import numpy as np
import opik
from opik.evaluation.metrics import score_result

from opik_semantic_metrics import COMET, AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.answers.report import markdown_report
from opik_semantic_metrics.compare.correlation import Correlation, summary_level, system_level
from opik_semantic_metrics.compare.stats import (
    Comparison,
    Interval,
    bootstrap_interval,
    compare_systems,
)


def bertscore_calls() -> float:
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True)
    metric.fit_idf(["A cat sat on the mat.", ["A dog.", "A puppy."]])
    f1, precision, recall = metric.score(
        output="A cat sits on the mat.", reference=("A cat sat on the mat.", "A cat.")
    )
    rows: list[list[score_result.ScoreResult]] = metric.score_batch(
        ["A cat.", "A dog."], [["A kitten.", "A cat."], "A puppy."]
    )
    return f1.value + precision.value + recall.value + rows[0][0].value


def semantic_match_calls(path: str) -> score_result.ScoreResult:
    metric = SemanticMatch(weights=(0.2, 0.2, 0.6), snap=None).fit(["Myocardial infarction"])
    metric.save(path)
    metric = SemanticMatch().load(path)
    results: list[score_result.ScoreResult] = metric.score_batch(["Heart attack"], [["MI"]])
    return results[0] if results else metric.score(output="Heart attack", reference="MI")


def comet_and_answer_match_calls() -> list[score_result.ScoreResult]:
    comet = COMET("tests/fixtures/comet/regression-xlmr", device="cpu", track=False)
    translated = comet.score(input="Der Hund.", output="The dog.", reference=None)
    batch = comet.score_batch(["Der Hund."], ["The dog."], [None])
    answer = AnswerMatch().score(output=82.0, reference="82%", answer_format="Float")
    return [translated, answer, *batch]


def prepare_calls(items: list[dict[str, str]]) -> int:
    references: list[str | list[str]] = [item["reference"] for item in items]
    count: int = BERTScore().prepare(references) + SemanticMatch().prepare(references)
    comet = COMET("tests/fixtures/comet/regression-xlmr", device="cpu", track=False)
    sources = [item["input"] for item in items]
    return count + comet.prepare(inputs=sources, references=[None, *sources[1:]])


def experiment(items: list[dict[str, str]]) -> str:
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["output"]},
        scoring_metrics=[BERTScore(), SemanticMatch(), AnswerMatch()],
    )
    return markdown_report(result.test_results)


def statistics_on_arrays() -> tuple[Comparison, Interval, Correlation, Correlation]:
    system_a, system_b = np.linspace(0.1, 0.9, 9), np.linspace(0.2, 1.0, 9)
    comparison = compare_systems(system_a, system_b, name_a="bart", name_b="pgn")
    interval = bootstrap_interval(system_a)
    metric, human = np.zeros((4, 3)), [[0.1, 0.2, 0.3]] * 4
    return comparison, interval, system_level(metric, human), summary_level(human, metric)
