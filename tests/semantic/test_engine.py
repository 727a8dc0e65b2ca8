"""SemanticMatchEngine against sentence-transformers as the oracle, and its own rules."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.semantic import levels
from opik_semantic_metrics.semantic.cleaning import clean_text, stop_words_of
from opik_semantic_metrics.semantic.engine import RECIPE_SETTINGS, SemanticMatchEngine
from tests.out_of_memory import failing_over
from tests.semantic.oracles import sentence_transformers_word_f1
from tests.tiny_models import build_tiny_gpt2

#: The default engine's cleaning: NLTK's stop words but the negations.
KEEPING_NEGATIONS = stop_words_of("keep_negations")

UNRELATED = [
    ("Heart attack", "The train leaves at noon."),
    ("Pulmonary embolism", "She bought three apples at the market."),
    ("The capital of France is Paris.", "Photosynthesis needs sunlight."),
    ("Fever and cough", "The stock market fell sharply on Monday."),
]


@pytest.fixture(scope="module")
def engine() -> SemanticMatchEngine:
    return SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")


@pytest.fixture(scope="module")
def sentence_transformer(minilm_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_path), device="cpu")


def _reference_sentence_transformers_cosine(model, first: list[str], second: list[str]):
    """Cosine of sentence-transformers' own embeddings, pair by pair."""
    a = model.encode(first, convert_to_tensor=True, normalize_embeddings=True)
    b = model.encode(second, convert_to_tensor=True, normalize_embeddings=True)
    return (a * b).sum(dim=1).tolist()


def test_sentence_and_paragraph_levels_equal_sentence_transformers(
    engine, sentence_transformer, stsb_pairs
):
    pairs = stsb_pairs[:60]
    outputs, references = [a for a, _, _ in pairs], [b for _, b, _ in pairs]
    results = engine.score(outputs, references)
    raw = _reference_sentence_transformers_cosine(sentence_transformer, outputs, references)
    cleaned = _reference_sentence_transformers_cosine(
        sentence_transformer,
        [clean_text(text, KEEPING_NEGATIONS) for text in outputs],
        [clean_text(text, KEEPING_NEGATIONS) for text in references],
    )
    assert all(result.status == "scored" for result in results)
    assert [r.paragraph_cosine for r in results] == pytest.approx(raw, abs=1e-5)
    assert [r.sentence for r in results] == pytest.approx(cleaned, abs=1e-5)
    # Not fitted: baseline 0, so the paragraph level is the plain cosine.
    assert [r.paragraph for r in results] == [r.paragraph_cosine for r in results]


@pytest.mark.parametrize(
    "repeats",
    [
        40,  # 2 KB: tokenized whole
        400,  # 22 KB: only a leading part is tokenized (models/long_texts.py)
        100_000,  # 5.5 MB
    ],
)
def test_texts_over_the_limit_are_cut_as_sentence_transformers_does_and_flagged(
    engine, sentence_transformer, repeats
):
    long_text = "The heart pumps blood through the arteries and veins. " * repeats
    [result] = engine.score([long_text], ["Cardiac function."])
    # sentence-transformers reads the first 100 KB: enough to fill its 256 tokens.
    kept = long_text[:100_000]
    [paragraph] = _reference_sentence_transformers_cosine(
        sentence_transformer, [kept], ["Cardiac function."]
    )
    [sentence] = _reference_sentence_transformers_cosine(
        sentence_transformer,
        [clean_text(kept, KEEPING_NEGATIONS)],
        [clean_text("Cardiac function.", KEEPING_NEGATIONS)],
    )
    assert result.output_truncated and not result.reference_truncated
    assert result.paragraph_cosine == pytest.approx(paragraph, abs=1e-5)
    assert result.sentence == pytest.approx(sentence, abs=1e-5)


