"""BERTScoreEngine: load once, score many lists of pairs, faithful to bert_score 0.3.13.

The engine knows nothing of Opik. It takes ``candidates`` and ``references`` (a string,
or a list of strings per candidate) and returns one frozen :class:`BERTScoreResult` per
candidate. Scores equal bert_score's with ``batch_size=1`` (its padding-free value) to
float32 rounding, however the pairs are batched.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from torch.nn.utils.rnn import pad_sequence

from opik_semantic_metrics.batching.cache import EmbeddingCache, shared_cache
from opik_semantic_metrics.batching.cpu_parallel import (
    map_longest_first,
    side_by_side_workers,
    use_threads,
)
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.batching.microbatch import MicroBatcher
from opik_semantic_metrics.bertscore.baseline import (
    Baseline,
    compute_baseline,
    packaged_baseline_path,
    read_baseline,
)
from opik_semantic_metrics.bertscore.greedy import GreedyMatch, greedy_match
from opik_semantic_metrics.bertscore.idf import IdfTable, fit_idf, uniform_weights
from opik_semantic_metrics.bertscore.tokenize import EncodedText, TextEncoder
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import (
    as_list,
    check_flag,
    check_pairs,
    check_positive_int,
    check_text,
    item_name,
    reference_texts,
)
from opik_semantic_metrics.models.devices import resolve_device, resolve_dtype
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.layers import checked_layer, hidden_size
from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.registry import bertscore_layer, default_model_for_lang
from opik_semantic_metrics.models.sources import (
    ModelSource,
    checked_model_name,
    resolve_model_source,
)

logger = logging.getLogger(__name__)

#: The bert_score release whose behaviour this engine reproduces.
FAITHFUL_TO_BERT_SCORE = "0.3.13"
#: The version bert_score 0.3.13 writes into its own hash: its ``__version__`` was left at
#: "0.3.12" in that release. Writing the same string makes our hash equal to the one
#: bert_score prints for the same settings, which is what a reproducibility hash is for.
BERT_SCORE_HASH_VERSION = "0.3.12"

Reference = str | Sequence[str]

#: Fewest items a batcher worker's batches are sized for: more workers would each form
#: batches too small to pay (``docs/design/micro-batching.md``).
_ITEMS_PER_WORKER = 8


@dataclass(frozen=True)
class TokenMatch:
    """One candidate token and the reference token it matched best.

    Attributes:
        candidate_token, reference_token: Readable token strings.
        similarity: Their cosine similarity (raw, not rescaled).
    """

    candidate_token: str
    reference_token: str
    similarity: float


@dataclass(frozen=True)
class BERTScoreResult:
    """BERTScore of one candidate against its reference(s).

    With several references each of P, R and F1 is the maximum over the references
    (bert_score's rule), so the three may come from different references.

    Attributes:
        precision, recall, f1: The scores (rescaled when the engine rescales).
        candidate_truncated: The candidate was longer than the model's limit and was cut.
        reference_truncated: At least one reference was cut.
        candidate_empty: The candidate had no tokens (scores are 0).
        reference_empty: The best-F1 reference had no tokens (scores are 0).
        opposite_signs: Against the best-F1 reference, the raw P and R had opposite signs,
            so its raw F1 is 0 where bert_score's ``2PR / (P + R)`` is unbounded
            (``greedy.py``).
        best_reference: Index of the reference with the highest F1.
        candidate_unknown_tokens, reference_unknown_tokens: How many tokens of the
            candidate and of the best-F1 reference the tokenizer could only read as its
            unknown token (``[UNK]``): the model cannot tell such words apart.
        best_match, worst_match: The candidate's best- and worst-matched tokens against
            the best reference; ``None`` when the candidate or that reference is empty, or
            when every candidate token weighs 0 under idf.
    """

    precision: float
    recall: float
    f1: float
    candidate_truncated: bool
    reference_truncated: bool
    candidate_empty: bool
    reference_empty: bool
    opposite_signs: bool
    best_reference: int
    candidate_unknown_tokens: int
    reference_unknown_tokens: int
    best_match: TokenMatch | None
    worst_match: TokenMatch | None


@dataclass(frozen=True)
class _TextEmbedding:
    """A text's token ids, L2-normalised token embeddings ``(length, dim)`` and weights."""

    encoded: EncodedText
    embeddings: torch.Tensor
    weights: torch.Tensor


#: One pair's greedy match: its (P, R, F1), whether P and R have opposite signs, and each
#: candidate token's best similarity and the reference token it matched.
_PairMatch = tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]


