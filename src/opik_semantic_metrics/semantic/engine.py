"""SemanticMatchEngine: the layered word/sentence/paragraph score, loaded once, batched.

The engine knows nothing of Opik. It takes ``candidates`` (model outputs) and
``references`` (a string each, or a list of strings that together form one answer: the
non-blank parts are joined with ``", "``) and returns one frozen
:class:`SemanticMatchResult` per pair. The formula is in
:mod:`~opik_semantic_metrics.semantic.levels` and
:mod:`~opik_semantic_metrics.semantic.combine`; here are the embeddings, the corpus
statistics and the rules for texts that cannot be scored.

**Embeddings.** One forward pass per distinct text gives both its sentence embedding
(pooled as the model's sentence-transformers files say, see
:mod:`~opik_semantic_metrics.semantic.pooling`) and its contextual word-piece vectors.
Both are kept in the process-wide embedding cache, keyed on the exact text, so a
reference shared by many items, metrics or experiments is encoded once.

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

**Texts that cannot be scored** get a defined score and a status, never an exception:

- an empty output or reference, or one of only whitespace, control and zero-width
  characters: 0.0 (``empty_output``, ``empty_reference``);
- an output or reference with no word outside NLTK's whole stop-word list (only stop
  words and punctuation; so whatever the cleaning, "No" is no answer to compare with "Yes"):
  0.0 (``no_content_output``, ``no_content_reference``), except that when
  both are like that and have the same words (ignoring case and punctuation, as "No."
  and "no"), the answers are identical and score 1.0 (``same_stop_words``); texts of
  punctuation alone have no words, so "?" against "?" scores 0.0.
- an output or reference none of whose words the model's vocabulary holds (its tokenizer
  gives only [UNK], as MiniLM's for Amharic, or drops every character): 0.0
  (``unknown_words_output``, ``unknown_words_reference``), for the model cannot read it:
  every such text of one length has the same embedding, so "hello" and "goodbye" in
  Amharic would score as alike as the same word twice. Two such texts with the same
  words are identical and score 1.0 (``same_unknown_words``). A text with some known
  pieces is scored on those, which guards nothing when most are unknown (MiniLM reads
  the Chinese "I like cats" and "I hate dogs" alike, one known character and three
  [UNK]s, and scores them 1.0).

Non-strings, a list reference that is empty or holds non-strings, and mismatched lengths
raise :class:`~opik_semantic_metrics.errors.InputError`. A text longer than the model's
limit is cut, as sentence-transformers does, and flagged.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

import numpy as np
import torch
from numpy.typing import NDArray

from opik_semantic_metrics.batching.cache import EmbeddingCache, shared_cache
from opik_semantic_metrics.batching.cpu_parallel import map_longest_first
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.batching.microbatch import MicroBatcher
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.input_files import read_json
from opik_semantic_metrics.inputs import (
    as_list,
    as_whole_number,
    check_pairs,
    check_positive_int,
    finite_numbers,
    is_blank,
    item_name,
    reference_texts,
)
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.long_texts import (
    leading_part,
    transformers_tokenizer_reads_leading_parts,
)
from opik_semantic_metrics.output_files import replace_file
from opik_semantic_metrics.semantic.calibration import (
    DEFAULT_FOLDS,
    MIN_PAIRS,
    CalibrationReport,
    cross_validate,
    fit_combination,
)
from opik_semantic_metrics.semantic.cleaning import (
    CleanedPrefixes,
    Cleaning,
    clean_text,
    stop_words_of,
    word_forms,
)
from opik_semantic_metrics.semantic.combine import (
    DEFAULT_FLOOR,
    DEFAULT_NEGATION_PENALTY,
    DEFAULT_NUMBER_PENALTY,
    DEFAULT_SNAP,
    DEFAULT_SOFTNESS,
    DEFAULT_WEIGHTS,
    LEVEL_COLUMNS,
    MAX_PARAGRAPH_BASELINE,
    RECIPE_FLOOR,
    RECIPE_SNAP,
    RECIPE_WEIGHTS,
    Combination,
    check_baseline,
    rescale_by_baseline,
)
from opik_semantic_metrics.semantic.flips import changed_numbers, negation_flip
from opik_semantic_metrics.semantic.idf import SmoothedIdf
from opik_semantic_metrics.semantic.levels import WeightedPieces, WordLevel, cosine, word_level
from opik_semantic_metrics.semantic.pooling import PoolingConfig, pool, read_pooling_config
from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS

TokenVectors = Literal["contextual", "isolated"]
Reference = str | Sequence[str]
Status = Literal[
    "scored",
    "empty_output",
    "empty_reference",
    "no_content_output",
    "no_content_reference",
    "same_stop_words",
    "unknown_words_output",
    "unknown_words_reference",
    "same_unknown_words",
]
#: The statuses of two answers that are the same, which score 1.0 unscored.
_SAME: Final = ("same_stop_words", "same_unknown_words")

#: The layered semantic score's recipe, as engine (and metric) arguments: its weights,
#: hard floor, snap and whole stop-word list, without flip penalties.
RECIPE_SETTINGS: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "weights": RECIPE_WEIGHTS,
        "floor": RECIPE_FLOOR,
        "snap": RECIPE_SNAP,
        "softness": 0.0,
        "negation_penalty": 0.0,
        "number_penalty": 0.0,
        "cleaning": "all_stop_words",
    }
)
#: How word-piece vectors can be made (see the module docstring).
TOKEN_VECTOR_MODES: Final = ("contextual", "isolated")
#: Joins the parts of a reference given as a list into one answer.
LIST_SEPARATOR: Final = ", "
#: Random reference pairs whose mean cosine is the paragraph baseline.
BASELINE_PAIRS: Final = 100
#: The paragraph baseline without a fit: no rescaling.
DEFAULT_PARAGRAPH_BASELINE: Final = 0.0
#: Word-piece markers that are not part of the piece's text (WordPiece, byte-level BPE,
#: SentencePiece).
_PIECE_MARKERS: Final = ("##", "\u0120", "\u2581")
_STATE_FORMAT: Final = "opik-semantic-metrics/semantic-match-state"
_STATE_VERSION: Final = 3
#: Versions :meth:`SemanticMatchEngine.load` reads: 1 has no calibration, 2 a calibration
#: without flip penalties (it was fitted and scored without them, so they load as 0).
_READABLE_VERSIONS: Final = (1, 2, 3)
_BASELINE_SOURCES: Final = ("fitted", "fixed", "default")


@dataclass(frozen=True)
class TextEncoding:
    """What one forward pass over a text gives.

    Attributes:
        sentence: ``(width,)`` L2-normalised sentence embedding.
        piece_ids: Ids of the text's alphanumeric word pieces, in order.
        piece_vectors: ``(pieces, width)`` their L2-normalised contextual vectors.
        truncated: The text was longer than the model's limit and was cut.
    """

    sentence: torch.Tensor
    piece_ids: tuple[int, ...]
    piece_vectors: torch.Tensor
    truncated: bool


@dataclass(frozen=True)
class FittedState:
    """Corpus statistics the score depends on.

    Attributes:
        idf: Smoothed idf of the word pieces (uniform when not fitted).
        paragraph_baseline: ``b`` of the paragraph level.
        baseline_source: ``"fitted"``, ``"fixed"`` (given by the caller) or ``"default"``.
        calibration: Weights and curve fitted to labelled pairs by
            :meth:`SemanticMatchEngine.calibrate`, used instead of the engine's own;
            ``None`` when not calibrated.
    """

    idf: SmoothedIdf
    paragraph_baseline: float
    baseline_source: Literal["fitted", "fixed", "default"]
    calibration: Combination | None = None

    @property
    def fitted(self) -> bool:
        """True once idf has been fitted on a reference corpus."""
        return self.idf.num_documents > 0


@dataclass(frozen=True)
class SemanticMatchResult:
    """The layered score of one output against its reference.

    Layer fields are ``None`` where the pair was not scored (see ``status``).

    Attributes:
        score: The final score in ``[0, 1]``.
        raw_score: The weighted sum of the levels less the flip penalties, before the
            curve and snap.
        word, word_precision, word_recall: The word level (F1) and its two halves.
        sentence: Cosine of the cleaned texts' sentence embeddings.
        paragraph: The raw texts' cosine rescaled by the baseline.
        paragraph_cosine: The raw texts' cosine (a plain sentence-embedding cosine).
        negation_flip: 1.0 where exactly one text negates, else 0.0 (see
            :mod:`~opik_semantic_metrics.semantic.flips`).
        changed_numbers: The share of the output's numbers the reference does not
            state, where both state numbers; else 0.0.
        snapped: The score was snapped to 1.0.
        status: ``"scored"``, or why not (see the module docstring).
        output_truncated, reference_truncated: A text was cut to the model's limit.
    """

    score: float
    raw_score: float | None
    word: float | None
    word_precision: float | None
    word_recall: float | None
    sentence: float | None
    paragraph: float | None
    paragraph_cosine: float | None
    negation_flip: float | None
    changed_numbers: float | None
    snapped: bool
    status: Status
    output_truncated: bool
    reference_truncated: bool


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


def _unscored(status: Status) -> SemanticMatchResult:
    return SemanticMatchResult(
        score=1.0 if status in _SAME else 0.0,
        raw_score=None,
        word=None,
        word_precision=None,
        word_recall=None,
        sentence=None,
        paragraph=None,
        paragraph_cosine=None,
        negation_flip=None,
        changed_numbers=None,
        snapped=False,
        status=status,
        output_truncated=False,
        reference_truncated=False,
    )


def reference_text(reference: object, what: str) -> str:
    """One reference as a string: a string as is, a non-empty list of strings joined.

    Raises:
        InputError: Anything else, naming the item (``what``) and the type found.
    """
    return _joined(reference_texts(reference, what))


def _joined(parts: Sequence[str]) -> str:
    """The parts of a list answer as one text, blank parts left out: ``["", " "]`` is an
    empty reference, not the separator alone, which reads as punctuation."""
    return LIST_SEPARATOR.join(part for part in parts if not is_blank(part))


def _check_state_source(source: object, idf: SmoothedIdf, baseline: float) -> None:
    """Refuse a saved baseline source that its idf and baseline contradict.

    Only an engine never fitted saves ``"default"`` (uniform idf, the default baseline),
    and only a fit on at least two distinct references saves ``"fitted"``.
    """
    if source not in _BASELINE_SOURCES:
        raise ValueError(f"unknown baseline source {source!r}")
    if source == "default" and (idf.num_documents != 0 or baseline != DEFAULT_PARAGRAPH_BASELINE):
        raise ValueError("a default baseline source with a fitted idf or baseline")
    if source == "fitted" and idf.num_documents < 2:
        raise ValueError("a fitted baseline from fewer than two references")


def _combination_json(combination: Combination) -> dict[str, object]:
    return {
        "weights": list(combination.weights),
        "floor": combination.floor,
        "snap": combination.snap,
        "softness": combination.softness,
        "negation_penalty": combination.negation_penalty,
        "number_penalty": combination.number_penalty,
    }


def _combination_from_json(data: object, version: int) -> Combination | None:
    """A saved calibration, checked as the engine's arguments are; ``None`` for none."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"a calibration must be an object, got {type(data).__name__}")
    curve = (data["weights"], data["floor"], data["snap"], data["softness"])
    # Version 2 calibrations were fitted and scored without flip penalties.
    penalties = (data["negation_penalty"], data["number_penalty"]) if version >= 3 else (0.0, 0.0)
    combination = Combination.create(*curve, *penalties)
    # Weights saved normalised load unchanged: normalising them again could move the last bit.
    word, sentence, paragraph = (float(weight) for weight in data["weights"])
    return dataclasses.replace(combination, weights=(word, sentence, paragraph))


