"""SemanticMatchEngine: the layered word/sentence/paragraph score, loaded once, batched.

The engine knows nothing of Opik. It takes ``candidates`` (model outputs) and
``references`` (a string each, or a list of strings that together form one answer: the
non-blank parts are joined with ``", "``) and returns one frozen :class:`SemanticMatchResult`
per pair. The formula is in :mod:`~opik_semantic_metrics.semantic.levels` and
:mod:`~opik_semantic_metrics.semantic.combine`; here are the embeddings, the corpus
statistics and the rules for texts that cannot be scored.

**Embeddings** (:mod:`~opik_semantic_metrics.semantic.encoding`). One forward pass per
distinct text gives both its sentence embedding (pooled as the model's
sentence-transformers files say, see :mod:`~opik_semantic_metrics.semantic.pooling`) and
its contextual word-piece vectors. Both are kept in the process-wide embedding cache, keyed
on the exact text, so a reference shared by many items, metrics or experiments is encoded once.

**Word-piece vectors** (``token_vectors``). The layered semantic score's recipe does not
say how the vector of a word piece is made. ``"contextual"`` (the default) takes the
last-layer state of the piece in one pass over the cleaned text; ``"isolated"`` encodes
each piece on its own, framed by the special tokens and pooled like a sentence (what
encoding a one-word text gives), independent of its neighbours. On STS-B the contextual
word level ranks pairs much better and the combined scores are level
(``docs/design/layered-semantic-score.md``); both are available.

**Fitting** (:meth:`SemanticMatchEngine.fit`) on a corpus of references computes the
smoothed idf of every word piece and the paragraph baseline: the mean raw-text cosine of
100 random pairs of distinct references (seeded), taken as unrelated. Neither depends on
the order of the references. Without a fit, every piece weighs 1 (the idf of an empty
corpus) and the baseline is 0 (no rescaling); the result metadata says which applies.
:meth:`SemanticMatchEngine.calibrate` fits the weights, flip penalties and output curve
to pairs people have scored and keeps them in the fitted state, which saves to and loads from JSON.

**Texts that cannot be scored** get a defined score and a status, never an exception
(:mod:`~opik_semantic_metrics.semantic.statuses`).

Non-strings, a list reference that is empty or holds non-strings, and mismatched lengths
raise :class:`~opik_semantic_metrics.errors.InputError`. A text longer than the model's
limit is cut, as sentence-transformers does, and flagged.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import (
    as_list,
    as_whole_number,
    check_positive_int,
    is_blank,
    item_name,
)
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.semantic.calibration import (
    DEFAULT_FOLDS,
    MIN_PAIRS,
    CalibrationReport,
    check_human_scores,
    cross_validate,
    fit_combination,
)
from opik_semantic_metrics.semantic.cleaning import Cleaning, has_content, stop_words_of
from opik_semantic_metrics.semantic.combine import (
    LEVEL_COLUMNS,
    MAX_PARAGRAPH_BASELINE,
    Combination,
    check_baseline,
    negation_unseen,
    rescale_by_baseline,
)
from opik_semantic_metrics.semantic.encoding import SemanticEncoder, weighted_pieces
from opik_semantic_metrics.semantic.flips import flip_checks
from opik_semantic_metrics.semantic.idf import SmoothedIdf
from opik_semantic_metrics.semantic.levels import WeightedPieces, WordLevel, cosine, word_level
from opik_semantic_metrics.semantic.pooling import PoolingConfig
from opik_semantic_metrics.semantic.references import Reference as Reference
from opik_semantic_metrics.semantic.references import checked_pairs
from opik_semantic_metrics.semantic.references import reference_text as reference_text
from opik_semantic_metrics.semantic.results import DEFAULT_PARAGRAPH_BASELINE, unscored
from opik_semantic_metrics.semantic.results import FittedState as FittedState
from opik_semantic_metrics.semantic.results import SemanticMatchResult as SemanticMatchResult
from opik_semantic_metrics.semantic.results import TextEncoding as TextEncoding
from opik_semantic_metrics.semantic.settings import BASELINE_PAIRS as BASELINE_PAIRS
from opik_semantic_metrics.semantic.settings import RECIPE_SETTINGS as RECIPE_SETTINGS
from opik_semantic_metrics.semantic.settings import TOKEN_VECTOR_MODES, SemanticMatchSettings
from opik_semantic_metrics.semantic.settings import TokenVectors as TokenVectors
from opik_semantic_metrics.semantic.state_file import read_state, write_state
from opik_semantic_metrics.semantic.statuses import Status as Status
from opik_semantic_metrics.semantic.statuses import text_status, unknown_words_status
from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS

#: A word, as the flip checks count words to cut an over-long text.
_WORD: Final = re.compile(r"\S+")


@dataclass
class _Item:
    """One pair on its way through :meth:`SemanticMatchEngine.score`.

    Attributes:
        output, reference: The texts (a list reference joined).
        clean_output, clean_reference: Their cleaned forms, cut to the token limit.
        status: ``"scored"``, or the rule for texts that cannot be scored that applies.
        kept_output, kept_reference: The raw texts cut to the token limit (set for the
            pairs to score).
        result: The pair's result once scored.
    """

    output: str
    reference: str
    clean_output: str
    clean_reference: str
    status: Status
    kept_output: str = ""
    kept_reference: str = ""
    result: SemanticMatchResult | None = None

    @property
    def cleaned_texts(self) -> tuple[str, str]:
        """The texts of the word and sentence levels."""
        return (self.clean_output, self.clean_reference)

    @property
    def encoded_texts(self) -> tuple[str, str, str, str]:
        """Every text the pair needs encoded: raw (paragraph level), then cleaned."""
        return (self.kept_output, self.kept_reference, self.clean_output, self.clean_reference)


class SemanticMatchEngine(
    EncoderEngine[SemanticEncoder, tuple[str, Reference], SemanticMatchResult]
):
    """The layered semantic score with a model loaded once and shared.

    The engine holds a :class:`~opik_semantic_metrics.semantic.encoding.SemanticEncoder`
    (:attr:`loaded`: the model, its pooling and vocabulary, which turn texts into
    sentence embeddings and word-piece vectors) and adds the settings, the fitted state,
    the cache and the scoring rules.

    Args:
        model: The model (:attr:`SemanticMatchSettings.model
            <opik_semantic_metrics.semantic.settings.SemanticMatchSettings.model>`), over
            ``settings``'s.
        settings: The settings; ``None``: the defaults.
        cache: Where embeddings are kept; the process-wide cache by default.
        **changes: Settings by name, over ``settings``'s: any field of
            :class:`~opik_semantic_metrics.semantic.settings.SemanticMatchSettings`, where
            each is documented.

    Raises:
        ValueError: A bad setting, or a sentence-transformers pipeline other than
            Transformer, Pooling, Normalize.
        TypeError: A change that names no setting.
        ModelUnavailableError: The model cannot be had.

    Example:
        >>> engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
        >>> same, related, unrelated = engine.score(
        ...     ["Heart attack.", "Heart attack.", "Heart attack."],
        ...     ["Heart attack.", "Myocardial infarction.", "The train leaves at noon."],
        ... )
        >>> same.score, unrelated.score < related.score < same.score, unrelated.score < 0.05
        (1.0, True, True)
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        settings: SemanticMatchSettings | None = None,
        cache: EmbeddingCache | None = None,
        **changes: Any,
    ) -> None:
        if model is not None:
            changes["model"] = model
        #: The engine's settings, as given (checked below).
        self.settings = settings = (settings or SemanticMatchSettings()).changed(**changes)
        self.combination = settings.combination()
        token_vectors = settings.token_vectors
        if token_vectors not in TOKEN_VECTOR_MODES:
            raise ValueError(
                f"Expected `token_vectors` in {TOKEN_VECTOR_MODES}, got {token_vectors!r}."
            )
        self.baseline_pairs = check_positive_int(settings.baseline_pairs, "baseline_pairs")
        batch_size = check_positive_int(settings.batch_size, "batch_size")
        self.token_vectors: TokenVectors = token_vectors
        self._stop_words = stop_words_of(settings.cleaning)
        self.cleaning: Cleaning = settings.cleaning
        # Checked now: a seed of None would draw other baseline pairs on every fit.
        seed = as_whole_number(settings.seed)
        if seed is None or seed < 0:
            raise ValueError(
                f"Expected `seed` to be a whole number of 0 or more, got {settings.seed!r}."
            )
        self.seed = seed
        self.fixed_baseline: float | None = None
        if settings.paragraph_baseline is not None:
            self.fixed_baseline = check_baseline(settings.paragraph_baseline)
        self.state = FittedState(
            idf=SmoothedIdf.uniform(),
            paragraph_baseline=(
                DEFAULT_PARAGRAPH_BASELINE if self.fixed_baseline is None else self.fixed_baseline
            ),
            baseline_source="default" if self.fixed_baseline is None else "fixed",
        )

        def load(device: torch.device, dtype: torch.dtype) -> SemanticEncoder:
            remote_code = settings.trust_remote_code
            return SemanticEncoder.load(
                settings.model, device=device, dtype=dtype, trust_remote_code=remote_code
            )

        self._build(settings.device, settings.dtype, load, batch_size=batch_size,
                    micro_batch_size=batch_size, cache=cache)  # fmt: skip

    @property
    def encoder(self) -> LoadedEncoder:
        """The shared model and tokenizer (the text encoder's)."""
        return self.loaded.encoder

    @property
    def model_name(self) -> str:
        """The model's name, as given."""
        return self.loaded.encoder.name

    @property
    def pooling(self) -> PoolingConfig:
        """The model's pooling configuration (the text encoder's)."""
        return self.loaded.pooling

    @property
    def max_length(self) -> int:
        """Token limit of a text, special tokens included (the text encoder's)."""
        return self.loaded.max_length

    @property
    def active_combination(self) -> Combination:
        """The weights and curve scores use: the calibrated ones when calibrated."""
        return self.state.calibration or self.combination

    # -- fitting -----------------------------------------------------------------------

    def fit(self, references: Sequence[Reference]) -> FittedState:
        """Fit idf and the paragraph baseline on a corpus of references, and prepare them
        (:meth:`prepare`).

        Args:
            references: Reference answers: strings, or lists of strings (one answer each,
                joined). Use every reference of the dataset to be scored.

        Returns:
            The new :class:`FittedState` (also kept as :attr:`state`).

        Raises:
            InputError: An empty corpus, a malformed reference, or (when the baseline is
                not fixed) fewer than two distinct non-empty references.
        """
        corpus = as_list(references, "references")
        if len(corpus) == 0:
            raise InputError("Expected at least one reference to fit on, got none.")
        texts = [
            reference_text(reference, item_name("reference", index, len(corpus)))
            for index, reference in enumerate(corpus)
        ]
        token_ids = self.loaded.tokenize(texts, add_special_tokens=False, verbose=False)[
            "input_ids"
        ]
        idf = SmoothedIdf.fit(token_ids)
        if self.fixed_baseline is not None:
            state = FittedState(idf, self.fixed_baseline, "fixed")
        else:
            state = FittedState(idf, self._estimate_baseline(texts), "fitted")
        self.state = state
        # The references were just read: encode them too, as prepare() does.
        self.prepare(texts)
        return state

    def _estimate_baseline(self, texts: Sequence[str]) -> float:
        """Mean raw-text cosine of random pairs of distinct references (seeded, any order)."""
        # Sorted, so that the pairs drawn depend on which references there are, not on the
        # order they come in: an Opik dataset does not promise one.
        distinct = sorted({text for text in texts if not is_blank(text)})
        if len(distinct) < 2:
            raise InputError(
                "The paragraph baseline needs at least two distinct non-empty references; "
                "pass `paragraph_baseline=` to fix it instead."
            )
        generator = random.Random(self.seed)
        pairs = []
        for _ in range(self.baseline_pairs):
            first = generator.randrange(len(distinct))
            second = generator.randrange(len(distinct) - 1)
            pairs.append((first, second + (second >= first)))
        used = sorted({index for pair in pairs for index in pair})
        encoded = dict(zip(used, self.encode([distinct[i] for i in used]), strict=True))
        baseline = math.fsum(
            cosine(encoded[first].sentence, encoded[second].sentence) for first, second in pairs
        ) / len(pairs)
        if baseline > MAX_PARAGRAPH_BASELINE:
            raise InputError(
                "The references are too alike to estimate a paragraph baseline (their mean "
                f"cosine is {baseline:.4f}, above {MAX_PARAGRAPH_BASELINE}); pass "
                "`paragraph_baseline=` to fix it instead."
            )
        return baseline

    def calibrate(
        self,
        candidates: Sequence[str],
        references: Sequence[Reference],
        human_scores: Sequence[float],
        *,
        folds: int = DEFAULT_FOLDS,
        seed: int = 0,
    ) -> CalibrationReport:
        """Fit the weights, the flip penalties and the output curve to pairs people have
        scored.

        The pairs are scored with the current fitted state (call :meth:`fit` first: a
        later fit drops the calibration, whose levels it changes); the weights, penalties
        and curve are chosen as :mod:`~opik_semantic_metrics.semantic.calibration` says,
        first in ``folds`` cross-validation folds to measure them on pairs they were not fitted on,
        then on every pair. The result is kept in :attr:`state` (which :meth:`save` writes)
        and used by every later score in place of the engine's own weights and curve.

        Args:
            candidates, references: The labelled pairs, as for :meth:`score`.
            human_scores: Per pair, a person's similarity score, on any scale where more
                is more similar (STS-B's 0 to 5, a 1 to 7 Likert scale...).
            folds: Cross-validation folds, 2 or more.
            seed: Seed of the split into folds.

        Returns:
            A :class:`~opik_semantic_metrics.semantic.calibration.CalibrationReport`: the
            fitted combination and, per fold, its held-out Spearman and the default's.

        Raises:
            InputError: As :meth:`score`.
            ValueError: Not one finite human score per pair, fewer than
                ``MIN_PAIRS`` pairs the layered score can score, human scores all equal, or
                a bad ``folds``.
        """
        outputs, joined_references = checked_pairs(candidates, references)
        human = check_human_scores(human_scores, len(outputs))
        folds = check_positive_int(folds, "folds")
        if folds < 2:
            raise ValueError(f"Expected `folds` to be 2 or more, got {folds}.")
        results = self.score(outputs, joined_references)
        scored = [index for index, result in enumerate(results) if result.status == "scored"]
        if len(scored) < max(MIN_PAIRS, folds):
            raise ValueError(
                f"Too few pairs to calibrate on: {len(scored)} of the {len(outputs)} given can "
                f"be scored; at least {max(MIN_PAIRS, folds)} are needed."
            )
        levels = np.array(
            [[getattr(results[i], column) for column in LEVEL_COLUMNS] for i in scored],
            dtype=np.float64,
        )
        human = human[scored]
        if human.max() == human.min():
            raise ValueError("Every human score is the same: there is no order to fit.")
        held_out, default = cross_validate(levels, human, self.combination, folds, seed)
        combination = fit_combination(levels, human, self.combination)
        self.state = dataclasses.replace(self.state, calibration=combination)
        return CalibrationReport(combination, len(scored), held_out, default)

    def save(self, path: str | Path) -> None:
        """Write the fitted state (idf, baseline, model name) to a JSON file
        (:mod:`~opik_semantic_metrics.semantic.state_file`)."""
        write_state(path, self.state, self.model_name)

    def load(self, path: str | Path) -> FittedState:
        """Read a state written by :meth:`save` (a fixed baseline of this engine wins).

        Raises:
            ValueError: The file cannot be read (see
                :func:`~opik_semantic_metrics.input_files.read_json`), is not a saved
                state, or is one fitted for another model.
        """
        self.state = read_state(
            path, self.model_name, self.loaded.vocabulary_size, self.fixed_baseline
        )
        return self.state

    # -- encodings ---------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> list[TextEncoding]:
        """Sentence embeddings and word-piece vectors of texts, through the cache."""
        return self._cached(texts)

    def _isolated_vectors(self, piece_ids: list[int]) -> list[torch.Tensor]:
        """Isolated word-piece vectors, cached by piece id."""
        return self.cache.get_or_compute(
            self.loaded.pieces_namespace,
            [str(i) for i in piece_ids],
            lambda keys: self.loaded.encode_pieces(keys, self.forward_batches),
        )

    def _weighted_pieces(
        self, encodings: Sequence[TextEncoding], idf: SmoothedIdf
    ) -> list[WeightedPieces]:
        """The word level's input for each encoded (cleaned) text (``token_vectors``'s)."""
        isolated = self._isolated_vectors if self.token_vectors == "isolated" else None
        return weighted_pieces(encodings, idf, isolated)

    def prepare(self, references: Sequence[Reference]) -> int:
        """Encode a dataset's references into the embedding cache before scoring it.

        One pass over the whole list, in length-sorted batches, of what scoring reads of
        each reference (its raw and its cleaned text, cut where the model's limit cuts
        them; with ``token_vectors="isolated"``, its word pieces too), so that scoring
        its items encodes only their outputs. Scores are the same with or without it.
        References scoring would not encode (blank, or nothing left once cleaned) are
        skipped, by the same rule. The cache stays within its bound: where the
        references do not all fit, the leading ones are kept and a warning says how many.

        Args:
            references: Per item, a reference string or a non-empty list of strings.

        Returns:
            How many distinct texts (raw and cleaned) are in the cache.

        Raises:
            InputError: Not a list, or an item :meth:`score` would refuse, named.
        """
        corpus = as_list(references, "references")
        joined = [
            reference_text(reference, item_name("reference", index, len(corpus)))
            for index, reference in enumerate(corpus)
        ]
        texts = []
        cleaned = []
        for reference in dict.fromkeys(joined):
            if is_blank(reference):
                continue
            clean = self.loaded.kept_clean_text(reference, self._stop_words)
            if clean:
                texts += [self.loaded.kept_part(reference), clean]
                cleaned.append(clean)
        kept = self._fill_cache(texts)
        if self.token_vectors == "isolated":
            # Their word pieces' isolated vectors, cached by piece id.
            found = self._cache_lookup(cleaned)
            self._weighted_pieces(list(found.values()), self.state.idf)
        return kept

    # -- scoring -----------------------------------------------------------------------

    def score(
        self, candidates: Sequence[str], references: Sequence[Reference]
    ) -> list[SemanticMatchResult]:
        """The layered score of each candidate against its reference.

        Args:
            candidates: Model outputs.
            references: Per candidate, a reference string or a non-empty list of strings
                (one answer in parts, joined with ``", "``).

        Returns:
            One :class:`SemanticMatchResult` per candidate, in order.

        Raises:
            InputError: Unequal lengths, a non-string, or a malformed list reference.
        """
        outputs, joined_references = checked_pairs(candidates, references)
        # Over-long texts are read only as far as the token limit keeps (cleaned and
        # raw), once each however many items share them.
        texts = {*outputs, *joined_references}
        kept_clean = {text: self.loaded.kept_clean_text(text, self._stop_words) for text in texts}
        # Which answers are the same stop words is decided on the whole list, whatever the
        # cleaning: "No." against "no" is the same answer.
        content = {text: has_content(text, ENGLISH_STOP_WORDS) for text in texts}
        # A text of stop words alone keeps all its words (cleaning never empties a text
        # that has words), and so does the text it is compared with, so that the word and
        # sentence levels compare like with like: "I can do that" with "Yes I can do it",
        # not with "Yes".
        plain: dict[str, str] = {}

        def words_of(text: str) -> str:
            if text not in plain:
                plain[text] = self.loaded.kept_clean_text(text, frozenset())
            return plain[text]

        items = []
        for output, reference in zip(outputs, joined_references, strict=True):
            clean_output, clean_reference = kept_clean[output], kept_clean[reference]
            if not (content[output] and content[reference]):
                clean_output, clean_reference = words_of(output), words_of(reference)
            status = text_status(output, reference, content[output], content[reference])
            items.append(_Item(output, reference, clean_output, clean_reference, status))
        to_score = [item for item in items if item.status == "scored"]
        kept_raw: dict[str, str] = {}
        for item in to_score:
            item.kept_output = kept_raw.setdefault(item.output, self.loaded.kept_part(item.output))
            item.kept_reference = kept_raw.setdefault(
                item.reference, self.loaded.kept_part(item.reference)
            )
        needed = list(dict.fromkeys(text for item in to_score for text in item.encoded_texts))
        encoded = dict(zip(needed, self.encode(needed), strict=True))
        cleaned = list(dict.fromkeys(text for item in to_score for text in item.cleaned_texts))
        weighted = self._weighted_pieces([encoded[text] for text in cleaned], self.state.idf)
        pieces = dict(zip(cleaned, weighted, strict=True))
        for item in to_score:
            item.status = (
                unknown_words_status(
                    item.output,
                    item.reference,
                    pieces[item.clean_output],
                    pieces[item.clean_reference],
                )
                or item.status
            )
        to_score = [item for item in to_score if item.status == "scored"]
        words = word_level(
            [(pieces[item.clean_output], pieces[item.clean_reference]) for item in to_score],
            self.match_batch_size,
        )
        for item, word in zip(to_score, words, strict=True):
            item.result = self._scored(item, word, encoded)
        return [item.result or unscored(item.status) for item in items]

    def _scored(
        self, item: _Item, word: WordLevel, encoded: dict[str, TextEncoding]
    ) -> SemanticMatchResult:
        """The result of a pair whose texts are encoded and whose word level is known."""
        output, reference = encoded[item.kept_output], encoded[item.kept_reference]
        sentence = cosine(
            encoded[item.clean_output].sentence, encoded[item.clean_reference].sentence
        )
        paragraph_cosine = cosine(output.sentence, reference.sentence)
        paragraph = rescale_by_baseline(paragraph_cosine, self.state.paragraph_baseline)
        combination = self.active_combination
        aligned = combination.aligned_flips
        # Sentence by sentence, the checks read as many leading words as the model reads
        # tokens at most (a word is one token or more): all the model reads, whichever way
        # the text was cut, and a bound on their work for over-long texts; a negation
        # counts as far as the encoder's own cosine missed it. The whole-text checks of
        # calibrations saved before version 4 read the whole texts, as fitted.
        said, expected, unseen = item.output, item.reference, 1.0
        if aligned:
            said, expected = self._leading_words(said), self._leading_words(expected)
            unseen = negation_unseen(paragraph_cosine)
        negation, changed, count = flip_checks(said, expected, aligned=aligned)
        flipped = negation * unseen
        raw = combination.raw(word.f1, sentence, paragraph, flipped, changed, count)
        return SemanticMatchResult(
            score=combination.final(raw),
            raw_score=raw,
            word=word.f1,
            word_precision=word.precision,
            word_recall=word.recall,
            sentence=sentence,
            paragraph=paragraph,
            paragraph_cosine=paragraph_cosine,
            negation_flip=flipped,
            changed_numbers=changed,
            sentences=count,
            snapped=combination.snaps(raw),
            status="scored",
            output_truncated=output.truncated,
            reference_truncated=reference.truncated,
        )

    def _leading_words(self, text: str) -> str:
        """The text up to the end of its ``max_length``-th word (all of a shorter text)."""
        for count, word in enumerate(_WORD.finditer(text), start=1):
            if count == self.max_length:
                return text[: word.end()]
        return text

    def score_one(self, candidate: str, reference: Reference) -> SemanticMatchResult:
        """Score one pair, batched with the pairs other threads score at the same time.

        Concurrent calls (Opik's worker threads) are coalesced into one :meth:`score`
        call by a :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher`; the
        result equals ``score([candidate], [reference])[0]`` within float rounding.

        Raises:
            InputError: As :meth:`score`, raised in the caller's thread before batching.
        """
        checked_pairs([candidate], [reference])
        return self.batcher.submit((candidate, reference))

    def _score_items(self, items: list[tuple[str, Reference]]) -> list[SemanticMatchResult]:
        return self.score([candidate for candidate, _ in items], [ref for _, ref in items])
