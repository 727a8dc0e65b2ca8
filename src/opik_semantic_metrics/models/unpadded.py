"""BERT-family encoders run on their real tokens only, without padding.

A padded batch runs every layer on every padded position; the linear layers, nearly all
of an encoder's work, act on each token by itself, so those rows are waste.
:meth:`UnpaddedEncoder.hidden_states` runs the model's own weights, in the model's own
order, on a ``(tokens, width)`` matrix of the real tokens; only the attention product,
which mixes the tokens of one text, puts the rows back into a padded ``(batch, heads,
length, head size)`` layout and takes them out again. With ``x`` the real tokens' hidden
states and ``mask`` the padding mask, each layer computes (transformers' BERT, in eval
mode)::

    q, k, v = x Wq + bq, x Wk + bk, x Wv + bv               # split into heads
    a = softmax(q k^T / sqrt(head size) + mask) v           # per text, padded keys masked
    h = LayerNorm(a Wo + bo + x)                             # attention output
    x = LayerNorm(GELU(h W1 + b1) W2 + b2 + h)               # feed-forward, exact GELU

The embeddings are the model's own module on the padded ids (so RoBERTa's position ids,
counted from its padding index, are its own). The real tokens' hidden states are those of
the model itself; padded positions come back as zeros, which nobody reads. A batch with
less padding than :data:`MIN_PADDED_SHARE` keeps its padding (:func:`pays_to_unpad`) and
runs every slot as a row, so that its row count is rounded like the others
(:func:`row_count`). The layer loop is compiled once by TorchScript, so that a pass does
not wait for Python's GIL behind Opik's threads between operations.

Used only where it is known to hold (:func:`prepare_unpadded`): an exact ``BertModel``,
``RobertaModel`` or ``XLMRobertaModel`` with absolute positions, no decoder,
transformers' layer layout and the exact GELU, whose output on a probe batch equals the
model's own; anything else runs through transformers. The switch
:mod:`~opik_semantic_metrics.models.encoder_paths` turns it off; figures and history are
in ``docs/design/cpu-encoder-paths.md``.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from opik_semantic_metrics.models.encoder_paths import hand_written_paths_enabled
from opik_semantic_metrics.models.packed_linear import PackedLinear, is_exact_gelu, packed_product

logger = logging.getLogger(__name__)

#: The model classes (by name) whose layers :class:`UnpaddedEncoder` knows.
UNPADDED_MODEL_CLASSES = frozenset({"BertModel", "RobertaModel", "XLMRobertaModel"})
#: Least share of padded positions in a batch for which running without padding pays:
#: taking the rows out and putting them back costs a few percent of a pass.
MIN_PADDED_SHARE = 0.05


def row_count(tokens: int) -> int:
    """Rows the linear layers run on for ``tokens`` real tokens: rounded up to five
    significant bits, 16 row counts an octave (at most 1/16 more rows; 232 for 230).

    oneDNN and PyTorch's ideep layer keep compiled kernels for every row count they
    see, up to 1,024 of them: exact token counts would grow the process with every new
    batch shape, rounded ones do not.
    """
    step = 1 << max(0, tokens.bit_length() - 5)
    return -(-tokens // step) * step


def pays_to_unpad(attention_mask: torch.Tensor) -> bool:
    """Whether a batch has enough padding (:data:`MIN_PADDED_SHARE`) to run without it."""
    padded = attention_mask.numel() - int(attention_mask.sum())
    return padded > MIN_PADDED_SHARE * attention_mask.numel()


@dataclass(frozen=True, eq=False)
class UnpaddedEncoder:
    """A BERT-family model's embeddings and layer weights, read once, to run on real tokens.

    Made by :func:`prepare_unpadded`, which checks that it gives the model's own hidden
    states. It holds the model's own tensors (no copies): the model must not be changed
    afterwards.
    """

    #: The model's embeddings module (word, position and token-type embeddings, LayerNorm).
    embeddings: torch.nn.Module
    heads: int
    eps: float
    #: Whether the linear layers are :class:`PackedLinear` (GELU fused into the first
    #: feed-forward product), or plain ``nn.Linear`` followed by the exact GELU.
    packed: bool
    #: Per layer: query, key, value, attention output, feed-forward in, feed-forward out.
    weights: list[torch.Tensor]
    biases: list[torch.Tensor | None]
    #: Per layer: attention LayerNorm weight and bias, feed-forward LayerNorm weight and bias.
    norms: list[torch.Tensor]

    def hidden_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The model's last hidden states, computed on real tokens only.

        Args:
            input_ids: ``(batch, length)`` token ids, padded with the model's padding id.
            attention_mask: ``(batch, length)``, 1 for real tokens and 0 for padding.

        Returns:
            ``(batch, length, width)``: ``res[b, t]`` = hidden state of token ``t`` of
            text ``b``. Padded positions are zeros in a batch with padding to skip
            (:func:`pays_to_unpad`); in one with little, they are computed as rows too, as
            transformers computes them, and nobody reads them either.
        """
        hidden = self.embeddings(input_ids=input_ids)
        unpad = pays_to_unpad(attention_mask)
        rows = row_count(int(attention_mask.sum()) if unpad else attention_mask.numel())
        return _compiled_layers()(
            hidden, attention_mask, rows, unpad, self.heads, self.eps, self.packed,
            self.weights, self.biases, self.norms,
        )  # fmt: skip