def _check_human_scores(human_scores: object, count: int) -> NDArray[np.float64]:
    """Human scores, one finite real number per pair.

    Raises:
        ValueError: Not a list (or array) of as many finite numbers as there are pairs.
    """
    if isinstance(human_scores, str | bytes) or not isinstance(human_scores, Iterable):
        raise ValueError(
            f"Expected `human_scores` to be a list of numbers, got {type(human_scores).__name__}."
        )
    values = list(human_scores)
    if len(values) != count:
        raise ValueError(
            f"Expected one human score per pair: {count} pairs but {len(values)} human scores."
        )
    scores = finite_numbers(values, "human_scores", "human score")
    if scores.ndim != 1:
        raise ValueError(f"Expected one number a pair in `human_scores`, got shape {scores.shape}.")
    return scores


def _check_pairs(candidates: object, references: object) -> tuple[list[str], list[str]]:
    """Validate inputs once, at the entry point; return outputs and joined references."""
    outputs, groups = check_pairs(candidates, references)
    return outputs, [_joined(group) for group in groups]


def _status(output: str, reference: str, clean_output: str, clean_reference: str) -> Status:
    if is_blank(output):
        return "empty_output"
    if is_blank(reference):
        return "empty_reference"
    if not clean_output and not clean_reference:
        # Punctuation alone ("?" against "...") is no answer, not the same answer.
        output_words = word_forms(output)
        same = bool(output_words) and output_words == word_forms(reference)
        return "same_stop_words" if same else "no_content_output"
    if not clean_output:
        return "no_content_output"
    if not clean_reference:
        return "no_content_reference"
    return "scored"