def test_an_over_long_text_scores_as_if_it_were_tokenized_whole(minilm_path):
    """Word, sentence and paragraph levels and flags, on texts where the leading part
    is found at once, later, or not at all, equal those of an engine that reads every
    text whole."""
    words = ["The", "heart", "pumps", "blood", ";", "and", "the", "東京", "arteries", "don't"]
    texts = [
        " ".join(words[i % len(words)] for i in range(5_000)),
        "the of and " * 2_000 + " ".join(words[i % len(words)] for i in range(3_000)),
        "heart " * 100 + "\n" * 20_000 + "veins " * 2_000,
        "x" * 20_000,
        "no, it is not " * 3_000,  # stop words alone: every word kept, cut
        "no, it is not " * 3_000 + "the",  # the same stop words but the last
        "no, it is not " * 3_000 + "heart",  # one content word, found at the end
    ]
    references = [
        "Cardiac function.",
        texts[0] + " and more",
        texts[2],
        texts[1],
        "No.",
        texts[4],
        texts[0],
    ]
    reading_parts = SemanticMatchEngine(str(minilm_path), device="cpu", cache=EmbeddingCache())
    reading_whole = SemanticMatchEngine(str(minilm_path), device="cpu", cache=EmbeddingCache())
    reading_whole.loaded.cuts_long_texts = False
    assert reading_parts.loaded.cuts_long_texts
    results = reading_parts.score(texts, references)
    assert results == reading_whole.score(texts, references)
    # Stop words alone are read as they are (cleaning keeps them), cut as any long text.
    assert [result.status for result in results[4:]] == ["scored"] * 3
    assert results[4].output_truncated and results[4].word is not None


def test_contextual_word_level_equals_sentence_transformers_token_embeddings(
    engine, sentence_transformer
):
    pairs = [
        ("Myocardial infarction", "Heart attack"),
        ("A man is playing a guitar.", "A person plays the guitar loudly."),
        ("Cardiomegaly", "Enlarged heart"),
    ]
    results = engine.score([a for a, _ in pairs], [b for _, b in pairs])
    for (output, reference), result in zip(pairs, results, strict=True):
        expected = sentence_transformers_word_f1(
            sentence_transformer,
            clean_text(output, KEEPING_NEGATIONS),
            clean_text(reference, KEEPING_NEGATIONS),
        )
        assert result.word == pytest.approx(expected, abs=1e-5)


