"""Layer mixing and sentence pooling of COMET models, for inference.

Layer mixing (COMET's ``LayerwiseAttention``, after UDify): every hidden state of the
encoder (the embeddings and each layer), optionally normalised per sentence, weighed by
learned scalars and scaled by a learned ``gamma``::

    mixed = gamma * sum_k w_k * h_k        w = softmax(s) or sparsemax(s)

where the per-sentence normalisation of ``h_k`` uses the mean and variance over all the
sentence's unmasked positions and dimensions together (not per token), with epsilon
1e-12. Sparsemax (Martins and Astudillo, 2016) is the Euclidean projection of ``s`` onto
the probability simplex: it gives layers exactly zero weight, and zero-weight layers are
skipped here (exactly, since their terms are zero).

Pooling turns the ``(batch, length, width)`` token embeddings into ``(batch, width)``
sentence embeddings. As in COMET, padding is recognised by token id, so a text that
contains the pad token itself (say the literal string ``"<pad>"``) has that position left
out of the sum but counted in the average's denominator (the attention mask).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

#: COMET's variance epsilon in the per-sentence normalisation.
LAYER_NORM_EPSILON = 1e-12


def sparsemax(scores: torch.Tensor) -> torch.Tensor:
    """Sparsemax of a 1-D tensor: the closest probability vector, often with zeros.

    Example:
        >>> [round(weight, 4) for weight in sparsemax(torch.tensor([1.0, 0.8, -1.0])).tolist()]
        [0.6, 0.4, 0.0]
    """
    shifted = scores - scores.max()
    ordered = torch.sort(shifted, descending=True).values
    cumulative = ordered.cumsum(0) - 1
    ranks = torch.arange(1, scores.numel() + 1, dtype=scores.dtype, device=scores.device)
    support = int((ranks * ordered > cumulative).sum())
    threshold = cumulative[support - 1] / support
    return torch.clamp(shifted - threshold, min=0)


def _normalise_per_sentence(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``hidden`` ``(batch, length, width)`` minus its sentence mean, over its sentence std."""
    batch, _, width = hidden.shape
    broadcast = mask.unsqueeze(-1)
    count = mask.sum(1) * width
    masked = hidden * broadcast
    mean = (masked.view(batch, -1).sum(1) / count).view(batch, 1, 1)
    variance = (((masked - mean) * broadcast) ** 2).view(batch, -1).sum(1) / count
    return (hidden - mean) / torch.sqrt(variance + LAYER_NORM_EPSILON).view(batch, 1, 1)


class LayerMix(torch.nn.Module):
    """COMET's learned mixture of hidden states (see the module docstring).

    Args:
        scalars: The unnormalised layer weights ``s``, one per hidden state.
        gamma: The scale, a one-element tensor.
        use_sparsemax: Normalise ``s`` with sparsemax (else softmax).
        layer_norm: Normalise each hidden state per sentence before mixing.
    """

    # Buffers, registered in __init__ (declared here for type checkers).
    weights: torch.Tensor
    gamma: torch.Tensor

    def __init__(
        self, scalars: torch.Tensor, gamma: torch.Tensor, *, use_sparsemax: bool, layer_norm: bool
    ) -> None:
        super().__init__()
        weights = sparsemax(scalars) if use_sparsemax else torch.softmax(scalars, dim=0)
        self.register_buffer("weights", weights)
        self.register_buffer("gamma", gamma.reshape(1))
        self.layer_norm = layer_norm

    def forward(self, hidden_states: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        """Mix ``hidden_states``, each ``(batch, length, width)``; ``mask``: ``(batch, length)``."""
        if len(hidden_states) != self.weights.numel():
            raise ValueError(
                f"Expected {self.weights.numel()} hidden states to mix, got {len(hidden_states)}."
            )
        mask = mask.float()
        mixed: torch.Tensor | None = None
        for weight, hidden in zip(self.weights, hidden_states, strict=True):
            if weight == 0:
                continue
            if self.layer_norm:
                hidden = _normalise_per_sentence(hidden, mask)
            term = weight * hidden
            mixed = term if mixed is None else mixed + term
        assert mixed is not None, "softmax and sparsemax always leave a positive weight"
        return self.gamma * mixed


def average_pool(
    ids: torch.Tensor, embeddings: torch.Tensor, mask: torch.Tensor, pad_id: int
) -> torch.Tensor:
    """Mean of the embeddings of non-pad tokens, over the attention-mask length.

    Args:
        ids: Token ids ``(batch, length)``.
        embeddings: Token embeddings ``(batch, length, width)``.
        mask: Attention mask ``(batch, length)``.
        pad_id: The pad token id.

    Returns:
        ``(batch, width)``: ``res[i] = sum_j [ids[i, j] != pad] emb[i, j] / sum_j mask[i, j]``.
    """
    kept = embeddings.masked_fill(ids.eq(pad_id).unsqueeze(-1), 0.0)
    return kept.sum(1) / mask.float().sum(1, keepdim=True)


def max_pool(ids: torch.Tensor, embeddings: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Maximum over non-pad tokens: ``(batch, length, width)`` to ``(batch, width)``."""
    return embeddings.masked_fill(ids.eq(pad_id).unsqueeze(-1), float("-inf")).max(dim=1).values
