"""Linear layers with weights packed once for oneDNN, for inference on x86-64 CPUs.

An encoder spends almost all its CPU time in the products of its linear layers;
``nn.Linear`` on the CPU repacks its weight on every call, while oneDNN (inside PyTorch as
``torch.ops.mkldnn``) packs it once into the layout its kernels read. PyTorch's own
compiler (inductor) uses the same two operators for CPU inference:
``_reorder_linear_weight`` (pack once) and ``_linear_pointwise`` (multiply by the packed
weight, add the bias). The result is the same product with another summation order,
equal to ``nn.Linear``'s to float32 rounding. The loader (``encoders.py``) packs the
encoders of BERTScore and SemanticMatch, not COMET's, whose regression head amplifies
that rounding beyond the 1e-5 promised.

Packing is used only where it is known to hold: a CPU model, float32 or bfloat16 weights,
an x86-64 processor, PyTorch built with oneDNN and both operators present, and a probe
product equal to ``torch.nn.functional.linear``'s; the loader also checks the whole
model's output on a probe text, and a model that fails or differs once packed (T5, whose
feed-forward reads its layer's ``weight``) gets its own modules back. Only plain
``nn.Linear`` modules are replaced (not subclasses, which may do more).

The exact (erf) GELU that follows the first feed-forward layer of BERT-family models
(``intermediate_act_fn`` after ``dense``, transformers' naming) is fused into that
layer's product, so that the wide intermediate is not written out and read back; each
fusion is checked on the module itself (its output before and after, on a probe input)
and undone if they differ.

The switch :mod:`~opik_semantic_metrics.models.encoder_paths` turns packing off; figures
are in ``docs/design/cpu-encoder-paths.md``.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Callable
from typing import TypeGuard

import torch
from transformers.activations import GELUActivation

from opik_semantic_metrics.models.encoder_paths import hand_written_paths_enabled

_X86_64 = {"x86_64", "amd64"}


def packed_product(
    inputs: torch.Tensor, packed_weight: torch.Tensor, bias: torch.Tensor | None, activation: str
) -> torch.Tensor:
    """``inputs W^T + b`` by oneDNN with a weight packed by ``_reorder_linear_weight``,
    then ``activation`` (``"none"`` or ``"gelu"``, the exact GELU) applied inside the
    product. The leading dimensions of ``inputs`` are kept as they are (no reshapes).

    TorchScript compiles it too: the unpadded layers (``unpadded.py``) call it.
    """
    no_scalars = torch.jit.annotate(list[int | float | complex | None], [])
    # For "gelu", the trailing "none" picks the exact (erf) form, not the tanh one.
    return torch.ops.mkldnn._linear_pointwise(
        inputs, packed_weight, bias, activation, no_scalars, "none"
    )


class PackedLinear(torch.nn.Module):
    """An inference-only ``nn.Linear`` whose weight is packed once for oneDNN.

    Args:
        linear: The layer to replace; its weight and bias are read, not kept.
        activation: ``"none"``, or ``"gelu"`` to apply the exact GELU to the output
            inside oneDNN's product.

    Example:
        >>> layer = torch.nn.Linear(8, 4)
        >>> x = torch.randn(2, 3, 8)
        >>> packed = PackedLinear(layer) if packing_supported(torch.float32) else layer
        >>> torch.allclose(packed(x), layer(x), atol=1e-6)
        True
    """

    def __init__(self, linear: torch.nn.Linear, activation: str = "none") -> None:
        super().__init__()
        if activation not in ("none", "gelu"):
            raise ValueError(f"Expected `activation` 'none' or 'gelu', got {activation!r}.")
        self.activation = activation
        self.dtype = linear.weight.dtype
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        weight = linear.weight.detach()
        self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        self.bias = None if linear.bias is None else linear.bias.detach().to(weight.dtype)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """``inputs @ weight.T + bias`` over the last dimension; any leading dimensions."""
        if not inputs.is_contiguous():
            inputs = inputs.contiguous()
        return packed_product(inputs, self.packed_weight, self.bias, self.activation)

    def extra_repr(self) -> str:
        text = f"in_features={self.in_features}, out_features={self.out_features}, packed=oneDNN"
        return text if self.activation == "none" else f"{text}, activation={self.activation}"


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively through oneDNN (AVX-512 BF16, AMX)."""
    return torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()


