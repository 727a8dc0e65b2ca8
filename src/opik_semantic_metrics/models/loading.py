"""The one place that hands out loaded models: one copy per process.

Every metric asks :func:`load_encoder` for a ``(model, layer, device, dtype)``; the first
call loads it and every later call, from any metric instance or thread, gets the same
object back. Loading is lazy and thread-safe: concurrent first calls for one key wait for
a single load. Where a model comes from is :mod:`~opik_semantic_metrics.models.sources`;
how one is loaded and cut at its layer, :mod:`~opik_semantic_metrics.models.encoders`.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import torch

from opik_semantic_metrics.inputs import check_flag
from opik_semantic_metrics.models.devices import resolve_device, resolve_dtype
from opik_semantic_metrics.models.encoders import (
    Checkpoint,
    LoadedEncoder,
    load_checkpoint_encoder,
)
from opik_semantic_metrics.models.layers import checked_layer
from opik_semantic_metrics.models.shared import LoadOnce
from opik_semantic_metrics.models.sources import resolve_model_source

# One copy of the weights per place they come from (and settings), the encoder of each
# layer over it, and the encoder of each spelling of the model (its name goes into
# hashes and metadata) over that: a directory written with and without a trailing "/",
# or the alias and the hub id, share one copy of the weights.
_checkpoints: LoadOnce[tuple[Any, ...], Checkpoint] = LoadOnce()
_weights: LoadOnce[tuple[Any, ...], LoadedEncoder] = LoadOnce()
_encoders: LoadOnce[tuple[Any, ...], LoadedEncoder] = LoadOnce()


def load_encoder(
    model: str,
    layer: int | None = None,
    *,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    use_fast_tokenizer: bool = False,
    trust_remote_code: bool = False,
) -> LoadedEncoder:
    """Load (once per process) a model that returns the hidden states of one layer.

    Args:
        model: Hub id, local directory, or the alias ``all-MiniLM-L6-v2``.
        layer: Layer to read, 0 (embeddings) to the number of layers; ``None`` is the last.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; ``None`` picks CUDA when available.
        dtype: Weight type, float32 by default.
        use_fast_tokenizer: Load the fast (Rust) tokenizer class where transformers has two.
            bert_score's default is the slow class, and so is ours.
        trust_remote_code: Allow models whose code lives in their Hub repository.

    Returns:
        The shared :class:`LoadedEncoder` for these settings.

    Raises:
        ModelUnavailableError: The model is not local, not cached, and cannot be downloaded.
        ValueError: ``layer`` is out of range, ``dtype`` unknown, a flag not a bool, or the
            model fails on a one-word text at that layer.

    Example:
        >>> encoder = load_encoder("all-MiniLM-L6-v2", device="cpu")
        >>> encoder.layer, encoder.num_layers
        (6, 6)
        >>> load_encoder("all-MiniLM-L6-v2", device="cpu") is encoder
        True
    """
    # A string would reach transformers as true: "False" would let a model's code run.
    use_fast_tokenizer = check_flag(use_fast_tokenizer, "use_fast_tokenizer")
    trust_remote_code = check_flag(trust_remote_code, "trust_remote_code")
    source = resolve_model_source(model)
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    layer, num_layers = checked_layer(source, layer, trust_remote_code)
    settings = (str(torch_device), torch_dtype, use_fast_tokenizer, trust_remote_code)

    def checkpoint() -> Checkpoint:
        return Checkpoint(
            functools.partial(
                load_checkpoint_encoder, source, num_layers=num_layers, device=torch_device,
                dtype=torch_dtype, use_fast_tokenizer=use_fast_tokenizer,
                trust_remote_code=trust_remote_code,
            )
        )  # fmt: skip

    def at_layer() -> LoadedEncoder:
        return _checkpoints.get((source.location, *settings), checkpoint).encoder(layer)

    def named() -> LoadedEncoder:
        loaded = _weights.get((source.location, layer, *settings), at_layer)
        return loaded if loaded.name == source.name else replace(loaded, name=source.name)

    return _encoders.get((source, layer, *settings), named)
