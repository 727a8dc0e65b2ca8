"""COMET's model classes, for inference: regression, reference-free regression, unified.

- :class:`RegressionModel` (``regression_metric``, ``referenceless_regression_metric``):
  each segment (source, translation, reference) is encoded on its own into one pooled
  sentence embedding (:meth:`RegressionModel.embed`, which the engine caches per text), and
  the estimator scores their feature vector (see ``estimator.py``).
- :class:`UnifiedModel` (``unified_metric``: COMETKiwi; ``xcomet_metric``: XCOMET): the
  translation is joined with the source and/or the reference into one sequence, and the
  estimator scores the first token of its mixed hidden states. With both a source and a
  reference, three sequences are scored (mt+src, mt+ref, mt+src+ref) and combined:
  their mean for unified models; for XCOMET, scores capped at 1 and weighed
  0.12/0.33/0.33, plus 0.22 times an MQM-like score of the error spans. Word-level models
  tag each translation token (no error, or a severity) from one hidden state; the
  probabilities of the three sequences are weighed 0.1667/0.3333/0.5 and runs of error
  tags become :class:`ErrorSpan`\\ s.

Everything here follows unbabel-comet 2.2.7 (``comet/models``) step by step, including
its quirks, which change scores: sequences are joined after removing pad-token ids (a
literal ``"<pad>"`` in a text disappears from the joint sequence but not from the
character offsets of the spans); a joint sequence longer than the limit is cut at the end
(its last separator included); BERT's token type ids are 0 over the translation's length
and 1 after it; a span still open at the last token is dropped; the MQM-like score counts
minor 1, major 5, critical 10, caps at 25 and maps to ``(25 - penalty) / 25``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch

from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.comet.checkpoint import CometCheckpoint, CometHparams, resolve_pretrained
from opik_semantic_metrics.comet.encoder import (
    CometEncoder,
    TokenizedText,
    encoder_family,
    load_comet_encoder,
)
from opik_semantic_metrics.comet.estimator import (
    feed_forward,
    referenceless_features,
    regression_features,
)
from opik_semantic_metrics.comet.layers import LayerMix, average_pool, max_pool
from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.models.layers import hidden_size

#: XCOMET's weights of the mt+src, mt+ref and mt+src+ref scores and of the MQM score.
XCOMET_SCORE_WEIGHTS = (0.12, 0.33, 0.33, 0.22)
#: Weights of the three sequences' tag probabilities (unified and XCOMET).
SPAN_INPUT_WEIGHTS = (0.1667, 0.3333, 0.5)
#: MQM penalty per error severity, the cap, and the scale of the MQM-like score.
MQM_PENALTIES = {"minor": 1, "major": 5, "critical": 10}
MQM_CAP = 25


@dataclass(frozen=True)
class ErrorSpan:
    """A run of translation tokens tagged as one error.

    Attributes:
        text: The tokens decoded back to text.
        severity: The first token's severity (``minor``, ``major``, ``critical``).
        confidence: Mean probability of the tokens' tags.
        start, end: Character offsets of the span in the translation.
    """

    text: str
    severity: str
    confidence: float
    start: int
    end: int


@dataclass(frozen=True)
class CometResult:
    """COMET's score of one translation.

    Attributes:
        score: The segment score.
        used_reference: Whether the reference was part of the model's input.
        truncated: The inputs cut to the model's limit: ``"source"``, ``"translation"``,
            ``"reference"``, and ``"joint input"`` for a joined sequence of a unified model.
        partial_scores: Unified models with a reference and XCOMET: the scores of the
            mt+src (``"src"``), mt+ref (``"ref"``) and joint (``"unified"``) sequences,
            and XCOMET's ``"mqm"`` score.
        error_spans: Word-level models: the error spans; ``None`` otherwise.
    """

    score: float
    used_reference: bool
    truncated: tuple[str, ...] = ()
    partial_scores: Mapping[str, float] = field(default_factory=dict)
    error_spans: tuple[ErrorSpan, ...] | None = None


@dataclass(frozen=True)
class SentenceEmbedding:
    """A regression model's pooled embedding of one segment ``(width,)``, and its truncation."""

    embedding: torch.Tensor
    truncated: bool