def prepare_unpadded(model: torch.nn.Module) -> UnpaddedEncoder | None:
    """``model``'s :class:`UnpaddedEncoder`, or ``None`` where it would not give the model's
    own last hidden states, or where the hand-written paths are off
    (:mod:`~opik_semantic_metrics.models.encoder_paths`).

    Checks the class, configuration and layer layout, then a probe batch of two texts of
    different lengths, and the longer alone, against the model's own output (float32
    within 1e-5, half types within 5e-2).
    """
    if not hand_written_paths_enabled():
        return None
    config = getattr(model, "config", None)
    if type(model).__name__ not in UNPADDED_MODEL_CLASSES or config is None:
        return None
    if getattr(config, "is_decoder", False) or model.training:
        return None
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    encoder = _read_layers(model)
    if encoder is None:
        return None
    parameter = next(model.parameters())
    pad_id = config.pad_token_id if config.pad_token_id is not None else 0
    # Ids past the special tokens; the shorter text is padded with the model's padding id.
    ids = torch.arange(5, 12, device=parameter.device) % config.vocab_size
    input_ids = torch.stack((ids, ids.flip(0)))
    input_ids[1, 4:] = pad_id
    mask = torch.ones_like(input_ids)
    mask[1, 4:] = 0
    tolerance = 1e-5 if parameter.dtype == torch.float32 else 5e-2
    # The padded batch runs unpadded; the first text alone has no padding, and runs with
    # its slots as rows.
    for probe_ids, probe_mask in ((input_ids, mask), (input_ids[:1], mask[:1])):
        with torch.inference_mode():
            expected = model(input_ids=probe_ids, attention_mask=probe_mask)[0]
            try:
                got = encoder.hidden_states(probe_ids, probe_mask)
            except (AttributeError, RuntimeError, TypeError):
                return None
        real = probe_mask.bool()
        if not torch.allclose(
            got[real].float(), expected[real].float(), rtol=tolerance, atol=tolerance
        ):
            return None
    return encoder


def _read_layers(model: torch.nn.Module) -> UnpaddedEncoder | None:
    """``model``'s embeddings and layer weights, if its layers have transformers' BERT
    layout (every linear layer plain or every one packed, the exact GELU, one LayerNorm
    epsilon); ``None`` otherwise."""
    bert: Any = model  # read by attribute: a model without BERT's layout raises below
    try:
        embeddings = bert.embeddings
        layers = list(bert.encoder.layer)
        heads = layers[0].attention.self.num_attention_heads
        linears = [
            module
            for layer in layers
            for module in (
                layer.attention.self.query,
                layer.attention.self.key,
                layer.attention.self.value,
                layer.attention.output.dense,
                layer.intermediate.dense,
                layer.output.dense,
            )
        ]
        norm_modules = [
            module
            for layer in layers
            for module in (layer.attention.output.LayerNorm, layer.output.LayerNorm)
        ]
        activations = [layer.intermediate.intermediate_act_fn for layer in layers]
    except (AttributeError, IndexError, TypeError):
        return None
    packed = all(isinstance(linear, PackedLinear) for linear in linears)
    if packed:
        # The GELU must be inside the feed-forward product, and only there.
        expected = ["none", "none", "none", "none", "gelu", "none"] * len(layers)
        if [linear.activation for linear in linears] != expected or not all(
            isinstance(activation, torch.nn.Identity) for activation in activations
        ):
            return None
        weights = [linear.packed_weight for linear in linears]
    elif all(type(linear) is torch.nn.Linear for linear in linears):
        if not all(is_exact_gelu(activation) for activation in activations):
            return None
        weights = [linear.weight for linear in linears]
    else:
        return None
    if not all(type(norm) is torch.nn.LayerNorm for norm in norm_modules):
        return None
    if len({norm.eps for norm in norm_modules}) != 1:
        return None
    return UnpaddedEncoder(
        embeddings=embeddings,
        heads=heads,
        eps=norm_modules[0].eps,
        packed=packed,
        weights=weights,
        biases=[linear.bias for linear in linears],
        norms=[tensor for norm in norm_modules for tensor in (norm.weight, norm.bias)],
    )