def _best_reference(
    group_scores: torch.Tensor, group: Sequence[str], embedded: dict[str, _TextEmbedding]
) -> int:
    """The place of the reference with the best F1, the one a result explains.

    An empty reference's F1 is 0 by bert_score's rule, and so is that of a pair whose P
    and R have opposite signs: of references tied at the best F1, a non-empty one is
    explained (the per-column maxima hold its R or P), whatever their order.
    """
    f1 = torch.nan_to_num(group_scores[:, 2], nan=-torch.inf)
    tied = (f1 == f1.max()).nonzero().flatten().tolist()
    return next((i for i in tied if not embedded[group[i]].encoded.empty), tied[0])


def _check_asked_together(
    idf: bool,
    idf_references: object,
    rescale_with_baseline: bool,
    baseline_path: object,
    lang: object,
) -> None:
    """Refuse settings that mean nothing without another: a ``baseline_path`` without
    rescaling, ``idf_references`` without idf (bert_score ignores both; one given is the
    other wanted), or a ``lang`` that is no language code."""
    if baseline_path is not None and not rescale_with_baseline:
        raise ValueError(
            "`baseline_path` is read only with `rescale_with_baseline=True`: pass both."
        )
    if idf_references is not None and not idf:
        raise ValueError("`idf_references` are used only with `idf=True`: pass both.")
    if lang is not None and not isinstance(lang, str):
        raise ValueError(f"Expected `lang` to be a language code such as 'en', got {lang!r}.")


def _resolved_model(
    model: str | None, num_layers: int | None, lang: str | None, trust_remote_code: bool
) -> tuple[str, str | None, ModelSource, int]:
    """The model to load (``lang``'s default where none is named, as bert_score: ``lang``
    then defaults to ``"en"``), the ``lang`` that chose it, where it comes from, and its
    layer (bert_score's tuned layer where none is named), checked against the model's
    configuration: the model itself loads on first use."""
    if model is None:
        lang = lang or "en"
        model = default_model_for_lang(lang)
    model = checked_model_name(model)
    source = resolve_model_source(model)
    if num_layers is None:
        num_layers = bertscore_layer(model)
    num_layers, _ = checked_layer(source, num_layers, trust_remote_code, "num_layers")
    return model, lang, source, num_layers


