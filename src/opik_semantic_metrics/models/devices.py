"""The device a model runs on and the type of its weights, checked when a metric is made."""

from __future__ import annotations

from collections.abc import Callable

import torch

from opik_semantic_metrics.models.packed_linear import cpu_has_native_bf16

_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
}
#: The weight types a model runs in, float64 included (slow, but it runs); float8 has no
#: kernels for the models' operations, and would fail on every item.
_WEIGHT_DTYPES = frozenset({torch.float32, torch.bfloat16, torch.float16, torch.float64})


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` picks CUDA when available, else the CPU; anything else is checked.

    The devices are the CPU, CUDA GPUs, and Apple's ``"mps"`` and Intel's ``"xpu"`` where
    this PyTorch build has them (those two untested here: no such machine).
    One device has one spelling here ("cpu:0" is "cpu", "cuda" is "cuda:N" for the
    current GPU N), so that it gets one model copy and one cache namespace.

    Raises:
        ValueError: Not one of those devices, or one this machine lacks (checked here,
            so that a metric fails when it is made, not on every item).
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        resolved: torch.device | None = torch.device(device)
    except (RuntimeError, TypeError):  # not a device PyTorch knows
        resolved = None
    # "meta" holds no data; "hpu", "ipu"... fail inside PyTorch in their own words.
    if resolved is None or resolved.type not in _AVAILABLE_DEVICES:
        raise ValueError(
            f"Expected `device` to be 'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu', got {device!r}."
        )
    if not _AVAILABLE_DEVICES[resolved.type]():
        raise ValueError(
            f"`device` is {device!r}, but this PyTorch build has no {resolved.type.upper()} "
            f"device (torch {torch.__version__}); use device='cpu' or None."
        )
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        raise ValueError(
            f"`device` is {device!r}, but this machine has {torch.cuda.device_count()} CUDA "
            "GPU(s), numbered from 0."
        )
    if resolved.type == "cpu":
        return torch.device("cpu")
    if resolved.type == "cuda" and resolved.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return resolved


#: The devices a model can run on, each with a check that this machine has one (looked
#: up when called, as PyTorch's own checks may be replaced: by tests, by plugins).
_AVAILABLE_DEVICES: dict[str, Callable[[], bool]] = {
    "cpu": lambda: True,
    "cuda": lambda: torch.cuda.is_available(),
    "mps": lambda: torch.backends.mps.is_available(),
    "xpu": lambda: hasattr(torch, "xpu") and torch.xpu.is_available(),
}


def fast_dtype(device: torch.device) -> torch.dtype:
    """The fastest 16-bit type with native support on ``device``, else float32.

    bfloat16 on GPUs that have it (float16 on older ones), and on CPUs with native bf16
    instructions (AVX-512 BF16, AMX); float32 on CPUs without, where bf16 is emulated
    and slower than float32.
    """
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and cpu_has_native_bf16():
        return torch.bfloat16
    return torch.float32


def resolve_dtype(
    dtype: str | torch.dtype | None, device: torch.device | None = None
) -> torch.dtype:
    """``None`` is float32; ``"fast"`` is :func:`fast_dtype` of ``device``; strings such
    as ``"bf16"`` or ``"float16"`` are accepted.

    Example:
        >>> resolve_dtype("bf16"), resolve_dtype(None)
        (torch.bfloat16, torch.float32)
    """
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype) and dtype in _WEIGHT_DTYPES:
        return dtype
    name = dtype.lower() if isinstance(dtype, str) else None
    if name == "fast":
        return fast_dtype(device if device is not None else resolve_device(None))
    if name in _DTYPES:
        return _DTYPES[name]
    raise ValueError(
        f"Expected `dtype` to be 'fast', one of {sorted(_DTYPES)} or torch.float32, "
        f"torch.bfloat16, torch.float16 or torch.float64, got {dtype!r}."
    )


def dtype_name(dtype: torch.dtype) -> str:
    """A type's name as metadata records it: ``"float32"``, ``"bfloat16"``...

    Metrics record the type that produced a score, because the fast mode moves scores.
    """
    return str(dtype).removeprefix("torch.")