@functools.cache
def packing_supported(dtype: torch.dtype) -> bool:
    """Whether :class:`PackedLinear` runs here, for CPU weights of ``dtype``, and is exact.

    Checked once per type: the processor, the operators, and a probe product against
    ``torch.nn.functional.linear``.
    """
    if platform.machine().lower() not in _X86_64 or dtype not in (torch.float32, torch.bfloat16):
        return False
    operators = torch.ops.mkldnn
    if not torch.backends.mkldnn.is_available() or not all(
        hasattr(operators, name) for name in ("_reorder_linear_weight", "_linear_pointwise")
    ):
        return False
    if dtype == torch.bfloat16 and not cpu_has_native_bf16():
        return False
    generator = torch.Generator().manual_seed(0)
    probe = torch.nn.Linear(48, 40).to(dtype)
    with torch.no_grad():
        probe.weight.copy_(torch.randn(40, 48, generator=generator))
        probe.bias.copy_(torch.randn(40, generator=generator))
    inputs = torch.randn(2, 5, 48, generator=generator).to(dtype)
    try:
        with torch.inference_mode():
            packed = PackedLinear(probe)(inputs)
            expected = probe(inputs)
    except RuntimeError:
        return False
    return same_output(packed, expected)


def same_output(packed: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether a packed product (or model) gives ``expected`` up to the rounding its other
    summation order brings: 1e-4 in float32, 5e-2 in a 16-bit type (of ``expected``)."""
    tolerance = 1e-4 if expected.dtype == torch.float32 else 5e-2
    return torch.allclose(packed.float(), expected.float(), rtol=tolerance, atol=tolerance)


def pack_linear_layers(model: torch.nn.Module, unchanged: Callable[[], bool] | None = None) -> int:
    """Replace, in place, every plain ``nn.Linear`` of a CPU inference model by a
    :class:`PackedLinear`, where :func:`packing_supported` and the hand-written paths are
    on (:mod:`~opik_semantic_metrics.models.encoder_paths`); returns how many were replaced.

    Exact GELUs that follow a feed-forward layer are fused into it where that leaves the
    module's output unchanged (see the module docstring). The model must not be trained
    or moved to another device afterwards.

    Args:
        model: The model to pack.
        unchanged: Called once packed: whether the model still gives its own output (on a
            probe input). Where it returns False or raises, the model is given back its
            own modules and nothing is packed. Some models read a linear layer's
            ``weight`` themselves (T5's feed-forward casts its input to that weight's
            type), which a packed layer does not have.
    """
    parameter = next(model.parameters(), None)
    if parameter is None or parameter.device.type != "cpu":
        return 0
    if not hand_written_paths_enabled() or not packing_supported(parameter.dtype):
        return 0
    own_modules = [
        (module, name, child)
        for module in model.modules()
        for name, child in module.named_children()
    ]
    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if type(child) is torch.nn.Linear and child.weight.dtype == parameter.dtype:
                setattr(module, name, PackedLinear(child))
                replaced += 1
    for module in model.modules():
        _fuse_gelu(module)
    if replaced and unchanged is not None and not _holds(unchanged):
        for module, name, child in own_modules:
            setattr(module, name, child)
        return 0
    return replaced


def _holds(check: Callable[[], bool]) -> bool:
    """``check()``, and False where it raises: a model that fails once packed, whatever
    its error, is a model to leave unpacked."""
    try:
        return check()
    except Exception:
        return False


def is_exact_gelu(module: object) -> TypeGuard[torch.nn.Module]:
    """Whether ``module`` is the exact (erf) GELU, as transformers' or as ``nn.GELU``."""
    if isinstance(module, GELUActivation):
        return module.act is torch.nn.functional.gelu
    return type(module) is torch.nn.GELU and module.approximate == "none"


def _fuse_gelu(module: torch.nn.Module) -> None:
    """Fold ``module.intermediate_act_fn`` into ``module.dense`` if the output stays the same.

    transformers' BERT-family feed-forward blocks compute ``act(dense(x))``; the module is
    run on a probe input before and after, and the fusion undone unless they agree.
    """
    dense, activation = getattr(module, "dense", None), getattr(module, "intermediate_act_fn", None)
    if not isinstance(dense, PackedLinear) or dense.activation != "none":
        return
    if not is_exact_gelu(activation):
        return
    generator = torch.Generator().manual_seed(0)
    dtype = dense.dtype
    probe = torch.randn(2, 3, dense.in_features, generator=generator).to(dtype)
    with torch.inference_mode():
        expected = module(probe)
        module.intermediate_act_fn = torch.nn.Identity()
        dense.activation = "gelu"
        try:
            got = module(probe)
        except RuntimeError:
            got = None
    tolerance = 1e-5 if dtype == torch.float32 else 5e-2
    if got is None or not torch.allclose(
        got.float(), expected.float(), rtol=tolerance, atol=tolerance
    ):
        module.intermediate_act_fn = activation
        dense.activation = "none"