def test_fitted_word_level_weighs_pieces_by_their_smoothed_idf(sentence_transformer):
    """The idf weights reach the word level: against sentence-transformers' token
    embeddings weighted by idf counted here, on the tokenizer's own pieces."""
    references = [
        "Heart attack",
        "A person plays the guitar loudly.",
        "Enlarged heart",
        "The heart is enlarged.",
        "A man plays a guitar.",
    ]
    pairs = [
        ("Myocardial infarction of the heart", references[0]),
        ("A man is playing a guitar.", references[1]),
        ("Cardiomegaly", references[2]),
    ]
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache())
    engine.fit(references)
    tokenizer = sentence_transformer.tokenizer
    documents = [set(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in references]
    vocabulary = {token_id for document in documents for token_id in document}
    counted = {i: sum(i in document for document in documents) for i in vocabulary}

    class Idf(dict):
        def __missing__(self, token_id: int) -> float:  # a piece no reference has
            return math.log(len(references) + 1) + 1

    idf = Idf({i: math.log((len(references) + 1) / (df + 1)) + 1 for i, df in counted.items()})
    results = engine.score([a for a, _ in pairs], [b for _, b in pairs])
    for (output, reference), result in zip(pairs, results, strict=True):
        expected = sentence_transformers_word_f1(
            sentence_transformer,
            clean_text(output, KEEPING_NEGATIONS),
            clean_text(reference, KEEPING_NEGATIONS),
            idf,
        )
        unweighted = sentence_transformers_word_f1(
            sentence_transformer,
            clean_text(output, KEEPING_NEGATIONS),
            clean_text(reference, KEEPING_NEGATIONS),
        )
        assert result.word == pytest.approx(expected, abs=1e-5)
        assert abs(expected - unweighted) > 1e-3  # the weights matter for these pairs


def test_isolated_word_vectors_are_one_piece_sentence_embeddings(sentence_transformer):
    isolated = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", token_vectors="isolated")
    output, reference = "heart attack", "cardiac arrest"
    tokenizer = sentence_transformer.tokenizer
    assert tokenizer.tokenize(output + " " + reference) == ["heart", "attack", "cardiac", "arrest"]
    vectors = sentence_transformer.encode(
        ["heart", "attack", "cardiac", "arrest"], convert_to_tensor=True, normalize_embeddings=True
    )
    sim = vectors[:2] @ vectors[2:].T
    precision, recall = sim.max(dim=1).values.mean(), sim.max(dim=0).values.mean()
    [result] = isolated.score([output], [reference])
    assert result.word_precision == pytest.approx(float(precision), abs=1e-5)
    assert result.word_recall == pytest.approx(float(recall), abs=1e-5)


def test_identical_answers_score_one(engine, stsb_pairs):
    outputs = [a for a, _, _ in stsb_pairs[:20]] + ["Heart attack", "fever, cough"]
    references = [*outputs[:-1], ["fever", "cough"]]
    for result in engine.score(outputs, references):
        assert result.score == 1.0 and result.snapped
        assert result.raw_score == pytest.approx(1.0, abs=1e-6)


def test_unrelated_answers_score_near_zero(engine):
    results = engine.score([a for a, _ in UNRELATED], [b for _, b in UNRELATED])
    for result in results:
        # Near 0 on the smooth floor, not tied at 0 (unfitted here: baseline 0; the median
        # of fitted unrelated pairs is checked in test_validity.py).
        assert 0.0 < result.score < 0.1
        assert result.raw_score < 0.25  # below the floor, not merely clamped from above
        assert abs(result.paragraph_cosine) < 0.2
    # The recipe's hard floor ties them all at exactly 0.
    recipe = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", **RECIPE_SETTINGS)
    for result in recipe.score([a for a, _ in UNRELATED], [b for _, b in UNRELATED]):
        assert result.score == 0.0 and result.raw_score < 0.25


def test_a_paraphrase_ranks_above_an_unrelated_answer(engine):
    paraphrase, unrelated = engine.score(
        ["Heart attack", "Heart attack"], ["Myocardial infarction", "The train leaves at noon."]
    )
    assert paraphrase.score > unrelated.score
    assert paraphrase.score > 0.3
    for level in ("word", "sentence", "paragraph"):
        assert getattr(paraphrase, level) > getattr(unrelated, level)


@pytest.mark.parametrize(
    ("output", "reference", "status", "score"),
    [
        ("", "Heart attack", "empty_output", 0.0),
        ("  \n\t", "Heart attack", "empty_output", 0.0),
        ("Heart attack", "   ", "empty_reference", 0.0),
        ("...", "Heart attack", "no_content_output", 0.0),
        ("Heart attack", "-- !", "no_content_reference", 0.0),
        ("No.", "no", "same_stop_words", 1.0),
        ("?", "...", "no_content_output", 0.0),
        ("?", "?", "no_content_output", 0.0),
        # MiniLM's vocabulary has none of these characters: [UNK] only, no word to align,
        # and every such text of one length has the same embedding.
        ("\u4f60\u597d", "\u4f60\u597d", "same_unknown_words", 1.0),
        ("\u4f60\u597d", "\u518d\u89c1", "unknown_words_output", 0.0),
        ("Heart attack", "\u1230\u120b\u121d", "unknown_words_reference", 0.0),
        ("\u4f60\u597d", "Heart attack", "unknown_words_output", 0.0),
        # Only zero-width and control characters: nothing to read, as empty as whitespace
        # (two such texts are two empty texts, not the same unknown words).
        ("\u200b\u200d", "Heart attack", "empty_output", 0.0),
        ("\x07 \u2060", "\x07 \u2060", "empty_output", 0.0),
        ("Heart attack", "\ufeff\u00ad", "empty_reference", 0.0),
        # A list answer of blank parts is empty too, not the separator ", " (punctuation).
        ("Heart attack", ["", ""], "empty_reference", 0.0),
        ("Heart attack", [" ", "\u200b"], "empty_reference", 0.0),
        # A zero-width character stuck to a stop word leaves it a stop word.
        ("No\u200b", "No", "same_stop_words", 1.0),
        # Private-use characters: BERT's tokenizer drops them, so there is no [UNK] either.
        ("\ue000\ue001", "Heart attack", "unknown_words_output", 0.0),
    ],
)
def test_texts_that_cannot_be_scored_get_a_defined_score(engine, output, reference, status, score):
    [result] = engine.score([output], [reference])
    assert (result.status, result.score) == (status, score)
    assert result.word is None and result.raw_score is None


@pytest.mark.parametrize(
    ("candidates", "references", "message"),
    [
        ([None], ["x"], "the candidate to be a string, got NoneType"),
        ([3], ["x"], "got int"),
        (["x"], [None], "the reference to be a string or a non-empty list"),
        (["x"], [[]], "non-empty list"),
        (["x"], [["a", 2]], "only strings, found int"),
        (["x", "y"], ["x"], "as many references"),
        ("x", ["x"], "`candidates` to be a list"),
        (["x"], "x", "`references` to be a list"),
    ],
)
def test_bad_input_raises_input_error(engine, candidates, references, message):
    with pytest.raises(InputError, match=message):
        engine.score(candidates, references)


def test_idf_is_the_smoothed_formula_on_a_hand_checkable_corpus():
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", paragraph_baseline=0.0)
    # Three references; the list is one answer. "heart" is in all 3, "attack" in 1,
    # "failure" in 1, "lung" in 1; "kidney" in none.
    engine.fit(["heart attack", "heart failure", ["lung", "heart"]])
    token_id = engine.encoder.tokenizer.convert_tokens_to_ids
    idf = engine.state.idf
    assert idf.num_documents == 3
    assert idf.weight(token_id("heart")) == pytest.approx(math.log(4 / 4) + 1)
    assert idf.weight(token_id("attack")) == pytest.approx(math.log(4 / 2) + 1)
    assert idf.weight(token_id("lung")) == pytest.approx(math.log(4 / 2) + 1)
    assert idf.weight(token_id("kidney")) == pytest.approx(math.log(4 / 1) + 1)
    assert engine.state.baseline_source == "fixed"


def test_the_baseline_is_the_mean_cosine_of_distinct_reference_pairs(sentence_transformer):
    fresh = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    references = ["Heart attack", "The train leaves at noon.", "Heart attack", "  "]
    state = fresh.fit(references)
    # Two distinct non-empty references: every random pair is the one pair.
    [expected] = _reference_sentence_transformers_cosine(
        sentence_transformer, ["Heart attack"], ["The train leaves at noon."]
    )
    assert state.baseline_source == "fitted" and state.fitted
    assert state.paragraph_baseline == pytest.approx(expected, abs=1e-6)
    [result] = fresh.score(["Heart attack"], ["Myocardial infarction"])
    b = state.paragraph_baseline
    assert result.paragraph == pytest.approx((result.paragraph_cosine - b) / (1 - b))


def test_fitting_needs_a_corpus():
    with pytest.raises(InputError, match="at least one reference"):
        SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").fit([])
    with pytest.raises(InputError, match="two distinct"):
        SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").fit(["same", "same"])
    with pytest.raises(InputError, match="reference 1"):
        SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").fit(["a", None])


def test_references_too_alike_for_a_baseline_are_refused():
    # MiniLM is uncased: "Yes" and "yes" are one text to it, and their cosine is 1 up to
    # float32 rounding (0.99999988). Rescaling by such a baseline scored identical texts 0.2.
    for near_copies in (["Yes", "yes"], ["A cat", "a cat "]):
        engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
        with pytest.raises(InputError, match=r"too alike .*mean cosine is 1\.0000, above 0\.99"):
            engine.fit(near_copies)
        [identical] = engine.score(["yes"], ["yes"])  # the failed fit left the engine as it was
        assert identical.score == 1.0


def test_the_fitted_baseline_is_seeded(stsb_pairs):
    references = [b for _, b, _ in stsb_pairs[:80]]
    first = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", seed=3).fit(references)
    again = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", seed=3).fit(references)
    other = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", seed=4).fit(references)
    assert first.paragraph_baseline == again.paragraph_baseline
    assert first.paragraph_baseline != other.paragraph_baseline


def test_the_fitted_baseline_does_not_depend_on_the_order_of_the_references(stsb_pairs):
    # An Opik dataset returns its items in no promised order. Drawn from the references as
    # given, the pairs changed with it, and b with them: 0.1263 against 0.0915 here.
    references = [b for _, b, _ in stsb_pairs[:80]]
    shuffled = references[::-1] + references[:10]
    random.Random(1).shuffle(shuffled)
    given = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").fit(references)
    reordered = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").fit(shuffled)
    assert given.paragraph_baseline == reordered.paragraph_baseline


def test_save_and_load_give_identical_scores(tmp_path, stsb_pairs):
    references = [b for _, b, _ in stsb_pairs[:50]]
    outputs = [a for a, _, _ in stsb_pairs[:50]]
    fitted = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    fitted.fit(references)
    path = tmp_path / "state.json"
    fitted.save(path)
    loaded = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    loaded.load(path)
    assert loaded.state == fitted.state
    assert [r.score for r in loaded.score(outputs, references)] == [
        r.score for r in fitted.score(outputs, references)
    ]
    document = json.loads(path.read_text())
    assert document["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert document["idf"]["num_documents"] == 50


def test_loading_refuses_other_files_and_other_models(tmp_path, engine):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a saved SemanticMatch state"):
        engine.load(bad)
    engine.save(tmp_path / "state.json")
    document = json.loads((tmp_path / "state.json").read_text())
    document["model"] = "bert-base-uncased"
    (tmp_path / "other.json").write_text(json.dumps(document))
    with pytest.raises(ValueError, match="fitted for 'bert-base-uncased'"):
        engine.load(tmp_path / "other.json")


@pytest.fixture(scope="module")
def fitted_state(tmp_path_factory) -> dict:
    """A state saved after a fit on four references: N = 4, weights up to log(5 / 2)."""
    fitted = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    fitted.fit(["A heart attack.", "A broken leg.", "The tax return.", "A stroke."])
    path = tmp_path_factory.mktemp("state") / "state.json"
    fitted.save(path)
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"idf.num_documents": -1}, "num_documents` in \\[0, 2\\*\\*63\\), got -1"),
        ({"idf.num_documents": True}, "num_documents` to be an integer"),
        ({"idf.weights": {"2000": float("nan")}}, "idf weight in"),
        ({"idf.weights": {"2000": float("inf")}}, "idf weight in"),
        ({"idf.weights": {"2000": -0.5}}, "idf weight in"),
        # Finite, but inf in float32: the word level was NaN and silently 0.
        ({"idf.weights": {"2000": 1e300}}, "idf weight in"),
        # Just above log((4 + 1) / 2), the weight of a piece in one of the 4 references.
        ({"idf.weights": {"2000": 0.92}}, "idf weight in"),
        ({"idf.num_documents": 0}, "idf weight in"),
        # (N + 1) / 2 overflowed a float: a bare OverflowError instead of a named refusal.
        ({"idf.num_documents": 10**400}, "num_documents` in \\[0, 2\\*\\*63\\)"),
        ({"idf.weights": {"2000": 10**400}}, "idf weight in"),
        ({"idf.weights": {"2000": True}}, "idf weight to be a number"),
        ({"idf.weights": {"2000": "0.5"}}, "idf weight to be a number"),
        # Loaded, then every score raised a bare OverflowError from torch.tensor.
        ({"idf.weights": {str(10**30): 0.5}}, "64-bit integer"),
        ({"idf.weights": {"-3": 0.5}}, "64-bit integer"),
        ({"idf.weights": {"\u0663": 0.5}}, "64-bit integer"),
        ({"idf.weights": {"30522": 0.5}}, "beyond the model's 30522 word pieces"),
        ({"paragraph_baseline": 0.9999999}, "paragraph_baseline"),
        ({"baseline_source": "guessed"}, "unknown baseline source"),
        # Applied b = 0.5 while the reason said "not fitted (0)".
        ({"baseline_source": "default"}, "default baseline source"),
        ({"idf.num_documents": 1, "idf.weights": {}}, "fewer than two references"),
    ],
)
def test_loading_refuses_a_state_no_fit_could_write(tmp_path, engine, fitted_state, edits, message):
    # Each of these loaded before and then broke scores: a bare "math domain error"
    # (negative N), identical texts scoring 0.733 (NaN idf), or 0.2 (a baseline of ~1).
    document = json.loads(json.dumps(fitted_state))
    for key, value in edits.items():
        *parents, name = key.split(".")
        target = document
        for parent in parents:
            target = target[parent]
        target[name] = value
    (tmp_path / "edited.json").write_text(json.dumps(document))
    with pytest.raises(ValueError, match=message):
        engine.load(tmp_path / "edited.json")


