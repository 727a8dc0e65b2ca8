"""A loaded encoder: a tokenizer and a model that returns the hidden states of one layer.

The layers of one model share one copy of its weights. As in bert_score, the copy keeps
only the layers up to the one read (the layers above cost memory and time for nothing);
the encoder of a shallower layer is a view of it, and a deeper layer asked for later adds
only the layers the copy lacks (see :class:`Checkpoint`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from safetensors import SafetensorError
from transformers import AutoModel, PreTrainedTokenizerBase

from opik_semantic_metrics.forking import fork_safe_lock
from opik_semantic_metrics.models.layers import (
    check_read_layers_loaded,
    copy_tensors,
    is_albert,
    is_xlm,
    layer_stack_path,
    layers_at,
    up_to_layer,
    with_layers,
)
from opik_semantic_metrics.models.packed_linear import (
    PackedLinear,
    pack_linear_layers,
    same_output,
)
from opik_semantic_metrics.models.progress import no_loading_bars
from opik_semantic_metrics.models.sources import ModelSource, local_files_only, model_unavailable
from opik_semantic_metrics.models.tokenizer import (
    check_token_ids_fit,
    check_tokenizer_has_words,
    load_tokenizer,
    token_limit,
)
from opik_semantic_metrics.models.unpadded import UnpaddedEncoder, prepare_unpadded

#: The text every loaded model is run on once: to check that it runs, and that packing
#: its linear layers leaves its output as it was.
PROBE_TEXT = "a"


@dataclass(frozen=True, eq=False)
class LoadedEncoder:
    """A tokenizer and a model that returns the hidden states of one layer.

    Obtained from :func:`~opik_semantic_metrics.models.loading.load_encoder`, never built
    directly. Shared by every metric and thread of the process: do not modify it.

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


class Checkpoint:
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
    if not encoder.truncated_model or is_albert(model) or is_xlm(model):
        return None
    path = layer_stack_path(model)
    return None if path is None else len(layers_at(model, path))


def _view(deepest: LoadedEncoder, layer: int) -> LoadedEncoder:
    """The encoder of ``layer`` (at most ``deepest.layer``) over ``deepest``'s weights."""
    model = up_to_layer(deepest.model, layer) if deepest.truncated_model else None
    if model is None:  # the whole model, read through all its hidden states
        return replace(deepest, layer=layer)
    return _over_model(deepest, model, layer)


def _deepened(deepest: LoadedEncoder, deeper: LoadedEncoder) -> LoadedEncoder:
    """``deepest``'s model with the layers that ``deeper`` (a fresh load of the same
    checkpoint, truncated by the same layer list) has beyond them."""
    path = layer_stack_path(deepest.model)
    assert path is not None, "only models truncated by their layer list are deepened"
    kept = layers_at(deepest.model, path)
    added = layers_at(deeper.model, path)[len(kept) :]
    for layer in added:
        copy_tensors(layer)
    return _over_model(deepest, with_layers(deepest.model, path, kept + added), deeper.layer)


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
    recorded (see :func:`load_checkpoint_encoder`).

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


def load_checkpoint_encoder(
    source: ModelSource,
    layer: int,
    *,
    num_layers: int,
    device: torch.device,
    dtype: torch.dtype,
    use_fast_tokenizer: bool,
    trust_remote_code: bool,
) -> LoadedEncoder:
    """A fresh load of a checkpoint's tokenizer and model, read at ``layer``, checked.

    Raises:
        ModelUnavailableError: Its files cannot be had or read, or do not belong together.
        ValueError: The model fails on a one-word text at that layer.
    """
    tokenizer = load_tokenizer(source, use_fast_tokenizer, trust_remote_code)
    try:
        with no_loading_bars():  # transformers 5's "Loading weights" bar
            model, loading_info = AutoModel.from_pretrained(
                source.location,
                trust_remote_code=trust_remote_code,
                output_loading_info=True,
                local_files_only=local_files_only(source.location),
            )
    # A truncated or corrupt weights file (SafetensorError, or torch's RuntimeError), or a
    # config.json whose sizes are not the weights' (RuntimeError: size mismatch).
    except (OSError, ValueError, RuntimeError, SafetensorError) as error:
        raise model_unavailable(source, error) from error
    check_read_layers_loaded(model, loading_info["missing_keys"], layer, source)
    vocabulary = tokenizer.get_vocab()
    check_tokenizer_has_words(
        vocabulary, [*tokenizer.all_special_tokens, *tokenizer.get_added_vocab()], source.location
    )
    embeddings = model.get_input_embeddings()
    if isinstance(embeddings, torch.nn.Embedding):
        check_token_ids_fit(vocabulary, len(embeddings.weight), repr(source.name))
    # Sequence-to-sequence models (BART, T5, ...) are read on their encoder, as bert_score does.
    if hasattr(model, "encoder") and hasattr(model, "decoder"):
        model = model.encoder
    truncated = up_to_layer(model, layer)
    model = (model if truncated is None else truncated).to(device=device, dtype=dtype).eval()
    probe = tokenizer(PROBE_TEXT, return_tensors="pt").to(device)
    # transformers 5 records hidden states by hooks on the layers, which a model installs
    # on its first call that asks for them and marks as installed on itself. Asked for once
    # here, before any view of these layers exists (see Checkpoint): views copy the mark
    # and find the hooks in place, and no layer gets them twice.
    expected = _probe_output(model, probe, source.name, layer, num_layers)

    def unchanged() -> bool:
        return same_output(_probe_output(model, probe, source.name, layer, num_layers), expected)

    packed = pack_linear_layers(model, unchanged)
    return LoadedEncoder(
        name=source.name,
        location=source.location,
        layer=layer,
        num_layers=num_layers,
        device=device,
        dtype=dtype,
        tokenizer=tokenizer,
        model=model,
        max_length=token_limit(tokenizer, model),
        use_fast_tokenizer=use_fast_tokenizer,
        trust_remote_code=trust_remote_code,
        truncated_model=truncated is not None,
        packed_linear_layers=packed,
        unpadded=None if truncated is None else prepare_unpadded(model),
    )
