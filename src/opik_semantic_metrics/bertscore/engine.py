"""BERTScoreEngine: load once, score many lists of pairs, faithful to bert_score 0.3.13.

The engine knows nothing of Opik. It takes ``candidates`` and ``references`` (a string,
or a list of strings per candidate) and returns one frozen :class:`BERTScoreResult` per
candidate. Scores equal bert_score's with ``batch_size=1`` (its padding-free value) to
float32 rounding, however the pairs are batched.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import torch
import transformers

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.bertscore.baseline import (
    Baseline,
    compute_baseline,
    packaged_baseline_path,
    read_baseline,
    score_all_layers,
)
from opik_semantic_metrics.bertscore.embedding import Reference as Reference
from opik_semantic_metrics.bertscore.embedding import TextEmbedding, TokenEmbedder
from opik_semantic_metrics.bertscore.idf import IdfTable, fit_idf
from opik_semantic_metrics.bertscore.matching import best_reference_index, match_pairs
from opik_semantic_metrics.bertscore.results import BERTScoreResult as BERTScoreResult
from opik_semantic_metrics.bertscore.results import TokenMatch as TokenMatch
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
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.layers import checked_layer
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
    configuration, before the model loads."""
    if model is None:
        lang = lang or "en"
        model = default_model_for_lang(lang)
    model = checked_model_name(model)
    source = resolve_model_source(model)
    if num_layers is None:
        num_layers = bertscore_layer(model)
    num_layers, _ = checked_layer(source, num_layers, trust_remote_code, "num_layers")
    return model, lang, source, num_layers


class BERTScoreEngine(EncoderEngine[TokenEmbedder, tuple[str, Reference], BERTScoreResult]):
    """BERTScore with a model loaded once per process, when the engine is built, and
    shared (the encoder engines' skeleton: ``batching/engine.py``).

    The engine holds a :class:`~opik_semantic_metrics.bertscore.embedding.TokenEmbedder`
    (:attr:`loaded`: the model and its tokenization, which turn texts into token
    embeddings) and adds the settings, the idf table, the cache of references and the
    matching.

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
            1e-3; ``docs/gpu-and-fast-mode.md``); any ``torch.dtype`` or its name.
        batch_size: Most texts per forward pass and pairs per matching batch on a CPU; on
            a GPU, forward passes hold up to ``batch_size * 256`` padded tokens and a
            batched match ``batch_size * 16`` pairs (``batching/forward.py``).
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
        self.use_fast_tokenizer = use_fast_tokenizer
        self.baseline: Baseline | None = None
        if rescale_with_baseline:
            self.baseline = self._read_baseline(model, lang, num_layers)

        def load(device: torch.device, dtype: torch.dtype) -> TokenEmbedder:
            return TokenEmbedder.load(
                model,
                num_layers,
                device=device,
                dtype=dtype,
                use_fast_tokenizer=use_fast_tokenizer,
                trust_remote_code=trust_remote_code,
            )

        self._build(device, dtype, load, batch_size=batch_size,
                    micro_batch_size=micro_batch_size, cache=cache)  # fmt: skip
        self.idf_table: IdfTable | None = None
        if idf_references is not None:
            self._fit_idf(idf_references, "idf_references")

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

    @property
    def encoder(self) -> LoadedEncoder:
        """The shared model and tokenizer (the token embedder's)."""
        return self.loaded.encoder

    @property
    def text_encoder(self) -> TextEncoder:
        """bert_score-faithful tokenization for this model (the token embedder's)."""
        return self.loaded.text_encoder

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

    def _check_idf_fitted(self) -> None:
        if self.idf and self.idf_table is None:
            raise InputError(
                "idf weights are not fitted: call `fit_idf(references)` on your dataset's "
                "references first (idf is a corpus-level statistic, never fitted per item)."
            )

    def _weights(self, encoded: Sequence[EncodedText]) -> list[torch.Tensor]:
        """Token weights of each text: idf where the engine has it, else uniform."""
        self._check_idf_fitted()
        return self.loaded.weights(encoded, self.idf_table if self.idf else None)

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

    # -- embeddings --------------------------------------------------------------------

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
        return self._fill_cache(texts)

    def _embed(
        self, texts: Sequence[str], *, cached: Sequence[str] = ()
    ) -> dict[str, TextEmbedding]:
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
        from_cache = list(dict.fromkeys(cached))
        cached_set = set(from_cache)
        fresh = [text for text in dict.fromkeys(texts) if text not in cached_set]
        known = self._cache_lookup(fresh)
        fresh = [text for text in fresh if text not in known]
        fresh_values: list[tuple[EncodedText, torch.Tensor]] = []

        def encode_with_fresh(missing: list[str]) -> list[tuple[EncodedText, torch.Tensor]]:
            values = self._encode_uncached(missing + fresh)
            fresh_values.extend(values[len(missing) :])
            return values[: len(missing)]

        cached_values = self._cached(from_cache, encode_with_fresh) if from_cache else []
        if fresh and not fresh_values:  # every cached text was a hit
            fresh_values = self._encode_uncached(fresh)
        unique = from_cache + list(known) + fresh
        computed = cached_values + list(known.values()) + fresh_values
        weights = self._weights([encoded for encoded, _embeddings in computed])
        return {
            text: TextEmbedding(encoded=encoded, embeddings=embeddings, weights=text_weights)
            for text, (encoded, embeddings), text_weights in zip(
                unique, computed, weights, strict=True
            )
        }

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
        scores, opposite_signs, matches = match_pairs(pairs, embedded, self.match_batch_size)
        # Per group: its first pair's index and its best reference's place in the group.
        best_of_group: list[tuple[int, int]] = []
        maxima = []
        start = 0
        for group in reference_lists:
            group_scores = scores[start : start + len(group)]
            best = 0 if len(group) == 1 else best_reference_index(group_scores, group, embedded)
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
                    candidate_unknown_tokens=self.loaded.unknown_tokens(cand.encoded),
                    reference_unknown_tokens=self.loaded.unknown_tokens(best_reference.encoded),
                    best_match=best_match,
                    worst_match=worst_match,
                )
            )
        return results

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

    def _explain(
        self,
        candidate: TextEmbedding,
        reference: TextEmbedding,
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

    # -- every layer -------------------------------------------------------------------

    def score_all_layers(self, candidates: list[str], references: list[str]) -> torch.Tensor:
        """P, R, F at every layer from 0 to the engine's layer: ``(layers, 3, pairs)``.

        Raw scores with this engine's token weights; layers above the engine's layer were
        dropped at loading, so build the engine with the last layer to score them all
        (:func:`~opik_semantic_metrics.bertscore.baseline.score_all_layers`).
        """
        self._check_idf_fitted()
        return score_all_layers(
            self.loaded,
            candidates,
            references,
            idf_table=self.idf_table if self.idf else None,
            batches=self.forward_batches,
            match_batch_size=self.match_batch_size,
        )

    def compute_baseline(self, lines: Sequence[str], *, seed: int = 0) -> list[Baseline]:
        """Per-layer baselines of this engine's model from a text corpus.

        See :func:`opik_semantic_metrics.bertscore.baseline.compute_baseline`; save the
        result with :func:`~opik_semantic_metrics.bertscore.baseline.write_baseline` and
        pass the file as ``baseline_path``.
        """
        return compute_baseline(self.score_all_layers, lines, seed=seed)

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