def test_loading_the_fitted_state_itself_is_accepted(tmp_path, fitted_state):
    # The refusals above are edits of this state, which loads as it was written.
    (tmp_path / "state.json").write_text(json.dumps(fitted_state))
    loaded = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    assert loaded.load(tmp_path / "state.json").baseline_source == "fitted"
    assert loaded.state.idf.num_documents == 4


def test_loading_deeply_nested_json_is_a_value_error(tmp_path, engine):
    (tmp_path / "nested.json").write_text("[" * 100_000)
    with pytest.raises(ValueError, match="not a saved SemanticMatch state"):
        engine.load(tmp_path / "nested.json")


def test_embeddings_are_cached_across_calls_and_instances(engine):
    engine.score(["Aortic stenosis"], ["Narrowing of the aortic valve"])
    misses = engine.cache.misses
    SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").score(
        ["Aortic stenosis"], ["Narrowing of the aortic valve"]
    )
    assert engine.cache.misses == misses


def test_score_one_equals_score(engine, stsb_pairs):
    for output, reference, _ in stsb_pairs[:10]:
        single = engine.score_one(output, reference)
        [batched] = engine.score([output], [reference])
        assert single.score == pytest.approx(batched.score, abs=1e-6)
    with pytest.raises(InputError):
        engine.score_one(None, "x")  # type: ignore[arg-type]


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="token_vectors"):
        SemanticMatchEngine("all-MiniLM-L6-v2", token_vectors="static")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="weights"):
        SemanticMatchEngine("all-MiniLM-L6-v2", weights=(1, 2))
    with pytest.raises(ValueError, match="batch_size"):
        SemanticMatchEngine("all-MiniLM-L6-v2", batch_size=0)
    with pytest.raises(ValueError, match="paragraph_baseline"):
        SemanticMatchEngine("all-MiniLM-L6-v2", paragraph_baseline=1.0)
    # A seed of None drew other baseline pairs on every fit; a list failed only in fit().
    for seed in (None, -1, True, [1]):
        with pytest.raises(ValueError, match="`seed` to be a whole number of 0 or more"):
            SemanticMatchEngine("all-MiniLM-L6-v2", seed=seed)  # type: ignore[arg-type]
    # "False" reached transformers as true.
    with pytest.raises(ValueError, match="`trust_remote_code` to be True or False"):
        SemanticMatchEngine("all-MiniLM-L6-v2", trust_remote_code="False")  # type: ignore[arg-type]
    assert SemanticMatchEngine("all-MiniLM-L6-v2", seed=np.int64(3), device="cpu").seed == 3


