"""COMET checkpoints: where they come from, what they say, and their weights, read safely.

A COMET model is a directory, as unbabel-comet publishes them on the Hugging Face Hub::

    hparams.yaml              class_identifier and hyper-parameters
    checkpoints/model.ckpt    a torch checkpoint: "state_dict" and "hyper_parameters"

:func:`read_checkpoint` takes a Hub id (downloaded once with ``huggingface_hub``, which
honours the Hugging Face cache and ``HF_HUB_OFFLINE=1``), a local model directory, or
the path of its ``model.ckpt``. The weights are read with ``torch.load(...,
weights_only=True)``, which builds tensors and plain containers only and refuses any
other pickled object instead of running it; a ``checkpoints/model.safetensors`` is read
with ``safetensors`` when present.

The hyper-parameters are read as unbabel-comet 2.2.7's ``load_from_checkpoint`` reads
them: the class from ``hparams.yaml``'s ``class_identifier``; the values from the
checkpoint's own ``hyper_parameters`` (``hparams.yaml`` where the checkpoint has none),
over the defaults of the class's constructor; and, when ``hparams.yaml`` says
``layer_transformation: sparsemax_patch``, layers mixed with softmax whatever the
checkpoint says (COMET >= 2.2.4's fix for its issue #244).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import torch
import yaml

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.input_files import read_yaml
from opik_semantic_metrics.inputs import as_whole_number
from opik_semantic_metrics.models.sources import ModelSource, hub_offline, model_unavailable

#: The unbabel-comet release whose inference this package reproduces.
FAITHFUL_TO_COMET: Final = "2.2.7"
#: The model COMET's own documentation scores with.
DEFAULT_MODEL: Final = "Unbabel/wmt22-comet-da"

_HPARAMS_FILE = "hparams.yaml"
_CHECKPOINT_FILES = ("checkpoints/model.safetensors", "checkpoints/model.ckpt")

_REGRESSION_DEFAULTS: Final[dict[str, Any]] = {
    "encoder_model": "XLM-RoBERTa",
    "pretrained_model": "xlm-roberta-large",
    "pool": "avg",
    "layer": "mix",
    "layer_transformation": "softmax",
    "layer_norm": True,
    "hidden_sizes": [3072, 1024],
    "activations": "Tanh",
    "final_activation": None,
}
_UNIFIED_DEFAULTS: Final[dict[str, Any]] = {
    "encoder_model": "XLM-RoBERTa",
    "pretrained_model": "microsoft/infoxlm-large",
    "sent_layer": "mix",
    "layer_transformation": "sparsemax",
    "layer_norm": True,
    "word_layer": 24,
    "hidden_sizes": [3072, 1024],
    "activations": "Tanh",
    "final_activation": None,
    "input_segments": ["mt", "src", "ref"],
    "word_level_training": False,
    "error_labels": ["minor", "major"],
}


@dataclass(frozen=True)
class CometClass:
    """One model class of unbabel-comet, as named by ``class_identifier``.

    Attributes:
        identifier: The ``class_identifier`` of ``hparams.yaml``.
        kind: ``"regression"``, ``"referenceless"``, ``"unified"`` or ``"xcomet"``.
        defaults: The class constructor's defaults, used for keys a checkpoint lacks.
        forced: Values the class sets whatever the checkpoint says.
    """

    identifier: str
    kind: str
    defaults: Mapping[str, Any]
    forced: Mapping[str, Any] = field(default_factory=dict)


#: unbabel-comet 2.2.7's model classes (``comet/models/__init__.py`` ``str2model``) with
#: their constructor defaults. The ranking metric scores no single translation and is
#: not supported.
COMET_CLASSES: Final[dict[str, CometClass]] = {
    "regression_metric": CometClass("regression_metric", "regression", _REGRESSION_DEFAULTS),
    "referenceless_regression_metric": CometClass(
        "referenceless_regression_metric",
        "referenceless",
        {**_REGRESSION_DEFAULTS, "hidden_sizes": [2048, 1024]},
    ),
    "unified_metric": CometClass("unified_metric", "unified", _UNIFIED_DEFAULTS),
    "xcomet_metric": CometClass(
        "xcomet_metric",
        "xcomet",
        {
            **_UNIFIED_DEFAULTS,
            "encoder_model": "XLM-RoBERTa-XL",
            "pretrained_model": "facebook/xlm-roberta-xl",
            "layer_norm": False,
            "word_layer": 36,
            "hidden_sizes": [2560, 1280],
            "error_labels": ["minor", "major", "critical"],
        },
        forced={"input_segments": ["mt", "src", "ref"], "word_level_training": True},
    ),
}

ALLOWED_POOLS: Final = ("avg", "max", "cls", "default")
ALLOWED_SEGMENTS: Final = frozenset({"mt", "src", "ref"})


@dataclass(frozen=True)
class CometHparams:
    """The hyper-parameters inference depends on, checked once.

    Attributes:
        class_identifier: The model class (a key of :data:`COMET_CLASSES`).
        kind: The class's kind (see :class:`CometClass`).
        encoder_model: COMET's encoder family name (``"XLM-RoBERTa"``, ``"BERT"``...).
        pretrained_model: Hub id or directory of the encoder's config and tokenizer.
        layer: ``"mix"`` (all hidden states mixed) or the index of one hidden state.
        sparsemax: Mix the layers with sparsemax (else softmax).
        layer_norm: Normalise each hidden state before mixing.
        pool: Sentence pooling of regression models: ``avg``, ``max``, ``cls``, ``default``.
        hidden_sizes, activations, final_activation: The feed-forward estimator.
        input_segments: The segments the model reads (unified models: joins), "mt" first.
        word_level: Unified models: the model tags error spans.
        word_layer: The hidden state the error tags are read from.
        error_labels: Error severities, in the order of the tagging head's outputs.
    """

    class_identifier: str
    kind: str
    encoder_model: str
    pretrained_model: str
    layer: str | int
    sparsemax: bool
    layer_norm: bool
    pool: str
    hidden_sizes: tuple[int, ...]
    activations: str
    final_activation: str | None
    input_segments: tuple[str, ...]
    word_level: bool
    word_layer: int
    error_labels: tuple[str, ...]

    @property
    def requires_references(self) -> bool:
        """Whether the model cannot score without a reference (COMET's rule)."""
        return self.kind == "regression" or self.input_segments == ("mt", "ref")

    @property
    def reads_references(self) -> bool:
        """Whether a reference, when given, is part of the model's input."""
        return "ref" in self.input_segments


def parse_hparams(
    class_identifier: str, checkpoint_hparams: Mapping[str, Any], yaml_hparams: Mapping[str, Any]
) -> CometHparams:
    """Merge and check hyper-parameters as ``load_from_checkpoint`` does (module docstring).

    Raises:
        ValueError: An unknown class, or a value inference cannot use.

    Example:
        >>> hparams = parse_hparams(
        ...     "regression_metric", {"layer_transformation": "sparsemax", "layer_norm": False}, {}
        ... )
        >>> hparams.sparsemax, hparams.pool, hparams.hidden_sizes
        (True, 'avg', (3072, 1024))
    """
    comet_class = COMET_CLASSES.get(class_identifier)
    if comet_class is None:
        raise ValueError(
            f"COMET model class {class_identifier!r} is not supported: expected one of "
            f"{sorted(COMET_CLASSES)}."
        )
    values = {**comet_class.defaults, **checkpoint_hparams, **comet_class.forced}
    unified = comet_class.kind in ("unified", "xcomet")
    layer = values["sent_layer"] if unified else values["layer"]
    if layer != "mix":
        number = as_whole_number(layer)  # `layer: true` is no layer 1
        if number is None:
            raise ValueError(f"Expected the layer to be 'mix' or an integer, got {layer!r}.")
        layer = number
    # Only the exact name selects sparsemax in COMET's LayerwiseAttention; the patch
    # in hparams.yaml overrides the checkpoint.
    sparsemax = values["layer_transformation"] == "sparsemax"
    if yaml_hparams.get("layer_transformation") == "sparsemax_patch":
        sparsemax = False
    pool = "cls" if unified else values["pool"]
    if pool not in ALLOWED_POOLS:
        raise ValueError(f"Expected the pooling to be one of {ALLOWED_POOLS}, got {pool!r}.")
    if unified:
        segments = tuple(values["input_segments"])
    else:
        segments = ("mt", "src", "ref") if comet_class.kind == "regression" else ("mt", "src")
    if not set(segments) <= ALLOWED_SEGMENTS or segments[:1] != ("mt",):
        raise ValueError(f"Expected input segments starting with 'mt', got {list(segments)}.")
    return CometHparams(
        class_identifier=class_identifier,
        kind=comet_class.kind,
        encoder_model=values["encoder_model"],
        pretrained_model=str(values["pretrained_model"]),
        layer=layer,
        sparsemax=sparsemax,
        layer_norm=bool(values["layer_norm"]),
        pool=pool,
        hidden_sizes=tuple(int(size) for size in values["hidden_sizes"]),
        activations=values["activations"],
        final_activation=values["final_activation"],
        input_segments=segments,
        word_level=unified and bool(values["word_level_training"]),
        word_layer=int(values["word_layer"]) if unified else 0,
        error_labels=tuple(values["error_labels"]) if unified else (),
    )


@dataclass(frozen=True, eq=False)
class CometCheckpoint:
    """A COMET model read from disk: its hyper-parameters and weights.

    Attributes:
        name: The name it was asked for (Hub id or path).
        directory: The model directory (``hparams.yaml`` and ``checkpoints/``).
        revision: The Hub commit it was downloaded at; ``None`` for a local directory.
        weights_path: The checkpoint file the weights were read from (one directory can
            hold several, as COMET's training leaves them).
        hparams: The checked hyper-parameters.
        state_dict: The weights, keyed as in unbabel-comet (``encoder.model.*``,
            ``layerwise_attention.*``, ``estimator.ff.*``, ``hidden2tag.*``).
    """

    name: str
    directory: Path
    revision: str | None
    weights_path: Path
    hparams: CometHparams
    state_dict: Mapping[str, torch.Tensor]


def locate_model(model: str) -> tuple[Path, str | None]:
    """The model directory of a Hub id, a directory or a ``model.ckpt`` path, and its revision.

    Raises:
        ModelUnavailableError: Not local and not downloadable (offline and not cached,
            gated, not found), with what to do about it.
    """
    path = Path(model).expanduser()
    if path.is_file():
        # COMET's layout: <model>/checkpoints/model.ckpt.
        return path.resolve().parents[1], None
    if path.is_dir():
        return path.resolve(), None
    from huggingface_hub import snapshot_download

    try:
        snapshot = Path(snapshot_download(repo_id=model, local_files_only=hub_offline()))
    except (OSError, ValueError) as error:
        raise model_unavailable(
            ModelSource(name=model, location=model), error, encoder=False
        ) from error
    return snapshot, snapshot.name


def resolve_pretrained(directory: Path, name: str) -> str:
    """Where an encoder name from the hyper-parameters is read from.

    A name that is a directory relative to the model directory (a self-contained model
    that ships its encoder's config and tokenizer) is read from there; any other name is
    a Hub id or a path, as in COMET.

    Example:
        >>> resolve_pretrained(Path("/nonexistent"), "xlm-roberta-large")
        'xlm-roberta-large'
    """
    beside = directory / name
    return str(beside.resolve()) if beside.is_dir() else name


class _HparamsLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no types
    """YAML's safe loader, reading the ``!!python/tuple`` tag that Lightning writes for
    tuples (unbabel-comet reads the file with PyYAML's full loader); nothing else."""


_HparamsLoader.add_constructor(
    "tag:yaml.org,2002:python/tuple",
    lambda loader, node: tuple(loader.construct_sequence(node)),
)


def read_weights(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The state dict and embedded hyper-parameters of a checkpoint file, read safely.

    Raises:
        ModelUnavailableError: The file holds pickled objects other than tensors and
            plain data (it could run code when unpickled), or is not a checkpoint (empty,
            truncated or corrupt).
    """
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            return load_file(str(path)), {}
        except SafetensorError as error:
            raise _unreadable(path, error) from error
    try:
        try:
            checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError:
            # Files saved in torch's format before 1.6 (not a zip) cannot be mapped.
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        # torch names the global it refused ("Unsupported global: GLOBAL posix.system");
        # bytes that are no pickle at all fail on an "Unsupported operand" instead.
        if "global" not in str(error).lower():
            raise _unreadable(path, error) from error
        raise ModelUnavailableError(
            f"Refused to load {path}: it holds pickled objects other than tensors and "
            f"plain data, which could run code when loaded. Only load checkpoints from "
            f"sources you trust, converted to safetensors. ({error})"
        ) from error
    except (RuntimeError, EOFError) as error:
        # An empty file ends the unpickler at once: EOFError, with no message.
        raise _unreadable(path, error) from error
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise ModelUnavailableError(f"{path} is not a COMET checkpoint (no 'state_dict').")
    hyper_parameters = checkpoint.get("hyper_parameters") or {}
    return checkpoint["state_dict"], dict(hyper_parameters)


def _unreadable(path: Path, error: Exception) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"{path} is not a readable checkpoint (empty, truncated or corrupt: download or "
        f"copy it again): {type(error).__name__}: {error}"
    )


def read_checkpoint(model: str = DEFAULT_MODEL) -> CometCheckpoint:
    """Locate a COMET model and read its hyper-parameters and weights.

    Args:
        model: Hub id (``"Unbabel/wmt22-comet-da"``), model directory, or ``model.ckpt`` path.

    Returns:
        The :class:`CometCheckpoint`.

    Raises:
        ModelUnavailableError: The model cannot be had, or its checkpoint is unsafe or
            unreadable.
        ValueError: Its hyper-parameters name an unsupported class or setting.
    """
    directory, revision = locate_model(model)
    hparams_path = directory / _HPARAMS_FILE
    if not hparams_path.is_file():
        if Path(model).expanduser().is_file():
            # A file is read as <model>/checkpoints/model.ckpt: say where that led.
            raise ModelUnavailableError(
                f"{model!r} is not a COMET model: a file is read as the checkpoint "
                f"<model>/checkpoints/model.ckpt of a model folder, and {hparams_path} "
                "is missing; name the model folder."
            )
        raise ModelUnavailableError(f"{model!r} is not a COMET model: {hparams_path} is missing.")
    yaml_hparams = read_yaml(hparams_path, _HparamsLoader, object, error=ModelUnavailableError)
    given = Path(model).expanduser()
    candidates = [given] if given.is_file() else [directory / name for name in _CHECKPOINT_FILES]
    weights_path = next((path for path in candidates if path.is_file()), None)
    if weights_path is None:
        raise ModelUnavailableError(
            f"{model!r} has no checkpoint: expected one of {list(_CHECKPOINT_FILES)} in "
            f"{directory}."
        )
    if not isinstance(yaml_hparams, dict) or "class_identifier" not in yaml_hparams:
        raise ModelUnavailableError(f"{hparams_path} names no `class_identifier`.")
    if not isinstance(yaml_hparams["class_identifier"], str):
        raise ModelUnavailableError(
            f"{hparams_path}: expected `class_identifier` to be a name such as "
            f"'regression_metric', got {yaml_hparams['class_identifier']!r}."
        )
    state_dict, checkpoint_hparams = read_weights(weights_path)
    try:
        hparams = parse_hparams(
            yaml_hparams["class_identifier"], checkpoint_hparams or yaml_hparams, yaml_hparams
        )
    # Said with the file; a value of the wrong type (a number where a list belongs, a
    # list as the class) fails inside the checks with Python's own words.
    except (TypeError, KeyError, AttributeError, ValueError) as error:
        source = weights_path if checkpoint_hparams else hparams_path
        detail = (
            str(error)
            if isinstance(error, ValueError)
            else f"a value of the wrong type ({type(error).__name__}: {error})"
        )
        raise ValueError(f"The hyper-parameters of {source}: {detail}") from error
    return CometCheckpoint(
        name=model,
        directory=directory,
        revision=revision,
        weights_path=weights_path.resolve(),
        hparams=hparams,
        state_dict=state_dict,
    )