class CometModel:
    """What every COMET class has: encoder, layer mixing and estimator.

    Args:
        checkpoint: The COMET checkpoint.
        device: Where to run.
        dtype: The type of the transformer's weights (bfloat16 or float16 in the fast
            mode); layer mixing, pooling and the estimator stay float32.

    Raises:
        ModelUnavailableError: Encoder files cannot be had, or weights are missing.
        ValueError: A setting the model cannot use.
    """

    def __init__(
        self, checkpoint: CometCheckpoint, device: torch.device, dtype: torch.dtype
    ) -> None:
        hparams = checkpoint.hparams
        self.hparams: CometHparams = hparams
        self.device = device
        state = checkpoint.state_dict
        pretrained = resolve_pretrained(checkpoint.directory, hparams.pretrained_model)
        fixed_tokenizer = encoder_family(hparams.encoder_model).tokenizer_source
        self.encoder: CometEncoder = load_comet_encoder(
            hparams.encoder_model,
            pretrained,
            pretrained
            if fixed_tokenizer is None
            else resolve_pretrained(checkpoint.directory, fixed_tokenizer),
            state,
            device,
            dtype,
        )
        states = self.encoder.num_hidden_states
        self.layer_mix: LayerMix | None = None
        if hparams.layer == "mix":
            scalars = torch.cat(
                [
                    _weight(state, f"layerwise_attention.scalar_parameters.{i}")
                    for i in range(states)
                ]
            )
            self.layer_mix = LayerMix(
                scalars,
                _weight(state, "layerwise_attention.gamma"),
                use_sparsemax=hparams.sparsemax,
                layer_norm=hparams.layer_norm,
            ).to(device)
        elif not 0 <= int(hparams.layer) < states:
            raise ValueError(f"Invalid layer {hparams.layer} for an encoder of {states} states.")
        width = hidden_size(self.encoder.model)
        features = {"regression": 6, "referenceless": 4}.get(hparams.kind, 1) * width
        self.estimator = feed_forward(
            features, hparams.hidden_sizes, hparams.activations, hparams.final_activation
        )
        _load_module(self.estimator, state, "estimator.ff.")
        self.estimator.to(device)

    def _sentence_states(self, hidden: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        """The token embeddings sentence scores are read from: mixed, or one layer."""
        if self.layer_mix is not None:
            return self.layer_mix(hidden, mask)
        return hidden[int(self.hparams.layer)]


def _weight(state: Mapping[str, torch.Tensor], key: str) -> torch.Tensor:
    if key not in state:
        raise ModelUnavailableError(f"The COMET checkpoint lacks {key!r}.")
    return state[key].float()


def _load_module(module: torch.nn.Module, state: Mapping[str, torch.Tensor], prefix: str) -> None:
    """Load ``module`` from the checkpoint entries under ``prefix``, all of them required."""
    weights = {key[len(prefix) :]: value for key, value in state.items() if key.startswith(prefix)}
    try:
        module.load_state_dict(weights, strict=True)
    except RuntimeError as error:
        raise ModelUnavailableError(
            f"The COMET checkpoint's {prefix!r} weights do not fit its hyper-parameters: {error}"
        ) from error


class RegressionModel(CometModel):
    """``regression_metric`` and ``referenceless_regression_metric``."""

    def __init__(
        self, checkpoint: CometCheckpoint, device: torch.device, dtype: torch.dtype
    ) -> None:
        super().__init__(checkpoint, device, dtype)
        if self.hparams.pool == "default" and self.encoder.family.token_types:
            # COMET's BERT encoder has no pooler: its "default" pooling has nothing to read.
            raise ValueError("COMET cannot pool 'default' with a BERT encoder.")

    def embed(self, texts: Sequence[str], batches: ForwardBatches) -> list[SentenceEmbedding]:
        """Pooled sentence embedding of each text, in order.

        Texts run in batches of similar token count, longest first
        (``batching/lengths.py``); on the CPU the batches run side by side on
        single-threaded workers (``batching/cpu_parallel.py``); a batch that runs out of
        memory is halved (``batching/memory.py``). The embeddings stay where they were
        computed until the last batch has run and then come to the host together: on a
        GPU, one wait for the device instead of one a batch.
        """
        tokenized = self.encoder.tokenizer.encode(texts)
        if not tokenized:
            return []
        pooled = batches.map(self._embed_batch, tokenized, lambda text: len(text.ids))
        # Grad mode is per thread: the caller's may be on.
        with torch.inference_mode():
            on_host = torch.stack(pooled).cpu()
        return [
            SentenceEmbedding(on_host[row].clone(), text.truncated)
            for row, text in enumerate(tokenized)
        ]

    def _embed_batch(self, batch: list[TokenizedText]) -> list[torch.Tensor]:
        pad_id = self.encoder.tokenizer.pad_id
        # Grad mode is per thread: a worker of map_longest_first enters inference mode itself.
        with torch.inference_mode():
            ids, mask = padded_batch([text.ids for text in batch], pad_id, self.device)
            hidden = self.encoder.hidden_states(ids, mask)
            pooled = self._pool(ids, mask, hidden).float()
        return list(pooled)

    def _pool(
        self, ids: torch.Tensor, mask: torch.Tensor, hidden: Sequence[torch.Tensor]
    ) -> torch.Tensor:
        pool = self.hparams.pool
        if pool == "default":
            return hidden[-1][:, 0]
        embeddings = self._sentence_states(hidden, mask)
        if pool == "avg":
            return average_pool(ids, embeddings, mask, self.encoder.tokenizer.pad_id)
        if pool == "max":
            return max_pool(ids, embeddings, self.encoder.tokenizer.pad_id)
        return embeddings[:, 0]

    @torch.inference_mode()
    def estimate(
        self,
        sources: Sequence[SentenceEmbedding],
        translations: Sequence[SentenceEmbedding],
        references: Sequence[SentenceEmbedding] | None,
    ) -> list[float]:
        """Scores of the embedded triples (pairs for reference-free models)."""

        def stacked(items: Sequence[SentenceEmbedding]) -> torch.Tensor:
            return torch.stack([item.embedding for item in items]).to(self.device)

        if references is None:
            features = referenceless_features(stacked(sources), stacked(translations))
        else:
            features = regression_features(
                stacked(sources), stacked(translations), stacked(references)
            )
        return self.estimator(features).view(-1).tolist()


@dataclass(frozen=True)
class _JointSequence:
    """One joined sequence of a unified model and what it was built from."""

    item: int
    part: int
    ids: tuple[int, ...]
    token_types: tuple[int, ...] | None
    truncated: bool


class UnifiedModel(CometModel):
    """``unified_metric`` (COMETKiwi) and ``xcomet_metric`` (XCOMET)."""

    def __init__(
        self, checkpoint: CometCheckpoint, device: torch.device, dtype: torch.dtype
    ) -> None:
        super().__init__(checkpoint, device, dtype)
        hparams = self.hparams
        self.labels = ("O", *hparams.error_labels)
        self.tagger: torch.nn.Linear | None = None
        if hparams.word_level:
            states = self.encoder.num_hidden_states
            if not 0 <= hparams.word_layer < states:
                raise ValueError(
                    f"Invalid word layer {hparams.word_layer} for an encoder of {states} states."
                )
            self.tagger = torch.nn.Linear(hidden_size(self.encoder.model), len(self.labels))
            _load_module(self.tagger, checkpoint.state_dict, "hidden2tag.")
            self.tagger.to(device).eval()

    def segments_of(self, has_reference: bool) -> list[tuple[str, ...]]:
        """The joined sequences scored for an item: three with src and ref, else one."""
        segments = self.hparams.input_segments
        present = [name for name in segments if name != "ref" or has_reference]
        if "src" in present and "ref" in present:
            return [("mt", "src"), ("mt", "ref"), ("mt", "src", "ref")]
        return [tuple(present)]

    def _join(
        self, parts: Sequence[TokenizedText]
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None, bool]:
        """COMET's ``concat_sequences`` for one item: ids, token types, truncated."""
        tokenizer = self.encoder.tokenizer
        family = self.encoder.family
        unpadded = [[token for token in part.ids if token != tokenizer.pad_id] for part in parts]
        joined = unpadded[0]
        for part in unpadded[1:]:
            separators = [tokenizer.sep_id] * family.separator_size
            joined = [tokenizer.cls_id, *joined[1:-1], *separators, *part[1:-1], tokenizer.sep_id]
        # COMET cuts the joined ids to the position table when their content passes it
        # less its count of special tokens; that count is one too many for XLM-R's double
        # separator, so its test fires on an input of exactly max_positions, whose cut
        # removes nothing. Flagged only where the cut removes ids; the ids are the same.
        truncated = len(joined) > self.encoder.max_positions
        joined = joined[: self.encoder.max_positions]
        token_types = None
        if family.token_types:
            first = len(unpadded[0])
            token_types = tuple(0 if position < first else 1 for position in range(len(joined)))
        return tuple(joined), token_types, truncated

    def _run(
        self,
        sequences: Sequence[_JointSequence],
        mt_lengths: Sequence[int],
        batches: ForwardBatches,
    ) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """Per sequence: score, and tag probabilities over its ``mt_lengths[i]`` first
        tokens (the translation's). Batched as :meth:`RegressionModel.embed` batches."""
        return batches.map(
            self._run_batch,
            list(zip(sequences, mt_lengths, strict=True)),
            lambda item: len(item[0].ids),
        )

    def _run_batch(
        self, batch: list[tuple[_JointSequence, int]]
    ) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        pad_id = self.encoder.tokenizer.pad_id
        # Grad mode is per thread: a worker of map_longest_first enters inference mode itself.
        with torch.inference_mode():
            ids, mask = padded_batch([sequence.ids for sequence, _ in batch], pad_id, self.device)
            token_types = None
            if self.encoder.family.token_types:
                # Padding continues the last type, 1, as in COMET.
                token_types, _ = padded_batch(
                    [sequence.token_types or () for sequence, _ in batch], 1, self.device
                )
            hidden = self.encoder.hidden_states(ids, mask, token_types)
            scores = self.estimator(self._sentence_states(hidden, mask)[:, 0]).view(-1).cpu()
            probabilities = None
            if self.tagger is not None:
                logits = self.tagger(hidden[self.hparams.word_layer])
                probabilities = torch.softmax(logits, dim=2).cpu()
        outputs: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        for row, (sequence, mt_length) in enumerate(batch):
            tags = None
            if probabilities is not None:
                # The translation's positions, within the sequence's own tokens (not the
                # batch's width): literal pad tokens counted in mt_length are not in it.
                tags = probabilities[row, : min(mt_length, len(sequence.ids))]
            outputs.append((scores[row], tags))
        return outputs

    def score(
        self,
        sources: Sequence[str],
        translations: Sequence[str],
        references: Sequence[str | None],
        batches: ForwardBatches,
    ) -> list[CometResult]:
        """Score every item; items with and without a reference may be mixed."""
        tokenizer = self.encoder.tokenizer
        texts = {"src": list(sources), "mt": list(translations)}
        tokenized = {name: tokenizer.encode(values) for name, values in texts.items()}
        with_reference = [i for i, reference in enumerate(references) if reference is not None]
        encoded_refs = tokenizer.encode([references[i] for i in with_reference])  # type: ignore[misc]
        ref_of: dict[int, TokenizedText] = dict(zip(with_reference, encoded_refs, strict=True))
        sequences: list[_JointSequence] = []
        layouts: list[list[tuple[str, ...]]] = []
        first_ids: list[tuple[int, ...]] = []
        for item in range(len(translations)):
            layout = self.segments_of(item in ref_of)
            layouts.append(layout)
            for part, names in enumerate(layout):
                pieces = [
                    ref_of[item] if name == "ref" else tokenized[name][item] for name in names
                ]
                ids, token_types, truncated = self._join(pieces)
                sequences.append(_JointSequence(item, part, ids, token_types, truncated))
                if part == 0:
                    first_ids.append(ids)
        mt_lengths = [len(tokenized["mt"][sequence.item].ids) for sequence in sequences]
        outputs = self._run(sequences, mt_lengths, batches)
        per_item: dict[int, list[tuple[torch.Tensor, torch.Tensor | None]]] = {}
        joint_truncated: set[int] = set()
        for sequence, output in zip(sequences, outputs, strict=True):
            per_item.setdefault(sequence.item, []).append(output)
            if sequence.truncated:
                joint_truncated.add(sequence.item)
        results = []
        for item, layout in enumerate(layouts):
            used = {name for names in layout for name in names}
            truncated_inputs = [
                label
                for name, label in (("src", "source"), ("mt", "translation"), ("ref", "reference"))
                if name in used
                and (ref_of[item] if name == "ref" else tokenized[name][item]).truncated
            ]
            if item in joint_truncated:
                truncated_inputs.append("joint input")
            results.append(
                self._combine(
                    per_item[item],
                    first_ids=first_ids[item],
                    mt=tokenized["mt"][item],
                    used_reference="ref" in used,
                    truncated=tuple(truncated_inputs),
                )
            )
        return results

    def _combine(
        self,
        outputs: Sequence[tuple[torch.Tensor, torch.Tensor | None]],
        first_ids: Sequence[int],
        mt: TokenizedText,
        used_reference: bool,
        truncated: tuple[str, ...],
    ) -> CometResult:
        """One item's score (and spans) from its one or three sequences' outputs."""
        scores = torch.stack([score for score, _ in outputs])
        spans: tuple[ErrorSpan, ...] | None = None
        if self.tagger is not None:
            probabilities = [tags for _, tags in outputs if tags is not None]
            if len(probabilities) == 3:
                # Three sequences tag the same translation positions, unless so many literal
                # pad tokens left it that one sequence is shorter than the translation's
                # count (COMET then reads past that sequence's end, or fails): the positions
                # all three have are the ones read.
                length = min(len(tags) for tags in probabilities)
                weights = torch.tensor(SPAN_INPUT_WEIGHTS)
                weighed = [
                    weight * tags[:length]
                    for weight, tags in zip(weights, probabilities, strict=True)
                ]
                combined = torch.stack(weighed).sum(0)
            else:
                combined = probabilities[0]
            # The token ids are those of the first sequence, as in COMET.
            spans = self._decode(first_ids, combined, mt.offsets)
        partial: dict[str, float] = {}
        if len(outputs) == 3:
            partial = dict(zip(("src", "ref", "unified"), scores.tolist(), strict=True))
        if self.hparams.kind == "xcomet":
            assert spans is not None
            mqm = _mqm_score(spans)
            capped = torch.where(scores > 1.0, 1.0, scores)
            if len(outputs) == 3:
                regression = torch.stack(
                    [capped[i] * XCOMET_SCORE_WEIGHTS[i] for i in range(3)]
                ).sum(0)
            else:
                partial["src"] = float(capped[0])
                regression = capped[0] * sum(XCOMET_SCORE_WEIGHTS[:3])
            partial["mqm"] = float(mqm)
            score = regression + mqm * XCOMET_SCORE_WEIGHTS[3]
        else:
            score = scores.mean(0)
        return CometResult(
            score=float(score),
            used_reference=used_reference,
            truncated=truncated,
            partial_scores=partial,
            error_spans=spans,
        )

    def _decode(
        self, ids: Sequence[int], tags: torch.Tensor, offsets: Sequence[tuple[int, int]]
    ) -> tuple[ErrorSpan, ...]:
        """COMET's ``decode``: runs of error-tagged translation tokens become spans.

        A run begins at an error tag (its severity is the run's), goes on over error tags
        of any severity, and ends at a no-error tag; a run still open at the end is
        dropped, as in COMET.
        """
        spans: list[ErrorSpan] = []
        run: _Run | None = None
        for token_id, probabilities, (start, end) in zip(ids, tags, offsets, strict=False):
            probability, label = torch.topk(probabilities, 1)
            severity = self.labels[int(label[0])]
            if severity == "O":
                if run is not None:
                    spans.append(self._span(run))
                run = None
            elif run is None:
                run = _Run([token_id], [probability], severity, start, end)
            else:
                run.tokens.append(token_id)
                run.confidences.append(probability)
                run.end = end
        return tuple(spans)

    def _span(self, run: _Run) -> ErrorSpan:
        return ErrorSpan(
            text=self.encoder.tokenizer.decode(run.tokens),
            severity=run.severity,
            confidence=torch.cat(run.confidences).mean().item(),
            start=run.start,
            end=run.end,
        )


@dataclass
class _Run:
    """An error span being read: its tokens, their tag probabilities, severity and offsets."""

    tokens: list[int]
    confidences: list[torch.Tensor]
    severity: str
    start: int
    end: int


def _mqm_score(spans: Sequence[ErrorSpan]) -> torch.Tensor:
    """XCOMET's MQM-like score of the spans, in [0, 1] (float32, as COMET computes it)."""
    penalty = min(MQM_CAP, sum(MQM_PENALTIES.get(span.severity, 0) for span in spans))
    return (torch.tensor(penalty) * -1 + MQM_CAP) / MQM_CAP


def load_model(
    checkpoint: CometCheckpoint, device: torch.device, dtype: torch.dtype
) -> RegressionModel | UnifiedModel:
    """The model class for the checkpoint's kind, built and loaded."""
    if checkpoint.hparams.kind in ("regression", "referenceless"):
        return RegressionModel(checkpoint, device, dtype)
    return UnifiedModel(checkpoint, device, dtype)