def test_embeddings_are_unit_length(engine):
    [encoding] = engine.encode(["Heart attack and stroke"])
    assert float(encoding.sentence.norm()) == pytest.approx(1.0, abs=1e-6)
    assert torch.allclose(encoding.piece_vectors.norm(dim=1), torch.ones(4), atol=1e-6)


def _left_padding_last_token_model(directory):
    """A tiny GPT-2 as decoder embedding models ship it: a tokenizer that pads on the
    left, and last-token pooling."""
    build_tiny_gpt2(directory)
    config_path = directory / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps({**config, "padding_side": "left"}))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    (directory / "modules.json").write_text(json.dumps(modules))
    (directory / "1_Pooling").mkdir()
    # Every flag written, as sentence-transformers writes them: a mean-pooling flag left
    # out is read as False by sentence-transformers 6, but as True by 3.1.
    pooling = {
        "word_embedding_dimension": 32,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": True,
    }
    (directory / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return directory


def test_a_left_padding_tokenizer_gives_the_same_embeddings_in_any_batch(tmp_path):
    from sentence_transformers import SentenceTransformer

    directory = _left_padding_last_token_model(tmp_path / "left-padding")
    texts = ["The cat sits on the mat.", "The cat sits on the mat, and the dog runs."]
    oracle = SentenceTransformer(str(directory), device="cpu")
    assert oracle.tokenizer.padding_side == "left"
    # One text a call: no padding, so no doubt about sentence-transformers' answer.
    expected = [
        oracle.encode(text, convert_to_tensor=True, normalize_embeddings=True) for text in texts
    ]
    engine = SemanticMatchEngine(str(directory), device="cpu", cache=EmbeddingCache(0))
    together = engine.encode(texts)  # one forward pass: the first text is padded
    for encoding, sentence in zip(together, expected, strict=True):
        assert torch.allclose(encoding.sentence, sentence, atol=1e-6)


def _recording_forward(monkeypatch, limit: int | None = None) -> list[list[int]]:
    """Record each forward pass's real token counts; with ``limit``, a batch of more texts
    fails as CUDA fails when it runs out of memory (no CPU test can exhaust a GPU)."""
    passes: list[list[int]] = []
    real = LoadedEncoder.hidden_states

    def forward(self, input_ids, attention_mask):
        if limit is not None and input_ids.shape[0] > limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        passes.append(attention_mask.sum(dim=1).tolist())
        return real(self, input_ids, attention_mask)

    monkeypatch.setattr(LoadedEncoder, "hidden_states", forward)
    return passes


def test_texts_are_batched_by_token_count_not_by_characters(monkeypatch):
    """A 99-character text of digits is 52 tokens, a 104-character one of long words 12:
    they must not share a pass, or the short one pads to over four times its length."""
    digits = " ".join("7" for _ in range(50))
    words = " ".join(["internationalization"] * 5)
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache())
    passes = _recording_forward(monkeypatch)
    engine.encode([digits, words])
    assert sorted(passes) == [[12], [52]]


