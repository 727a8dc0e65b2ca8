"""A metric's fit on a reference column, in one process: counts that add up over blocks
give the state the metric's own fit gives on the whole column."""

from __future__ import annotations

import pytest

from opik_semantic_metrics import AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.metrics.reference_fit import ReferenceCounts


def _in_blocks(fit, references, size):
    """The counts of ``references`` counted ``size`` at a time and added up."""
    total = ReferenceCounts()
    for start in range(0, len(references), size):
        total = total + fit.count(references[start : start + size])
    return total


def test_bertscore_idf_from_blocks_is_fit_idf_on_the_column(stsb_pairs):
    references = [b for _, b, _ in stsb_pairs[:24]] + [["A cat.", "A kitten."], None]
    metric = BERTScore(model="all-MiniLM-L6-v2", idf=True, device="cpu", track=False)
    fit = metric.reference_fit()
    assert fit is not None and fit.required
    state = fit.state(_in_blocks(fit, references, 5))
    assert metric.fitted_state() is None  # the metric is left as it was
    # None is left out (its row fails when scored); a list counts each of its texts.
    metric.fit_idf(references[:-1])
    assert state == metric.fitted_state()
    assert state.num_documents == 26
    assert not metric.reference_fit().required  # fitted now
    assert BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False).reference_fit() is None


def test_semantic_match_fit_from_blocks_is_its_fit_on_the_column(stsb_pairs):
    references = [b for _, b, _ in stsb_pairs[:30]]
    references = references + references[:4] + [12]  # repeated texts count; 12 is no text
    metric = SemanticMatch(device="cpu", track=False)
    fit = metric.reference_fit()
    assert not fit.required
    state = fit.state(_in_blocks(fit, list(reversed(references)), 7))
    assert not metric.fitted_state().fitted  # the metric is left as it was
    metric.fit(references[:-1])
    want = metric.fitted_state()
    assert (state.paragraph_baseline, state.baseline_source) == (
        want.paragraph_baseline,
        want.baseline_source,
    )
    assert state.idf == want.idf


def test_nothing_to_fit_on_is_a_named_error():
    fit = BERTScore(model="all-MiniLM-L6-v2", idf=True, device="cpu", track=False).reference_fit()
    with pytest.raises(ValueError, match="no reference is text"):
        fit.state(fit.count([None, 3]))
    semantic = SemanticMatch(device="cpu", track=False).reference_fit()
    with pytest.raises(ValueError, match="two distinct"):
        semantic.state(semantic.count(["Same.", "Same."]))
    assert AnswerMatch(track=False).reference_fit() is None