class BERTScoreEngine:
    """BERTScore with a model loaded once and shared.

    Args:
        model: Hub id, local directory or ``all-MiniLM-L6-v2``. ``None`` follows bert_score:
            the default model of ``lang`` (``en``: ``roberta-large``).
        num_layers: Layer to use; ``None`` takes bert_score's tuned layer for known models
            and the last layer otherwise.
        lang: Language code, used to choose the default model and the packaged baseline.
        idf: Weigh tokens by idf; the weights must then be fitted with :meth:`fit_idf`
            (or passed as ``idf_references``) on a corpus of references.
        idf_references: References to fit idf on at construction.
        rescale_with_baseline: Rescale scores with a baseline (see ``baseline.py``).
        baseline_path: A baseline file of your own; without it bert_score's packaged file
            for ``lang`` and the model is used.
        device: ``None`` picks CUDA when available, else the CPU.
        dtype: Model weight type: float32 by default (exact); ``"fast"`` is bfloat16 on
            CPUs with native bf16 and on GPUs that have it (float16 on older GPUs), within
            about 2e-3 of F1 from float32 and no longer independent of batching (about
            1e-3; see the README's performance section); any ``torch.dtype`` or its name.
        batch_size: Most texts per forward pass and pairs per matching batch.
        micro_batch_size: Most concurrent :meth:`score_one` calls in batches at a time:
            16, Opik's default number of scoring threads. On a CPU they are shared
            between batcher workers that share the cores (two for 16 items: on 2
            cores, two single-threaded batches of up to 8 side by side; on more cores,
            each worker gets half of them), because side-by-side batches score an
            experiment per item inside Opik faster than one worker with all the cores
            (figures: ``docs/design/micro-batching.md``).
        cache: Where token embeddings are kept; the process-wide cache by default.
        use_fast_tokenizer: Load the fast tokenizer class (bert_score's hash notes it).
        trust_remote_code: Allow models with code in their Hub repository.

    Raises:
        ValueError: A setting of the wrong type (``idf="False"``) or inconsistent with
            another (``rescale_with_baseline`` with neither ``lang`` nor
            ``baseline_path``, ``idf_references`` without ``idf``, a layer out of range, no
            baseline for the model).
        ModelUnavailableError: The model cannot be had.

    Example:
        >>> engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
        >>> [result] = engine.score(["A cat sits on the mat."], ["A cat sat on the mat."])
        >>> round(result.f1, 4)
        0.9387
    """

    def __init__(
        self,
        model: str | None = None,
        num_layers: int | None = None,
        *,
        lang: str | None = None,
        idf: bool = False,
        idf_references: Sequence[Reference] | None = None,
        rescale_with_baseline: bool = False,
        baseline_path: str | Path | None = None,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        batch_size: int = 64,
        use_fast_tokenizer: bool = False,
        trust_remote_code: bool = False,
        micro_batch_size: int = 16,
        cache: EmbeddingCache | None = None,
    ) -> None:
        batch_size = check_positive_int(batch_size, "batch_size")
        micro_batch_size = check_positive_int(micro_batch_size, "micro_batch_size")
        idf, rescale_with_baseline, use_fast_tokenizer, trust_remote_code = (
            check_flag(value, name)
            for value, name in (
                (idf, "idf"),
                (rescale_with_baseline, "rescale_with_baseline"),
                (use_fast_tokenizer, "use_fast_tokenizer"),
                (trust_remote_code, "trust_remote_code"),
            )
        )
        _check_asked_together(idf, idf_references, rescale_with_baseline, baseline_path, lang)
        model, lang, source, num_layers = _resolved_model(
            model, num_layers, lang, trust_remote_code
        )
        self.model_name = source.name
        self.num_layers = num_layers
        self.lang = lang
        self.idf = idf
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline_path = Path(baseline_path) if baseline_path is not None else None
        self.custom_baseline = baseline_path is not None
        self.batch_size = batch_size
        self._forward_batch_size = HalvingBatchSize(batch_size)
        self._match_batch_size = HalvingBatchSize(batch_size)
        self.cache = cache if cache is not None else shared_cache()
        self.batcher = self._make_batcher(device, dtype, micro_batch_size)
        self.use_fast_tokenizer = use_fast_tokenizer
        self._load_args = {
            "model": model,
            "layer": num_layers,
            "device": device,
            "dtype": dtype,
            "use_fast_tokenizer": use_fast_tokenizer,
            "trust_remote_code": trust_remote_code,
        }
        self.baseline: Baseline | None = None
        if rescale_with_baseline:
            self.baseline = self._read_baseline(model, lang, num_layers)
        self._encoder: LoadedEncoder | None = None
        self._text_encoder: TextEncoder | None = None
        self.idf_table: IdfTable | None = None
        if idf_references is not None:
            self._fit_idf(idf_references, "idf_references")

    def _make_batcher(
        self,
        device: str | torch.device | None,
        dtype: str | torch.dtype | None,
        micro_batch_size: int,
    ) -> MicroBatcher[tuple[str, Reference], BERTScoreResult]:
        """The batcher of :meth:`score_one` calls: on a CPU, workers that share the cores,
        so that micro-batches compute side by side (``batching/cpu_parallel.py``); as many
        as keep each batch at ``_ITEMS_PER_WORKER`` items or more (2 for 16 items).

        Raises:
            ValueError: A bad ``device`` or ``dtype`` (checked here, not on every item).
        """
        torch_device = resolve_device(device)
        resolve_dtype(dtype, torch_device)  # a bad dtype fails here, not on every item
        cores = side_by_side_workers(torch_device)
        workers = max(1, min(cores, micro_batch_size // _ITEMS_PER_WORKER))
        return MicroBatcher(
            self._score_items,
            max_batch_size=max(1, micro_batch_size // workers),
            workers=workers,
            worker_setup=functools.partial(use_threads, cores // workers) if workers > 1 else None,
        )

    def _read_baseline(self, model: str, lang: str | None, num_layers: int) -> Baseline:
        """The rescaling baseline of ``num_layers``: from ``baseline_path``, else the
        packaged file of ``lang`` and ``model`` (whose path becomes ``baseline_path``).

        Raises:
            ValueError: Neither ``lang`` nor ``baseline_path``, or no such baseline.
        """
        if self.baseline_path is None:
            if lang is None:
                raise ValueError(
                    "Rescaling needs `lang` (to find bert_score's packaged baseline) or "
                    "`baseline_path`."
                )
            self.baseline_path = packaged_baseline_path(lang, model)
        try:
            return read_baseline(self.baseline_path, num_layers)
        except FileNotFoundError as error:
            if self.custom_baseline:
                raise ValueError(f"Cannot read `baseline_path`: {error}.") from error
            raise ValueError(
                f"No baseline for {model!r} on {lang!r}: {error}. Pass `baseline_path` "
                "(make one with `BERTScoreEngine.compute_baseline`)."
            ) from error

    # -- loading -----------------------------------------------------------------------

    @property
    def encoder(self) -> LoadedEncoder:
        """The shared model and tokenizer, loaded on first use."""
        if self._encoder is None:
            self._encoder = load_encoder(**self._load_args)  # type: ignore[arg-type]
        return self._encoder

    @property
    def text_encoder(self) -> TextEncoder:
        """bert_score-faithful tokenization for this model."""
        if self._text_encoder is None:
            encoder = self.encoder
            self._text_encoder = TextEncoder(
                encoder.tokenizer, encoder.max_length, encoder.tokenizer_lock
            )
        return self._text_encoder

    @property
    def hash(self) -> str:
        """Reproducibility hash in bert_score's format (``get_hash``)."""
        text = (
            f"{self.model_name}_L{self.num_layers}{'_idf' if self.idf else '_no-idf'}"
            f"_version={BERT_SCORE_HASH_VERSION}(hug_trans={transformers.__version__})"
        )
        if self.rescale_with_baseline:
            text += "-custom-rescaled" if self.custom_baseline else "-rescaled"
        if self.use_fast_tokenizer:
            text += "_fast-tokenizer"
        return text

    # -- idf ---------------------------------------------------------------------------

    def fit_idf(self, references: Sequence[Reference]) -> IdfTable:
        """Fit idf weights on a reference corpus (lists of references are flattened).

        Replaces weights fitted before; used only when the engine has ``idf=True``. The
        references are then prepared (:meth:`prepare`) too.

        Raises:
            InputError: Not a list, an empty list, or an item that is not a string or a
                non-empty list of strings.
        """
        table = self._fit_idf(references, "references")
        # The references were just read: encode them too, as prepare() does.
        self.prepare(references)
        return table

    def _fit_idf(self, references: Sequence[Reference], name: str) -> IdfTable:
        """:meth:`fit_idf`, its errors naming the argument ``name``."""
        items = as_list(references, name)
        if len(items) == 0:
            # Fitted on nothing, every weight would be 0 and every score undefined.
            raise InputError(
                f"Expected at least one reference in `{name}` to fit idf on, got none."
            )
        corpus = [
            text
            for index, item in enumerate(items)
            for text in reference_texts(
                item, f"{item_name('reference', index, len(items))} of `{name}`"
            )
        ]
        self.idf_table = fit_idf(encoded.ids for encoded in self.text_encoder.encode_many(corpus))
        return self.idf_table

    def _check_idf_fitted(self) -> None:
        if self.idf and self.idf_table is None:
            raise InputError(
                "idf weights are not fitted: call `fit_idf(references)` on your dataset's "
                "references first (idf is a corpus-level statistic, never fitted per item)."
            )

    def _weights(self, encoded: Sequence[EncodedText]) -> list[torch.Tensor]:
        """Token weights of each text, looked up for all their tokens at once."""
        self._check_idf_fitted()
        if not encoded:
            return []
        ids = torch.tensor(list(itertools.chain.from_iterable(item.ids for item in encoded)))
        if self.idf_table is not None and self.idf:
            weights = self.idf_table.weigh(ids)
        else:
            tokenizer = self.encoder.tokenizer
            # bert_score zeroes exactly these two ids when idf is off (GPT-2 has neither).
            special = [tokenizer.cls_token_id, tokenizer.sep_token_id]
            weights = uniform_weights(ids, [token for token in special if token is not None])
        return list(weights.split([len(item.ids) for item in encoded]))

    # -- embeddings --------------------------------------------------------------------

    @property
    def _cache_namespace(self) -> tuple[Hashable, str]:
        return (self.encoder.cache_key, "bertscore-token-embeddings")

    def prepare(self, references: Sequence[Reference]) -> int:
        """Encode a dataset's references into the embedding cache before scoring it.

        One pass over the whole list, in length-sorted batches, so that scoring its
        items (per item from Opik's threads, or in lists) encodes only their candidates:
        a few items at a time make small batches, the whole list makes full ones. Scores
        are the same with or without it. The cache stays within its bound: where the
        references do not all fit, the leading ones are kept and a warning says how
        many (``EmbeddingCache.fill``).

        Args:
            references: Per item, a reference text or a non-empty list of them, as
                :meth:`score` takes them; repeats are encoded once.

        Returns:
            How many distinct reference texts are in the cache.

        Raises:
            InputError: Not a list, or an item :meth:`score` would refuse, named.
        """
        items = as_list(references, "references")
        texts = [
            text
            for index, item in enumerate(items)
            for text in reference_texts(item, item_name("reference", index, len(items)))
        ]
        return self.cache.fill(self._cache_namespace, texts, self._encode_and_embed)

    def _embed(
        self, texts: Sequence[str], *, cached: Sequence[str] = ()
    ) -> dict[str, _TextEmbedding]:
        """Token ids, embeddings and weights of the distinct ``texts`` and ``cached`` texts.

        Ids and embeddings of ``cached`` texts come from the process-wide cache, keyed on
        the exact text and everything the embeddings depend on, so a reference is encoded
        once per process whatever metric, item or experiment asks for it. ``texts`` are
        not stored, but one that is cached already (an output equal to a reference) is
        taken from the cache. The cache's misses and ``texts`` are encoded together, in
        one list of forward passes, so that a micro-batch of a few items still makes
        batches as large as it can. Weights depend on the engine's idf table and are
        looked up afresh.
        """
        namespace = self._cache_namespace
        from_cache = list(dict.fromkeys(cached))
        cached_set = set(from_cache)
        fresh = [text for text in dict.fromkeys(texts) if text not in cached_set]
        known = self.cache.lookup(namespace, fresh)
        fresh = [text for text in fresh if text not in known]
        fresh_values: list[tuple[EncodedText, torch.Tensor]] = []

        def encode_with_fresh(missing: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
            values = self._encode_and_embed(missing + fresh)
            fresh_values.extend(values[len(missing) :])
            return values[: len(missing)]

        if from_cache:
            cached_values = self.cache.get_or_compute(namespace, from_cache, encode_with_fresh)
        else:
            cached_values = []
        if fresh and not fresh_values:  # every cached text was a hit
            fresh_values = self._encode_and_embed(fresh)
        unique = from_cache + list(known) + fresh
        computed = cached_values + list(known.values()) + fresh_values
        weights = self._weights([encoded for encoded, _embeddings in computed])
        return {
            text: _TextEmbedding(encoded=encoded, embeddings=embeddings, weights=text_weights)
            for text, (encoded, embeddings), text_weights in zip(
                unique, computed, weights, strict=True
            )
        }

    def _encode_and_embed(self, texts: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
        encoded = self.text_encoder.encode_many(texts)
        embeddings = self._forward([item.ids for item in encoded])
        return list(zip(encoded, embeddings, strict=True))

    def _forward(
        self, id_lists: Sequence[Sequence[int]], all_layers: bool = False
    ) -> list[torch.Tensor]:
        """L2-normalised float32 token embeddings of each id list, in order.

        Each is ``(length, dim)``, or ``(layers, length, dim)`` with ``all_layers``. Texts
        run in batches of similar length, longest first, so that each batch pads little
        (``batching/lengths.py``); on the CPU the batches run side by side on
        single-threaded workers (``batching/cpu_parallel.py``). An id list with no ids
        (an empty text, with a tokenizer that adds no special tokens, as GPT-2's) gets no
        embeddings: a model cannot run on it.
        """
        present = [ids for ids in id_lists if ids]
        forward = functools.partial(self._forward_batch, all_layers=all_layers)
        embeddings = map_longest_first(
            # Out of memory halves the batch (batching/memory.py).
            functools.partial(self._forward_batch_size.run, forward),
            present,
            batch_size=self._forward_batch_size.size,
            length=len,
            device=self.encoder.device,
        )
        if len(present) == len(id_lists):
            return embeddings
        width = hidden_size(self.encoder.model)
        shape = (self.num_layers + 1, 0, width) if all_layers else (0, width)
        none = torch.empty(shape, device=self.encoder.device)
        computed = iter(embeddings)
        return [next(computed) if ids else none for ids in id_lists]

    def _forward_batch(
        self, id_lists: Sequence[Sequence[int]], all_layers: bool
    ) -> list[torch.Tensor]:
        encoder = self.encoder
        pad_id = encoder.tokenizer.pad_token_id or 0
        input_ids, mask = padded_batch(id_lists, pad_id, encoder.device)
        with torch.inference_mode():
            if all_layers:
                hidden = torch.stack(encoder.all_hidden_states(input_ids, mask), dim=1)
            else:
                hidden = encoder.hidden_states(input_ids, mask)
            hidden = hidden.float()
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            # Copies, so that a cached text does not keep its whole batch alive.
            return [hidden[row, ..., : len(ids), :].clone() for row, ids in enumerate(id_lists)]

    # -- scoring -----------------------------------------------------------------------

    def score(
        self, candidates: Sequence[str], references: Sequence[Reference]
    ) -> list[BERTScoreResult]:
        """BERTScore of each candidate against its reference or list of references.

        Args:
            candidates: Candidate texts.
            references: Per candidate, a reference text or a non-empty list of them.

        Returns:
            One :class:`BERTScoreResult` per candidate, in order.

        Raises:
            InputError: Unequal lengths, a non-string, an empty list of references, or
                ``idf=True`` without fitted weights.
        """
        results = self._results(candidates, references)
        empty = sum(result.candidate_empty or result.reference_empty for result in results)
        if empty:
            logger.warning(
                "%d of %d items have an empty candidate or reference; their raw BERTScores "
                "are set to 0 (as bert_score does).",
                empty,
                len(results),
            )
        return results

    def _results(
        self, candidates: Sequence[str], references: Sequence[Reference]
    ) -> list[BERTScoreResult]:
        """:meth:`score` without its warning about empty texts."""
        _, reference_lists = check_pairs(candidates, references)
        self._check_idf_fitted()  # before any forward pass
        if not candidates:
            return []
        pairs = [
            (candidate, reference)
            for candidate, group in zip(candidates, reference_lists, strict=True)
            for reference in group
        ]
        # References repeat across items and experiments, outputs hardly ever: only the
        # references are cached, which halves the cache's memory for the same reuse.
        embedded = self._embed(candidates, cached=[reference for _, reference in pairs])
        scores, opposite_signs, matches = self._match_pairs(pairs, embedded)
        # Per group: its first pair's index and its best reference's place in the group.
        best_of_group: list[tuple[int, int]] = []
        maxima = []
        start = 0
        for group in reference_lists:
            group_scores = scores[start : start + len(group)]
            best = 0 if len(group) == 1 else _best_reference(group_scores, group, embedded)
            best_of_group.append((start, best))
            # Per column, as bert_score; like bert_score's, torch's max keeps a NaN.
            maxima.append(group_scores.max(dim=0).values)
            start += len(group)
        best_scores = torch.stack(maxima)
        if self.baseline is not None:
            # After the max over references, as bert_score (the other order differs only
            # for a baseline value of 1 or more, which flips the rescaling's sign).
            baseline = self.baseline.as_tensor()
            best_scores = (best_scores - baseline) / (1 - baseline)

        results = []
        for candidate, group, (start, best), (precision, recall, f1) in zip(
            candidates, reference_lists, best_of_group, best_scores.tolist(), strict=True
        ):
            cand = embedded[candidate]
            best_reference = embedded[group[best]]
            best_match, worst_match = self._explain(cand, best_reference, matches[start + best])
            results.append(
                BERTScoreResult(
                    precision=precision,
                    recall=recall,
                    f1=f1,
                    candidate_truncated=cand.encoded.truncated,
                    reference_truncated=any(embedded[text].encoded.truncated for text in group),
                    candidate_empty=cand.encoded.empty,
                    reference_empty=best_reference.encoded.empty,
                    opposite_signs=bool(opposite_signs[start + best]),
                    best_reference=best,
                    candidate_unknown_tokens=self._unknown_tokens(cand.encoded),
                    reference_unknown_tokens=self._unknown_tokens(best_reference.encoded),
                    best_match=best_match,
                    worst_match=worst_match,
                )
            )
        return results

    def _unknown_tokens(self, encoded: EncodedText) -> int:
        unknown = self.encoder.tokenizer.unk_token_id  # None for byte-level BPE: no unknowns
        return 0 if unknown is None else encoded.ids.count(unknown)

    def score_one(self, candidate: str, reference: Reference) -> BERTScoreResult:
        """Score one pair, batched with the pairs other threads score at the same time.

        Concurrent calls (Opik's worker threads) are coalesced into one :meth:`score`
        call by a :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher`; the
        result equals ``score([candidate], [reference])[0]`` within float rounding
        (1e-6), however the calls were grouped.

        Raises:
            InputError: As :meth:`score`, raised in the caller's thread before batching.
        """
        check_pairs([candidate], [reference])
        self._check_idf_fitted()
        return self.batcher.submit((candidate, reference))

    def _score_items(self, items: list[tuple[str, Reference]]) -> list[BERTScoreResult]:
        # No warning here: a micro-batch is ours, not the caller's list, and each empty
        # item's own result says why it scored 0 (the metric puts that in its reason).
        return self._results([candidate for candidate, _ in items], [ref for _, ref in items])

    def _match_pairs(
        self, pairs: Sequence[tuple[str, str]], embedded: dict[str, _TextEmbedding]
    ) -> tuple[torch.Tensor, torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        """Greedy-match every pair: ``(pairs, 3)`` scores, ``(pairs,)`` opposite-sign
        flags (``greedy.py``) and per-pair candidate matches."""
        order = sorted(
            range(len(pairs)),
            key=lambda i: (
                len(embedded[pairs[i][0]].encoded.ids),
                len(embedded[pairs[i][1]].encoded.ids),
            ),
        )

        def match_batch(batch: list[int]) -> list[_PairMatch]:
            result = _greedy_batch(
                [embedded[pairs[i][0]] for i in batch], [embedded[pairs[i][1]] for i in batch]
            )
            prf = torch.stack((result.precision, result.recall, result.f1), dim=1).cpu()
            opposite = result.opposite_signs.cpu()
            best, best_index = result.candidate_best.cpu(), result.candidate_best_index.cpu()
            lengths = [len(embedded[pairs[i][0]].encoded.ids) for i in batch]
            return [
                (prf[row], opposite[row], (best[row, :length], best_index[row, :length]))
                for row, length in enumerate(lengths)
            ]

        # Out of memory halves the batch here too (batching/memory.py): a batch of long
        # pairs' similarity matrices can fail where their forward passes fitted.
        matched = self._match_batch_size.run(match_batch, order)
        scores = torch.empty(len(pairs), 3)
        opposite_signs = torch.empty(len(pairs), dtype=torch.bool)
        scores[order] = torch.stack([prf for prf, _, _ in matched])
        opposite_signs[order] = torch.stack([opposite for _, opposite, _ in matched])
        matches: list[tuple[torch.Tensor, torch.Tensor]] = [None] * len(pairs)  # type: ignore[list-item]
        for index, (_, _, match) in zip(order, matched, strict=True):
            matches[index] = match
        return scores, opposite_signs, matches

    def _explain(
        self,
        candidate: _TextEmbedding,
        reference: _TextEmbedding,
        match: tuple[torch.Tensor, torch.Tensor],
    ) -> tuple[TokenMatch | None, TokenMatch | None]:
        """The candidate's best- and worst-matched weighted tokens against a reference."""
        if candidate.encoded.empty or reference.encoded.empty:
            return None, None
        best_similarity, best_index = match
        counted = (candidate.weights > 0).nonzero().flatten()
        if counted.numel() == 0:
            return None, None
        similarities = best_similarity[counted]

        def token_match(position: int) -> TokenMatch:
            matched = int(best_index[position])
            # Only the two tokens shown are turned back into text.
            candidate_token, reference_token = self.text_encoder.tokens(
                [candidate.encoded.ids[position], reference.encoded.ids[matched]]
            )
            return TokenMatch(candidate_token, reference_token, float(best_similarity[position]))

        best = token_match(int(counted[int(similarities.argmax())]))
        worst = token_match(int(counted[int(similarities.argmin())]))
        return best, worst

    # -- inspection --------------------------------------------------------------------

    def token_similarity(
        self, candidate: str, reference: str
    ) -> tuple[list[str], list[str], torch.Tensor]:
        """The cosine similarity of every candidate token with every reference token.

        The matrix greedy matching works on (raw, before idf weights and rescaling), with
        the special tokens included, for showing how a pair was matched.

        Args:
            candidate: The candidate text.
            reference: One reference text.

        Returns:
            ``(candidate_tokens, reference_tokens, matrix)``: readable tokens of each text
            and a CPU float32 tensor of shape ``(len(candidate_tokens),
            len(reference_tokens))`` with ``matrix[i][j]`` = cosine of candidate token
            ``i`` and reference token ``j``.

        Raises:
            InputError: ``candidate`` or ``reference`` is not a string.

        Example:
            >>> engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
            >>> cand_tokens, ref_tokens, matrix = engine.token_similarity(
            ...     "A cat sits.", "A cat sat."
            ... )
            >>> cand_tokens
            ['[CLS]', 'a', 'cat', 'sits', '.', '[SEP]']
            >>> ref_tokens
            ['[CLS]', 'a', 'cat', 'sat', '.', '[SEP]']
            >>> round(float(matrix[3, 3]), 2), tuple(matrix.shape)
            (0.63, (6, 6))
        """
        check_text(candidate, "`candidate`")
        check_text(reference, "`reference`")
        embedded = self._embed([candidate, reference])
        cand, ref = embedded[candidate], embedded[reference]
        matrix = (cand.embeddings @ ref.embeddings.T).cpu()
        tokens = self.text_encoder.tokens
        return tokens(cand.encoded.ids), tokens(ref.encoded.ids), matrix

    # -- baselines ---------------------------------------------------------------------

    def score_all_layers(self, candidates: list[str], references: list[str]) -> torch.Tensor:
        """P, R, F at every layer from 0 to the engine's layer: ``(layers, 3, pairs)``.

        Raw scores with this engine's token weights; layers above the engine's layer were
        dropped at loading, so build the engine with the last layer to score them all.
        """
        check_pairs(candidates, references)
        unique = list(dict.fromkeys(candidates + references))
        encoded = self.text_encoder.encode_many(unique)
        layered = self._forward([item.ids for item in encoded], all_layers=True)
        weights = self._weights(encoded)
        pairs = list(zip(candidates, references, strict=True))
        scores = []
        for layer in range(self.num_layers + 1):
            at_layer = {
                text: _TextEmbedding(item, embeddings[layer], text_weights)
                for text, item, embeddings, text_weights in zip(
                    unique, encoded, layered, weights, strict=True
                )
            }
            # In length-sorted batches that halve on out of memory, as every score is.
            layer_scores, _, _ = self._match_pairs(pairs, at_layer)
            scores.append(layer_scores.T)
        return torch.stack(scores)

    def compute_baseline(self, lines: Sequence[str], *, seed: int = 0) -> list[Baseline]:
        """Per-layer baselines of this engine's model from a text corpus.

        See :func:`opik_semantic_metrics.bertscore.baseline.compute_baseline`; save the
        result with :func:`~opik_semantic_metrics.bertscore.baseline.write_baseline` and
        pass the file as ``baseline_path``.
        """
        return compute_baseline(self.score_all_layers, lines, seed=seed)


def _greedy_batch(
    candidates: Sequence[_TextEmbedding], references: Sequence[_TextEmbedding]
) -> GreedyMatch:
    """Pad one batch of pairs and greedy-match it."""

    def padded(items: Sequence[_TextEmbedding]) -> tuple[torch.Tensor, ...]:
        embeddings = pad_sequence([item.embeddings for item in items], batch_first=True)
        device = embeddings.device
        weights = pad_sequence([item.weights for item in items], batch_first=True).to(device)
        if embeddings.shape[1] == 0:
            # Only texts without tokens (GPT-2's empty ones): one masked position, so
            # that the maxima have something to reduce over.
            embeddings = embeddings.new_zeros(len(items), 1, embeddings.shape[2])
            weights = weights.new_zeros(len(items), 1)
        lengths = torch.tensor([len(item.encoded.ids) for item in items], device=device)
        mask = torch.arange(embeddings.shape[1], device=device) < lengths.unsqueeze(1)
        empty = torch.tensor([item.encoded.empty for item in items], device=device)
        return embeddings, mask, weights, empty

    cand_emb, cand_mask, cand_weights, cand_empty = padded(candidates)
    ref_emb, ref_mask, ref_weights, ref_empty = padded(references)
    return greedy_match(
        cand_emb, cand_mask, cand_weights, ref_emb, ref_mask, ref_weights, cand_empty, ref_empty
    )