def test_out_of_memory_halves_the_batch_and_keeps_the_scores(monkeypatch, stsb_pairs):
    outputs = [first for first, _, _ in stsb_pairs[:30]]
    references = [second for _, second, _ in stsb_pairs[:30]]
    for token_vectors in ("contextual", "isolated"):
        options = {"device": "cpu", "token_vectors": token_vectors, "batch_size": 32}
        expected = SemanticMatchEngine("all-MiniLM-L6-v2", cache=EmbeddingCache(), **options)
        expected_scores = [result.score for result in expected.score(outputs, references)]
        with monkeypatch.context() as patch:
            passes = _recording_forward(patch, limit=8)
            engine = SemanticMatchEngine("all-MiniLM-L6-v2", cache=EmbeddingCache(), **options)
            scores = [result.score for result in engine.score(outputs, references)]
        assert passes and max(len(batch) for batch in passes) <= 8
        assert engine.forward_batches.size <= 8
        assert scores == pytest.approx(expected_scores, abs=1e-6)


def test_out_of_memory_in_the_word_level_match_halves_its_batch(monkeypatch, stsb_pairs):
    # As BERTScore's greedy match on a GPU: the forward passes fit, the batch of matrices
    # of the word level does not; it must halve, not fail every item.
    outputs = [first for first, _, _ in stsb_pairs[:30]]
    references = [second for _, second, _ in stsb_pairs[:30]]
    options = {"device": "cpu", "batch_size": 32}
    expected = SemanticMatchEngine("all-MiniLM-L6-v2", cache=EmbeddingCache(), **options)
    expected_scores = [result.word for result in expected.score(outputs, references)]
    failures: list[int] = []
    monkeypatch.setattr(levels, "greedy_match", failing_over(8, levels.greedy_match, failures))
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", cache=EmbeddingCache(), **options)
    words = [result.word for result in engine.score(outputs, references)]
    assert failures and engine.match_batch_size.size <= 8
    assert engine.forward_batches.size == 32
    assert words == pytest.approx(expected_scores, abs=1e-6)
    assert len(set(expected_scores)) > 20  # real, distinct word levels
