"""What the default SemanticMatch is for, and the recipe's settings against its formula.

The default keeps negations in the word and sentence levels, lowers pairs where one text
negates or the output changes a number, and bends unrelated pairs towards 0 smoothly;
``RECIPE_SETTINGS`` gives back the layered recipe's scores, checked here against the
recipe's formula on sentence-transformers' own embeddings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opik_semantic_metrics.semantic.cleaning import clean_text, stop_words_of
from opik_semantic_metrics.semantic.engine import RECIPE_SETTINGS, SemanticMatchEngine
from tests.semantic.oracles import sentence_transformers_word_f1


@pytest.fixture(scope="module")
def engine() -> SemanticMatchEngine:
    return SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")


@pytest.fixture(scope="module")
def recipe() -> SemanticMatchEngine:
    return SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", **RECIPE_SETTINGS)


@pytest.fixture(scope="module")
def sentence_transformer(minilm_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_path), device="cpu")


NEGATED = [
    ("A man is not playing the guitar.", "A man is playing the guitar."),
    ("The patient does not have a fever.", "The patient has a fever."),
    ("The store isn't open on Sundays.", "The store is open on Sundays."),
    ("There is no cat on the sofa.", "There is a cat on the sofa."),
]


def test_a_negation_now_counts_at_the_word_and_sentence_levels(engine, recipe):
    outputs, references = [a for a, _ in NEGATED], [b for _, b in NEGATED]
    negated = engine.score(outputs, references)
    identical = engine.score(references, references)
    for result, same in zip(negated, identical, strict=True):
        assert same.score == 1.0
        assert result.word < 0.99 and result.sentence < 0.99
        assert result.score < same.score - 0.05
    # The recipe's cleaning reads both sides as the same words: its levels see no difference.
    for result in recipe.score(outputs, references):
        assert result.word == pytest.approx(1.0, abs=1e-6)
        assert result.sentence == pytest.approx(1.0, abs=1e-6)


@pytest.fixture(scope="module")
def unchecked() -> SemanticMatchEngine:
    return SemanticMatchEngine(
        "all-MiniLM-L6-v2", device="cpu", negation_penalty=0.0, number_penalty=0.0
    )


CHANGED_NUMBERS = [
    ("The meeting is at 5 pm.", "The meeting is at 3 pm.", 1.0),
    ("The company employs 5,000 people.", "The company employs 500 people.", 1.0),
    ("Five men are playing football.", "Three men are playing football.", 1.0),
    ("5 men and 2 dogs ran.", "5 men and 3 dogs ran.", 0.5),
]


def test_the_flip_checks_lower_the_raw_score_by_their_penalties(engine, unchecked):
    outputs = [a for a, _ in NEGATED] + [a for a, _, _ in CHANGED_NUMBERS]
    references = [b for _, b in NEGATED] + [b for _, b, _ in CHANGED_NUMBERS]
    shares = [0.0] * len(NEGATED) + [share for _, _, share in CHANGED_NUMBERS]
    checked, plain = engine.score(outputs, references), unchecked.score(outputs, references)
    for index, (result, without) in enumerate(zip(checked, plain, strict=True)):
        negated = index < len(NEGATED)
        # A negation counts as far as the texts' plain cosine missed it: fully from 0.8,
        # not at all at 0.6 or below.
        unseen = min(max((result.paragraph_cosine - 0.6) / 0.2, 0.0), 1.0)
        assert result.negation_flip == pytest.approx(unseen if negated else 0.0, abs=1e-12)
        assert result.changed_numbers == shares[index]
        assert result.word == without.word and result.paragraph == without.paragraph
        lowered = 0.15 * unseen if negated else 0.2 * shares[index]
        assert result.raw_score == pytest.approx(without.raw_score - lowered, abs=1e-12)
        assert result.score < without.score
    # all-MiniLM-L6-v2 misses most of each negation: most count in full.
    assert sum(result.negation_flip == 1.0 for result in checked) >= len(NEGATED) // 2
    # No flip in identical texts: they still score exactly 1.0.
    assert [r.score for r in engine.score(outputs, outputs)] == [1.0] * len(outputs)


def _triples(kinds: set[str]) -> tuple[list[str], list[str], list[str]]:
    path = Path(__file__).parents[2] / "benchmarks" / "data" / "contrastive" / "triples.tsv"
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    chosen = [row for row in rows if row[0] in kinds]
    return [r[1] for r in chosen], [r[2] for r in chosen], [r[3] for r in chosen]


def test_the_flip_checks_rank_paraphrases_above_negated_and_renumbered_variants(engine, unchecked):
    """On the contrastive set's 83 negation and number triples, the paraphrase of the
    anchor must score above the variant whose meaning a negation or a changed number
    flips: the checks turn most of the embeddings' misses into wins."""
    anchors, paraphrases, flipped = _triples({"negation", "number"})
    assert len(anchors) == 83

    def accuracy(metric: SemanticMatchEngine) -> float:
        better = np.array([r.score for r in metric.score(paraphrases, anchors)])
        worse = np.array([r.score for r in metric.score(flipped, anchors)])
        return float(np.mean(better > worse))

    with_checks, without = accuracy(engine), accuracy(unchecked)
    assert with_checks >= 0.9
    assert with_checks > without + 0.1


