"""A model's layers: how many it has, and views of it that stop at one of them.

As in bert_score, a model read at layer ``k`` keeps only its layers up to ``k``; the
views here share every weight with the model they are cut from, so that the encoders
of several layers of one checkpoint hold one copy of it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

import torch

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.inputs import as_whole_number
from opik_semantic_metrics.models.sources import ModelSource, load_config, model_unavailable

# Attribute paths of the layer stack, tried in order; they cover BERT/RoBERTa/ELECTRA/
# DeBERTa (encoder.layer), BART/mBART/Pegasus encoders (layers), T5 encoders (block),
# DistilBERT (transformer.layer), XLNet (layer) and GPT-2 (h).
_LAYER_STACK_PATHS = (
    "encoder.layer",
    "encoder.layers",
    "encoder.block",
    "transformer.layer",
    "layers",
    "layer",
    "block",
    "h",
)


def count_model_layers(source: ModelSource, trust_remote_code: bool = False) -> int:
    """Number of layers of a model, read from its configuration.

    Raises:
        ModelUnavailableError: The configuration cannot be had (not local, not cached,
            not downloadable).
    """
    try:
        config = load_config(source.location, trust_remote_code)
    except (OSError, ValueError) as error:
        raise model_unavailable(source, error) from error
    return count_layers(config)


def checked_layer(
    source: ModelSource,
    layer: int | None,
    trust_remote_code: bool = False,
    name: str = "layer",
) -> tuple[int, int]:
    """``(layer, num_layers)``: ``layer`` (the last when ``None``) checked against the
    number of layers in the model's configuration; ``name`` is the caller's argument.

    Raises:
        ValueError: ``layer`` is not an integer between 0 (the embeddings) and the last
            layer.
        ModelUnavailableError: The configuration cannot be had.
    """
    num_layers = count_model_layers(source, trust_remote_code)
    number = num_layers if layer is None else as_whole_number(layer)
    if number is None or not 0 <= number <= num_layers:
        raise ValueError(
            f"Expected `{name}` to be an integer between 0 and {num_layers} for "
            f"{source.name!r}, got {layer!r}."
        )
    return number, num_layers


def count_layers(config: Any) -> int:
    """Number of transformer layers in a model configuration."""
    for attribute in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
        value = getattr(config, attribute, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"Cannot tell how many layers {type(config).__name__} has.")


def hidden_size(model: torch.nn.Module) -> int:
    """Width of a transformers model's hidden states, from its configuration."""
    config: Any = model.config  # transformers' configurations set their fields at run time
    return int(config.hidden_size)


def layer_stack_path(model: torch.nn.Module) -> str | None:
    """The attribute path of the model's list of layers (``"encoder.layer"``...), if found."""
    for path in _LAYER_STACK_PATHS:
        if isinstance(_at_path(model, path), torch.nn.ModuleList):
            return path
    return None


def layers_at(model: torch.nn.Module, path: str) -> list[torch.nn.Module]:
    """The layer modules of the list at ``path``."""
    return list(_at_path(model, path))


def _at_path(model: torch.nn.Module, path: str) -> Any:
    """The attribute at a dotted ``path`` of ``model``, or ``None`` where one is missing."""
    found: Any = model
    for name in path.split("."):
        found = getattr(found, name, None)
    return found


def _shallow_copy(module: torch.nn.Module) -> torch.nn.Module:
    """Another module object over the same children, parameters and buffers: replacing
    one of its children, or one of its plain attributes, leaves ``module`` as it was.
    Its hooks are still ``module``'s (transformers 5 records hidden states by hooks on the
    layers, installed once for all views: see
    :func:`~opik_semantic_metrics.models.encoders.load_checkpoint_encoder`)."""
    duplicate = object.__new__(type(module))
    duplicate.__dict__.update(module.__dict__)
    for registry in ("_modules", "_parameters", "_buffers"):
        duplicate.__dict__[registry] = copy.copy(module.__dict__[registry])
    return duplicate


