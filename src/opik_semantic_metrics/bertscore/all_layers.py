"""BERTScore at every layer of a model: what the rescaling baselines are computed from."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from opik_semantic_metrics.bertscore.baseline import Baseline, compute_baseline
from opik_semantic_metrics.bertscore.embedding import EmbeddingMixin, TextEmbedding
from opik_semantic_metrics.bertscore.matching import match_pairs
from opik_semantic_metrics.inputs import check_pairs


class AllLayersMixin(EmbeddingMixin):
    """Scores at every layer and per-layer baselines, for
    :class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`."""

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
                text: TextEmbedding(item, embeddings[layer], text_weights)
                for text, item, embeddings, text_weights in zip(
                    unique, encoded, layered, weights, strict=True
                )
            }
            # In length-sorted batches that halve on out of memory, as every score is.
            layer_scores, _, _ = match_pairs(pairs, at_layer, self.match_batch_size)
            scores.append(layer_scores.T)
        return torch.stack(scores)

    def compute_baseline(self, lines: Sequence[str], *, seed: int = 0) -> list[Baseline]:
        """Per-layer baselines of this engine's model from a text corpus.

        See :func:`opik_semantic_metrics.bertscore.baseline.compute_baseline`; save the
        result with :func:`~opik_semantic_metrics.bertscore.baseline.write_baseline` and
        pass the file as ``baseline_path``.
        """
        return compute_baseline(self.score_all_layers, lines, seed=seed)