def _unknown_words_status(
    output: str, reference: str, output_pieces: WeightedPieces, reference_pieces: WeightedPieces
) -> Status | None:
    """The status of a pair one of whose texts has no word the model knows, else None."""
    if output_pieces.empty and reference_pieces.empty:
        same = word_forms(output) == word_forms(reference)
        return "same_unknown_words" if same else "unknown_words_output"
    if output_pieces.empty:
        return "unknown_words_output"
    if reference_pieces.empty:
        return "unknown_words_reference"
    return None


def _is_word_piece(token: str) -> bool:
    """Whether a vocabulary entry is alphanumeric once its piece marker is removed."""
    for marker in _PIECE_MARKERS:
        if token.startswith(marker):
            token = token[len(marker) :]
            break
    return token.isalnum()


class SemanticMatchEngine:
    """The layered semantic score with a model loaded once and shared.

    Args:
        model: Hub id, local directory, or ``"all-MiniLM-L6-v2"`` (the packaged copy).
        weights: Relative weights of the word, sentence and paragraph levels.
        floor: Where the output curve bends unrelated answers to 0 (see
            :mod:`~opik_semantic_metrics.semantic.combine`).
        snap: Scores at or above it become 1.0; ``None`` never snaps.
        softness: Width of the curve's bend; 0 is the recipe's hard floor, under which
            every raw score at or below ``floor`` scores exactly 0.
        negation_penalty: Subtracted from the raw score where exactly one text negates
            (see :mod:`~opik_semantic_metrics.semantic.flips`); 0 turns the check off.
        number_penalty: Subtracted, times the share of the output's numbers the
            reference does not state, from the raw score; 0 turns the check off.
        token_vectors: ``"contextual"`` or ``"isolated"`` word-piece vectors.
        cleaning: ``"keep_negations"`` (default) or the recipe's ``"all_stop_words"``
            (see :mod:`~opik_semantic_metrics.semantic.cleaning`).
        paragraph_baseline: A fixed paragraph baseline; ``None`` fits it with
            :meth:`fit` (0 until then).
        baseline_pairs: Random reference pairs averaged for the fitted baseline.
        seed: Seed of the random pairs, a whole number of 0 or more.
        device: ``None`` picks CUDA when available, else the CPU.
        dtype: Model weight type: float32 by default; ``"fast"`` is bfloat16 on GPUs and
            CPUs with native bf16 (float16 on older GPUs, float32 on other CPUs); any
            ``torch.dtype`` or its name.
        batch_size: Most texts per forward pass and items per micro-batch.
        cache: Where embeddings are kept; the process-wide cache by default.
        trust_remote_code: Allow models with code in their Hub repository.

    Raises:
        ValueError: A bad argument, or a sentence-transformers pipeline other than
            Transformer, Pooling, Normalize.
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
        model: str = "all-MiniLM-L6-v2",
        *,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        floor: float = DEFAULT_FLOOR,
        snap: float | None = DEFAULT_SNAP,
        softness: float = DEFAULT_SOFTNESS,
        negation_penalty: float = DEFAULT_NEGATION_PENALTY,
        number_penalty: float = DEFAULT_NUMBER_PENALTY,
        token_vectors: TokenVectors = "contextual",
        cleaning: Cleaning = "keep_negations",
        paragraph_baseline: float | None = None,
        baseline_pairs: int = BASELINE_PAIRS,
        seed: int = 0,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        self.combination = Combination.create(
            weights, floor, snap, softness, negation_penalty, number_penalty
        )
        if token_vectors not in TOKEN_VECTOR_MODES:
            raise ValueError(
                f"Expected `token_vectors` in {TOKEN_VECTOR_MODES}, got {token_vectors!r}."
            )
        baseline_pairs = check_positive_int(baseline_pairs, "baseline_pairs")
        batch_size = check_positive_int(batch_size, "batch_size")
        self.token_vectors: TokenVectors = token_vectors
        self._stop_words = stop_words_of(cleaning)
        self.cleaning: Cleaning = cleaning
        self.baseline_pairs = baseline_pairs
        # Checked now: a seed of None would draw other baseline pairs on every fit.
        checked_seed = as_whole_number(seed)
        if checked_seed is None or checked_seed < 0:
            raise ValueError(f"Expected `seed` to be a whole number of 0 or more, got {seed!r}.")
        self.seed = checked_seed
        self.batch_size = batch_size
        # Halved where a batch runs out of memory, for every later call (batching/memory.py).
        self._forward_batch_size = HalvingBatchSize(batch_size)
        # The word level's greedy match halves on its own (its memory is not the encoder's).
        self._match_batch_size = HalvingBatchSize(batch_size)
        self.cache = cache if cache is not None else shared_cache()
        self.fixed_baseline: float | None = None
        if paragraph_baseline is not None:
            self.fixed_baseline = check_baseline(paragraph_baseline)
        self.state = FittedState(
            idf=SmoothedIdf.uniform(),
            paragraph_baseline=(
                DEFAULT_PARAGRAPH_BASELINE if self.fixed_baseline is None else self.fixed_baseline
            ),
            baseline_source="default" if self.fixed_baseline is None else "fixed",
        )
        self.encoder: LoadedEncoder = load_encoder(
            model, device=device, dtype=dtype, trust_remote_code=trust_remote_code
        )
        self.model_name = self.encoder.name
        self.pooling: PoolingConfig = read_pooling_config(self.encoder.location)
        self.max_length = self.pooling.max_seq_length or self.encoder.max_length
        tokenizer = self.encoder.tokenizer
        with self.encoder.tokenizer_lock:
            special = set(tokenizer.all_special_ids)
            vocabulary = tokenizer.get_vocab()
            # Which token ids are word pieces, looked up for a whole text at once.
            self._is_word_piece = torch.zeros(max(vocabulary.values()) + 1, dtype=torch.bool)
            self._is_word_piece[
                [i for token, i in vocabulary.items() if i not in special and _is_word_piece(token)]
            ] = True
            probe = tokenizer("a")["input_ids"]
            probe_piece = tokenizer("a", add_special_tokens=False)["input_ids"]
        # The special tokens around a one-piece text, to frame isolated pieces.
        at = next(i for i in range(len(probe)) if probe[i : i + len(probe_piece)] == probe_piece)
        self._frame = (probe[:at], probe[at + len(probe_piece) :])
        with self.encoder.tokenizer_lock:
            self._cuts_long_texts = transformers_tokenizer_reads_leading_parts(
                tokenizer, str.lower if self.pooling.lowercase else str
            )
        self._batcher: MicroBatcher[tuple[str, Reference], SemanticMatchResult] = MicroBatcher(
            self._score_items, max_batch_size=batch_size
        )

    @property
    def active_combination(self) -> Combination:
        """The weights and curve scores use: the calibrated ones when calibrated."""
        return self.state.calibration or self.combination

    # -- embeddings --------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> list[TextEncoding]:
        """Sentence embeddings and word-piece vectors of texts, through the cache."""
        namespace = (self.encoder.cache_key, "semantic-match-text", self.max_length)
        return self.cache.get_or_compute(namespace, texts, self._encode_uncached)

    def _tokenize(self, texts: Sequence[str], **options: object) -> dict[str, torch.Tensor]:
        prepared = [text.lower() for text in texts] if self.pooling.lowercase else list(texts)
        with self.encoder.tokenizer_lock:
            return self.encoder.tokenizer(prepared, **options)

    def _token_count(self, text: str) -> int:
        return len(self._tokenize([text], verbose=False)["input_ids"][0])

    def _kept_part(self, text: str) -> str:
        """The leading part of an over-long text that yields the tokens the limit keeps
        (``models/long_texts.py``)."""
        if not self._cuts_long_texts:
            return text
        return leading_part(text, self._token_count, self.max_length)

    def _kept_clean_text(self, text: str, stop_words: frozenset[str]) -> str:
        """The cleaned text, cut to the leading part that yields the tokens the limit
        keeps: only as much of an over-long text is cleaned as that part needs."""
        if not self._cuts_long_texts:
            return clean_text(text, stop_words)
        cleaned = CleanedPrefixes(text, stop_words)
        part = leading_part(
            text, lambda part: self._token_count(cleaned.of(len(part))), self.max_length
        )
        return cleaned.of(len(part))

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return self.encoder.hidden_states(input_ids, mask).float()

    def _sentence_embeddings(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pooled = pool(hidden, mask.to(hidden.device), self.pooling.modes)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def _encode_uncached(self, texts: list[str]) -> list[TextEncoding]:
        """Batches of texts of similar token count, longest first, so that they pad little
        (``batching/lengths.py``); on the CPU side by side on single-threaded workers
        (``batching/cpu_parallel.py``); halved where a batch runs out of memory
        (``batching/memory.py``)."""
        id_lists = self._tokenize(texts, truncation=True, max_length=self.max_length)["input_ids"]
        return map_longest_first(
            functools.partial(self._forward_batch_size.run, self._encode_batch),
            list(zip(texts, id_lists, strict=True)),
            batch_size=self._forward_batch_size.size,
            length=lambda item: len(item[1]),
            device=self.encoder.device,
        )

    def _encode_batch(self, items: list[tuple[str, list[int]]]) -> list[TextEncoding]:
        """One forward pass: each text's sentence embedding and word-piece vectors."""
        id_lists = [ids for _, ids in items]
        pad_id = self.encoder.tokenizer.pad_token_id or 0
        input_ids, mask = padded_batch(id_lists, pad_id, self.encoder.device)
        hidden = self._forward(input_ids, mask)
        sentences = self._sentence_embeddings(hidden, mask)
        vectors = torch.nn.functional.normalize(hidden, dim=-1)
        full = self._reached_limit([text for text, _ in items], [len(ids) for ids in id_lists])
        encodings = []
        for row, ids in enumerate(id_lists):
            row_ids = torch.tensor(ids, dtype=torch.long)
            keep = self._is_word_piece[row_ids].nonzero().flatten()
            encodings.append(
                TextEncoding(
                    sentence=sentences[row].clone(),
                    piece_ids=tuple(row_ids[keep].tolist()),
                    # Indexing by a tensor of positions copies.
                    piece_vectors=vectors[row, keep.to(vectors.device)],
                    truncated=full[row],
                )
            )
        return encodings

    def _reached_limit(self, texts: list[str], lengths: list[int]) -> list[bool]:
        """Which texts were cut: only one at the limit can have been, so only those are
        tokenized again without it."""
        at_limit = [i for i, length in enumerate(lengths) if length >= self.max_length]
        cut = [False] * len(texts)
        if at_limit:
            full = self._tokenize([texts[i] for i in at_limit], verbose=False)["input_ids"]
            for i, ids in zip(at_limit, full, strict=True):
                cut[i] = len(ids) > self.max_length
        return cut

    def _encode_pieces(self, keys: list[str]) -> list[torch.Tensor]:
        """The isolated vector of each word piece (its id as text), encoded on its own, in
        batches of the size known to fit (:meth:`HalvingBatchSize.run` cuts the list)."""
        return self._forward_batch_size.run(self._encode_piece_batch, keys)

    def _encode_piece_batch(self, keys: list[str]) -> list[torch.Tensor]:
        before, after = self._frame
        input_ids = torch.tensor([[*before, int(key), *after] for key in keys])
        input_ids = input_ids.to(self.encoder.device)
        mask = torch.ones_like(input_ids)
        embeddings = self._sentence_embeddings(self._forward(input_ids, mask), mask)
        return [embeddings[row].clone() for row in range(len(keys))]

    def _weighted_pieces(
        self, encodings: Sequence[TextEncoding], idf: SmoothedIdf
    ) -> list[WeightedPieces]:
        """The word level's input for each encoded (cleaned) text.

        Isolated vectors depend on the piece only: those of all the texts are looked up
        (and the missing ones computed) in one call, cached by piece id.
        """
        isolated: tuple[torch.Tensor, torch.Tensor] | None = None
        if self.token_vectors == "isolated":
            namespace = (self.encoder.cache_key, "semantic-match-isolated-piece")
            ids = sorted({i for encoding in encodings for i in encoding.piece_ids})
            if ids:
                found = self.cache.get_or_compute(
                    namespace, [str(i) for i in ids], self._encode_pieces
                )
                isolated = (torch.tensor(ids, dtype=torch.long), torch.stack(found))
        weighted = []
        for encoding in encodings:
            piece_ids = torch.tensor(encoding.piece_ids, dtype=torch.long)
            vectors = encoding.piece_vectors
            if isolated is not None and encoding.piece_ids:
                known, known_vectors = isolated
                vectors = known_vectors[torch.searchsorted(known, piece_ids).to(vectors.device)]
            weights = idf.weigh(piece_ids).to(vectors.device)
            weighted.append(WeightedPieces(vectors=vectors, weights=weights))
        return weighted

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
            clean = self._kept_clean_text(reference, self._stop_words)
            if clean:
                texts += [self._kept_part(reference), clean]
                cleaned.append(clean)
        namespace = (self.encoder.cache_key, "semantic-match-text", self.max_length)
        kept = self.cache.fill(namespace, texts, self._encode_uncached)
        if self.token_vectors == "isolated":
            # Their word pieces' isolated vectors, cached by piece id.
            found = self.cache.lookup(namespace, cleaned)
            self._weighted_pieces(list(found.values()), self.state.idf)
        return kept

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
        token_ids = self._tokenize(texts, add_special_tokens=False, verbose=False)["input_ids"]
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
        outputs, joined_references = _check_pairs(candidates, references)
        human = _check_human_scores(human_scores, len(outputs))
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
        """Write the fitted state (idf, baseline, model name) to a JSON file."""
        state = self.state
        document = {
            "format": _STATE_FORMAT,
            "version": _STATE_VERSION,
            "model": self.model_name,
            "idf": state.idf.to_json(),
            "paragraph_baseline": state.paragraph_baseline,
            "baseline_source": state.baseline_source,
            "calibration": None
            if state.calibration is None
            else _combination_json(state.calibration),
        }
        # A write that fails halfway leaves the state that was there whole.
        replace_file(path, json.dumps(document).encode("utf-8"))

    def load(self, path: str | Path) -> FittedState:
        """Read a state written by :meth:`save` (a fixed baseline of this engine wins).

        Raises:
            ValueError: The file cannot be read (see
                :func:`~opik_semantic_metrics.input_files.read_json`), is not a saved
                state, or is one fitted for another model.
        """
        try:
            document = read_json(path)
            if (
                document.get("format") != _STATE_FORMAT
                or document.get("version") not in _READABLE_VERSIONS
            ):
                raise ValueError(f"expected format {_STATE_FORMAT!r} version 1 to {_STATE_VERSION}")
            model = document["model"]
            idf = SmoothedIdf.from_json(document["idf"])
            baseline = check_baseline(document["paragraph_baseline"])
            source = document["baseline_source"]
            _check_state_source(source, idf, baseline)
            calibration = _combination_from_json(document.get("calibration"), document["version"])
            vocabulary_size = self._is_word_piece.numel()
            if any(token_id >= vocabulary_size for token_id in idf.table.weights):
                raise ValueError(f"a token id beyond the model's {vocabulary_size} word pieces")
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise ValueError(
                f"{str(path)!r} is not a saved SemanticMatch state: {error}"
            ) from error
        if model != self.model_name:
            raise ValueError(
                f"{str(path)!r} was fitted for {model!r}, but this engine uses "
                f"{self.model_name!r}: word-piece ids differ between models."
            )
        if self.fixed_baseline is not None:
            state = FittedState(idf, self.fixed_baseline, "fixed", calibration)
        else:
            state = FittedState(idf, baseline, source, calibration)
        self.state = state
        return state

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
        outputs, joined_references = _check_pairs(candidates, references)
        # Over-long texts are read only as far as the token limit keeps (cleaned and
        # raw), once each however many items share them.
        texts = {*outputs, *joined_references}
        kept_clean = {text: self._kept_clean_text(text, self._stop_words) for text in texts}
        # Which texts are no answer is decided with every stop word left out, whatever the
        # cleaning: "No." against "no" is the same answer, "No" against "Yes" none.
        content = kept_clean
        if self._stop_words != ENGLISH_STOP_WORDS:
            content = {text: self._kept_clean_text(text, ENGLISH_STOP_WORDS) for text in texts}
        items = [
            _Item(
                output,
                reference,
                kept_clean[output],
                kept_clean[reference],
                _status(output, reference, content[output], content[reference]),
            )
            for output, reference in zip(outputs, joined_references, strict=True)
        ]
        to_score = [item for item in items if item.status == "scored"]
        kept_raw: dict[str, str] = {}
        for item in to_score:
            item.kept_output = kept_raw.setdefault(item.output, self._kept_part(item.output))
            item.kept_reference = kept_raw.setdefault(
                item.reference, self._kept_part(item.reference)
            )
        needed = list(dict.fromkeys(text for item in to_score for text in item.encoded_texts))
        encoded = dict(zip(needed, self.encode(needed), strict=True))
        cleaned = list(dict.fromkeys(text for item in to_score for text in item.cleaned_texts))
        weighted = self._weighted_pieces([encoded[text] for text in cleaned], self.state.idf)
        pieces = dict(zip(cleaned, weighted, strict=True))
        for item in to_score:
            item.status = (
                _unknown_words_status(
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
            self._match_batch_size,
        )
        for item, word in zip(to_score, words, strict=True):
            item.result = self._scored(item, word, encoded)
        return [item.result or _unscored(item.status) for item in items]

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
        flipped = negation_flip(item.output, item.reference)
        changed = changed_numbers(item.output, item.reference)
        raw = combination.raw(word.f1, sentence, paragraph, flipped, changed)
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
            snapped=combination.snaps(raw),
            status="scored",
            output_truncated=output.truncated,
            reference_truncated=reference.truncated,
        )

    def score_one(self, candidate: str, reference: Reference) -> SemanticMatchResult:
        """Score one pair, batched with the pairs other threads score at the same time.

        Concurrent calls (Opik's worker threads) are coalesced into one :meth:`score`
        call by a :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher`; the
        result equals ``score([candidate], [reference])[0]`` within float rounding.

        Raises:
            InputError: As :meth:`score`, raised in the caller's thread before batching.
        """
        _check_pairs([candidate], [reference])
        return self._batcher.submit((candidate, reference))

    def _score_items(self, items: list[tuple[str, Reference]]) -> list[SemanticMatchResult]:
        return self.score([candidate for candidate, _ in items], [ref for _, ref in items])