def with_layers(
    model: torch.nn.Module, path: str, layers: list[torch.nn.Module]
) -> torch.nn.Module:
    """``model`` with ``layers`` as its layer list: every module is ``model``'s own (no
    weight is copied), except the modules on the path to the list, which are shallow
    copies so that ``model`` itself is left unchanged."""
    *parents, leaf = path.split(".")
    root = holder = _shallow_copy(model)
    for name in parents:
        child = _shallow_copy(getattr(holder, name))
        setattr(holder, name, child)
        holder = child
    setattr(holder, leaf, torch.nn.ModuleList(layers))
    return root


def is_albert(model: torch.nn.Module) -> bool:
    """ALBERT: one set of weights for every layer; the layer count is a config setting."""
    return hasattr(getattr(model, "encoder", None), "albert_layer_groups")


def is_xlm(model: torch.nn.Module) -> bool:
    """XLM: its layers' modules sit in parallel lists, run up to a count, ``n_layers``."""
    return isinstance(getattr(model, "n_layers", None), int)


def up_to_layer(model: torch.nn.Module, layer: int) -> torch.nn.Module | None:
    """A model whose own output is the output of ``layer``, dropping the layers above it
    as bert_score does, or ``None`` where the layer layout is unknown.

    The result shares every weight with ``model``, which is left unchanged: the encoders
    of several layers of one checkpoint are views of one copy.
    """
    if is_albert(model):
        # The count lives in the encoder's config, which the view gets a copy of.
        encoder: Any = model.encoder
        config = copy.copy(encoder.config)
        config.num_hidden_layers = layer
        root, view = _shallow_copy(model), _shallow_copy(encoder)
        view.config = config
        root.encoder = view
        return root
    if is_xlm(model):
        # A plain int attribute, which nn.Module's typing does not know.
        xlm: Any = _shallow_copy(model)
        xlm.n_layers = layer
        return xlm
    path = layer_stack_path(model)
    if path is None:
        return None
    return with_layers(model, path, layers_at(model, path)[:layer])


def held_tensors(module: torch.nn.Module) -> list[torch.Tensor]:
    """Every tensor the module and its submodules hold, each once: parameters, buffers,
    and tensors kept as plain attributes (the packed weights and biases of
    :class:`~opik_semantic_metrics.models.packed_linear.PackedLinear`)."""
    found: dict[int, torch.Tensor] = {}
    for inner in module.modules():
        for value in [*inner._parameters.values(), *inner._buffers.values(), *vars(inner).values()]:
            if isinstance(value, torch.Tensor):
                found.setdefault(id(value), value)
    return list(found.values())


def copy_tensors(module: torch.nn.Module) -> None:
    """Give the module's tensors memory of their own.

    transformers 5 maps a float32 checkpoint's file into memory and leaves tensors that
    need no conversion as views of it; a layer kept from a fresh load would keep the whole
    mapping alive, with every page of it that loading read (the embeddings the fresh
    copy used and is discarded with, among them).
    """
    with torch.no_grad():
        for tensor in held_tensors(module):
            # oneDNN's packed weights (an opaque layout) are made by packing, never mapped.
            if tensor.layout == torch.strided:
                tensor.data = tensor.data.clone()


def check_read_layers_loaded(
    model: torch.nn.Module, missing_keys: Sequence[str], layer: int, source: ModelSource
) -> None:
    """Refuse a checkpoint without the weights of a layer that will be read.

    transformers fills missing weights with random ones and only logs it: a config.json
    that counts more layers than the checkpoint holds gave scores from random layers.

    Raises:
        ModelUnavailableError: A read layer (below ``layer``) has missing weights.
    """
    path = layer_stack_path(model)
    if path is None:
        return
    layer_key = re.compile(rf"{re.escape(path)}\.(\d+)\.")
    missing = sorted(
        key for key in missing_keys if (found := layer_key.match(key)) and int(found[1]) < layer
    )
    if missing:
        raise ModelUnavailableError(
            f"Model {source.name!r} has no weights for {missing[:3]} (of {len(missing)} "
            f"missing) in {source.location}: its config.json counts more layers than its "
            "weights file holds, or the file is incomplete."
        )