def _linear(
    inputs: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, packed: bool, gelu: bool
) -> torch.Tensor:
    """``inputs W^T + b``, then the exact GELU if ``gelu``; oneDNN's product if ``packed``."""
    if packed:
        return packed_product(inputs, weight, bias, "gelu" if gelu else "none")
    outputs = torch.nn.functional.linear(inputs, weight, bias)
    return torch.nn.functional.gelu(outputs) if gelu else outputs


def _run_layers(
    hidden: torch.Tensor,
    attention_mask: torch.Tensor,
    rows: int,
    unpad: bool,
    heads: int,
    eps: float,
    packed: bool,
    weights: list[torch.Tensor],
    biases: list[torch.Tensor | None],
    norms: list[torch.Tensor],
) -> torch.Tensor:
    """The layers on the real tokens of the embeddings ``hidden``, padded again at the end.

    ``rows`` (at least the number of real tokens) is the row count of the products; the
    spare rows read slot 0 and are written to a scratch slot past the end, which nothing
    reads (see :func:`row_count`). With ``unpad`` false, every slot of the padded layout
    is a row (its padded ones included, as in transformers), followed by spare rows of
    zeros: the rows need no gathering and the products still see rounded row counts.
    """
    batch, length, width = hidden.shape
    head_size = width // heads
    slots = batch * length
    if unpad:
        real = attention_mask.reshape(-1).nonzero().squeeze(1)  # slots of the real tokens
        spare = rows - real.numel()
        gather = torch.cat((real, real.new_zeros(spare)))
        scatter = torch.cat((real, real.new_full((spare,), slots)))
        states = hidden.reshape(slots, width).index_select(0, gather)
    else:
        gather = attention_mask.new_empty(0)  # no rows to gather or scatter
        scatter = gather
        states = torch.cat((hidden.reshape(slots, width), hidden.new_zeros(rows - slots, width)))
    # (batch, 1, 1, length); none where no key is padding, as in transformers, whose
    # attention kernel is then a faster one.
    key_mask: torch.Tensor | None = None
    if bool((attention_mask == 0).any()):
        key_mask = (attention_mask != 0)[:, None, None, :]
    for layer in range(len(weights) // 6):
        w, b = weights[6 * layer : 6 * layer + 6], biases[6 * layer : 6 * layer + 6]
        norm = norms[4 * layer : 4 * layer + 4]
        projected = torch.cat(
            (
                _linear(states, w[0], b[0], packed, False),
                _linear(states, w[1], b[1], packed, False),
                _linear(states, w[2], b[2], packed, False),
            ),
            dim=1,
        )
        if unpad:
            padded = projected.new_zeros(slots + 1, 3 * width).index_copy_(0, scatter, projected)
        else:
            padded = projected
        qkv = padded[:slots].view(batch, length, 3, heads, head_size).permute(2, 0, 3, 1, 4)
        mixed = torch.nn.functional.scaled_dot_product_attention(
            qkv[0], qkv[1], qkv[2], attn_mask=key_mask, scale=head_size**-0.5
        )
        if unpad:
            mixed = mixed.transpose(1, 2).reshape(slots, width).index_select(0, gather)
        else:
            heads_out = mixed
            mixed = states.new_empty(rows, width)
            mixed[:slots].view(batch, length, heads, head_size).copy_(heads_out.transpose(1, 2))
            mixed[slots:].zero_()
        attended = _linear(mixed, w[3], b[3], packed, False) + states
        attended = torch.layer_norm(attended, [width], norm[0], norm[1], eps)
        inner = _linear(attended, w[4], b[4], packed, True)
        feed_forward = _linear(inner, w[5], b[5], packed, False)
        states = torch.layer_norm(feed_forward + attended, [width], norm[2], norm[3], eps)
    if not unpad:
        return states[:slots].view(batch, length, width)
    output = states.new_zeros(slots + 1, width).index_copy_(0, scatter, states)
    return output[:slots].view(batch, length, width)


@functools.cache
def _compiled_layers() -> Callable[..., torch.Tensor]:
    """:func:`_run_layers` compiled by TorchScript, or as it is where that fails.

    Compiled, a forward pass takes Python's GIL once instead of once an operation, and
    does not wait for it behind Opik's threads between operations (see the module
    docstring). TorchScript is deprecated in PyTorch 2.x (hence the silenced notice) and
    needs the source files; without it the same function runs as Python.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.script(_run_layers)
    except Exception as error:  # TorchScript missing, removed or unable to compile this
        logger.debug("Unpadded layers run as Python; TorchScript failed: %s", error)
        return _run_layers