def test_an_answer_of_stop_words_alone_is_scored_on_its_words(engine, sentence_transformer):
    """Cleaning never empties a text that has words: "I can do that." against "Yes, I can
    do it." (people read them as near paraphrases) is scored, its sentence level on all its
    words as sentence-transformers embeds them, and well above unrelated answers."""
    paraphrase, unrelated, same = engine.score(
        ["I can do that.", "I can do that.", "No."], ["Yes, I can do it.", "Tax return", "no"]
    )
    assert paraphrase.status == "scored" and paraphrase.score > 0.5
    assert unrelated.score < 0.1
    first, second = sentence_transformer.encode(
        ["I can do that", "Yes I can do it"], normalize_embeddings=True
    )
    assert paraphrase.sentence == pytest.approx(float(first @ second), abs=1e-5)
    # Two answers of the same stop words are the same answer.
    assert (same.status, same.score) == ("same_stop_words", 1.0)


def test_the_negation_keeping_sentence_level_equals_sentence_transformers(
    engine, sentence_transformer
):
    stop_words = stop_words_of("keep_negations")
    outputs, references = [a for a, _ in NEGATED], [b for _, b in NEGATED]
    first = sentence_transformer.encode(
        [clean_text(text, stop_words) for text in outputs], normalize_embeddings=True
    )
    second = sentence_transformer.encode(
        [clean_text(text, stop_words) for text in references], normalize_embeddings=True
    )
    expected = (first * second).sum(axis=1)
    for result, cosine in zip(engine.score(outputs, references), expected, strict=True):
        assert result.sentence == pytest.approx(float(cosine), abs=1e-5)


def test_scores_lie_in_0_1_and_unrelated_pairs_score_near_0(engine, stsb_pairs):
    outputs = [first for first, _, _ in stsb_pairs]
    references = [second for _, second, _ in stsb_pairs]
    order = np.random.default_rng(0).permutation(len(references))
    order = np.where(order == np.arange(len(order)), np.roll(order, 1), order)
    unrelated = engine.score(outputs, [references[i] for i in order])
    paired = engine.score(outputs, references)
    scores = np.array([result.score for result in unrelated + paired])
    assert ((scores >= 0.0) & (scores <= 1.0)).all()
    assert np.median([result.score for result in unrelated]) <= 0.05
    # Smooth: unrelated pairs keep their order instead of tying at 0.
    assert len({result.score for result in unrelated}) > 0.9 * len(unrelated)


def test_the_recipe_settings_reproduce_the_recipe_formula(recipe, sentence_transformer, stsb_pairs):
    """score = 1 if r >= 0.95 else r, r = min(1, max(0, (raw - 0.25) / 0.75)), raw =
    0.4 word + 0.4 sentence + 0.2 paragraph, the texts cleaned of NLTK's whole list,
    unfitted (uniform idf, baseline 0); every value from sentence-transformers."""
    pairs = [(a, b) for a, b, _ in stsb_pairs[150:190]] + NEGATED
    outputs, references = [a for a, _ in pairs], [b for _, b in pairs]

    def cosines(first: list[str], second: list[str]) -> np.ndarray:
        a = sentence_transformer.encode(first, normalize_embeddings=True)
        b = sentence_transformer.encode(second, normalize_embeddings=True)
        return (a * b).sum(axis=1)

    cleaned_outputs = [clean_text(text) for text in outputs]
    cleaned_references = [clean_text(text) for text in references]
    sentence = cosines(cleaned_outputs, cleaned_references)
    paragraph = cosines(outputs, references)
    results = recipe.score(outputs, references)
    assert recipe.state.paragraph_baseline == 0.0
    zeros = 0
    for index, result in enumerate(results):
        word = sentence_transformers_word_f1(
            sentence_transformer, cleaned_outputs[index], cleaned_references[index]
        )
        raw = 0.4 * word + 0.4 * float(sentence[index]) + 0.2 * float(paragraph[index])
        rescaled = min(1.0, max(0.0, (raw - 0.25) / 0.75))
        expected = 1.0 if rescaled >= 0.95 else rescaled
        assert result.raw_score == pytest.approx(raw, abs=1e-5)
        assert result.score == pytest.approx(expected, abs=1e-5)
        zeros += result.score == 0.0
    assert zeros > 0  # the hard floor ties some unrelated pairs at exactly 0


def test_another_sentence_transformers_model_is_read_as_sentence_transformers_reads_it(
    tmp_path, minilm_path
):
    """A model with CLS pooling, no normalisation and its own length limit, built and saved
    by sentence-transformers: the paragraph level is its own cosine."""
    from sentence_transformers import SentenceTransformer, models

    from tests.tiny_models import build_tiny_bert

    transformer = models.Transformer(str(build_tiny_bert(tmp_path / "bert")), max_seq_length=24)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), pooling_mode="cls")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    model.save(str(tmp_path / "sentence-model"))
    engine = SemanticMatchEngine(str(tmp_path / "sentence-model"), device="cpu")
    assert engine.max_length == 24 and engine.pooling.modes == ("cls",)
    outputs = ["the cat sat on the mat", "a dog runs in the park"]
    references = ["a cat is sitting on a mat", "the man plays a guitar"]
    first = model.encode(outputs, normalize_embeddings=True)
    second = model.encode(references, normalize_embeddings=True)
    results = engine.score(outputs, references)
    for result, cosine in zip(results, (first * second).sum(axis=1), strict=True):
        assert result.status == "scored"
        assert result.paragraph_cosine == pytest.approx(float(cosine), abs=1e-5)
        assert 0.0 <= result.score <= 1.0
    assert engine.score(outputs, outputs)[0].score == 1.0
