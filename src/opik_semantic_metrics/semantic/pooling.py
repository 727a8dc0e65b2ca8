"""Sentence embeddings as sentence-transformers makes them, read from the model's own files.

A sentence-transformers model directory describes its pipeline in ``modules.json``: a
Transformer, then a Pooling module (its ``config.json`` names the pooling modes), then
optionally a Normalize module; ``sentence_bert_config.json`` gives the token limit
(``max_seq_length``) and whether texts are lower-cased first. :func:`read_pooling_config`
reads those files, so the same model gives the same sentence embedding here as in
``SentenceTransformer(model).encode`` (tested to 1e-5 against it). A plain transformers
model without these files is mean-pooled over its last layer, as sentence-transformers
itself does when given such a model. A pipeline with any other module (a Dense
projection, for example) is refused rather than silently scored differently.

Pooling, over the last hidden states ``h`` of shape ``(batch, length, width)`` and the
attention mask ``m`` (special tokens included, as in sentence-transformers):

- ``mean``: ``sum(h * m) / max(sum(m), 1e-9)``; ``mean_sqrt_len_tokens``: the same sum
  divided by ``sqrt(sum(m))``; ``weightedmean``: position ``i`` (from 1) weighs ``i``;
- ``max``: the largest value of each dimension over the real tokens;
- ``cls``: the first token; ``lasttoken``: the last real token.

Several modes are concatenated in the order the configuration lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import torch
from transformers.utils.hub import cached_file

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.input_files import checked_type, plain_name, read_json
from opik_semantic_metrics.models.sources import local_files_only

#: Pooling modes, in the order sentence-transformers concatenates the legacy flags.
POOLING_MODES: Final = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
_LEGACY_FLAGS: Final = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_TRANSFORMER, _POOLING, _NORMALIZE = "Transformer", "Pooling", "Normalize"


@dataclass(frozen=True)
class PoolingConfig:
    """How a model's token states become its sentence embedding.

    Attributes:
        modes: Pooling modes, concatenated in this order.
        normalize: The pipeline ends in a Normalize module (unit-length embeddings).
        max_seq_length: Token limit, special tokens included; ``None``: the tokenizer's.
        lowercase: Texts are lower-cased before tokenization.
        source: Where the settings came from (for metadata).
    """

    modes: tuple[str, ...]
    normalize: bool
    max_seq_length: int | None
    lowercase: bool
    source: str


#: What sentence-transformers does with a plain transformers model.
DEFAULT_POOLING = PoolingConfig(
    modes=("mean",),
    normalize=False,
    max_seq_length=None,
    lowercase=False,
    source="default: mean pooling (no sentence-transformers files)",
)


def _read_json(location: str, filename: str, expected: type) -> Any | None:
    """A JSON file of the model (a directory or a Hub id, via transformers' cache), or
    ``None`` where the model has no such file.

    Raises:
        ModelUnavailableError: The file is damaged or not of the ``expected`` type.
    """
    path = cached_file(
        location,
        filename,
        _raise_exceptions_for_missing_entries=False,
        _raise_exceptions_for_connection_errors=False,
        local_files_only=local_files_only(location),
    )
    if path is None:
        return None
    return read_json(path, expected, error=ModelUnavailableError)


def _setting(settings: dict[str, Any], name: str, kinds: type | tuple[type, ...], path: str) -> Any:
    """A setting of ``sentence_bert_config.json``, checked to be of one of ``kinds`` (or
    absent), so that a bad setting fails when the metric is made, not on every item."""
    value = settings.get(name)
    if value is None:
        return None
    return checked_type(value, kinds, path, what=f"`{name}`", error=ModelUnavailableError)


def _modes(config: dict[str, Any]) -> tuple[str, ...]:
    declared = config.get("pooling_mode")
    if declared is None:
        modes = tuple(mode for flag, mode in _LEGACY_FLAGS.items() if config.get(flag))
    elif isinstance(declared, str):
        modes = (declared,)
    else:  # a list of names; anything else (a number, a mapping) is refused below
        modes = tuple(declared) if isinstance(declared, list) else ()
    unknown = [mode for mode in modes if mode not in POOLING_MODES]
    if not modes or unknown:
        raise ValueError(
            f"Unsupported pooling configuration {config!r}: expected modes among {POOLING_MODES}."
        )
    return modes


def read_pooling_config(location: str) -> PoolingConfig:
    """The pooling settings of a model directory or Hub id (see the module docstring).

    Raises:
        ValueError: The pipeline has a module other than Transformer, Pooling and
            Normalize, or an unknown pooling mode.
        ModelUnavailableError: One of the files is damaged (see
            :mod:`~opik_semantic_metrics.input_files`), or a setting is of the wrong type
            (a ``max_seq_length`` written as a string).

    Example:
        >>> from opik_semantic_metrics.models.sources import packaged_minilm_path
        >>> config = read_pooling_config(str(packaged_minilm_path()))
        >>> config.modes, config.normalize, config.max_seq_length
        (('mean',), True, 256)
    """
    modules = _read_json(location, "modules.json", list)
    if modules is None:
        return DEFAULT_POOLING
    where = f"{location}/modules.json"
    for module in modules:
        checked_type(module, dict, where, what="each module", error=ModelUnavailableError)
        for key in ("type", "path"):
            checked_type(
                module.get(key), str, where, what=f"each module's `{key}`",
                error=ModelUnavailableError,
            )  # fmt: skip
    kinds = [module["type"].rsplit(".", 1)[-1] for module in modules]
    unsupported = [kind for kind in kinds if kind not in (_TRANSFORMER, _POOLING, _NORMALIZE)]
    if unsupported or _POOLING not in kinds:
        raise ValueError(
            f"The sentence-transformers pipeline of {location!r} is {kinds}: only Transformer, "
            "Pooling and Normalize modules are supported."
        )
    pooling_path = next(m["path"] for m in modules if m["type"].endswith(_POOLING))
    # A folder of the model ("1_Pooling"), never one outside it.
    plain_name(pooling_path, f"the Pooling module's `path` in {where}", ModelUnavailableError)
    pooling = _read_json(location, f"{pooling_path}/config.json", dict) or {}
    settings = _read_json(location, "sentence_bert_config.json", dict) or {}
    settings_file = f"{location}/sentence_bert_config.json"
    max_seq_length = _setting(settings, "max_seq_length", int, settings_file)
    if max_seq_length is not None and max_seq_length < 1:
        raise ModelUnavailableError(
            f"{settings_file}: expected `max_seq_length` to be a positive integer, got "
            f"{max_seq_length}."
        )
    return PoolingConfig(
        modes=_modes(pooling),
        normalize=_NORMALIZE in kinds,
        max_seq_length=max_seq_length,
        lowercase=bool(_setting(settings, "do_lower_case", bool, settings_file)),
        source="sentence-transformers modules.json",
    )


def pool(hidden: torch.Tensor, mask: torch.Tensor, modes: tuple[str, ...]) -> torch.Tensor:
    """Sentence embeddings ``(batch, width * len(modes))`` of right-padded token states.

    Args:
        hidden: ``(batch, length, width)`` last-layer token states.
        mask: ``(batch, length)``, 1 on real tokens (special tokens included), 0 on padding.
        modes: Pooling modes (see the module docstring).

    Returns:
        ``res[b]`` is the concatenation of each mode's pooled vector of text ``b``.
    """
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    lengths = weights.sum(dim=1).clamp(min=1e-9)
    pooled = []
    for mode in modes:
        if mode == "cls":
            pooled.append(hidden[:, 0])
        elif mode == "max":
            pooled.append(hidden.masked_fill(weights == 0, float("-inf")).max(dim=1).values)
        elif mode == "mean":
            pooled.append((hidden * weights).sum(dim=1) / lengths)
        elif mode == "mean_sqrt_len_tokens":
            pooled.append((hidden * weights).sum(dim=1) / lengths.sqrt())
        elif mode == "weightedmean":
            positions = torch.arange(1, hidden.shape[1] + 1, device=hidden.device)
            position_weights = weights * positions.view(1, -1, 1).to(hidden.dtype)
            total = position_weights.sum(dim=1).clamp(min=1e-9)
            pooled.append((hidden * position_weights).sum(dim=1) / total)
        else:  # lasttoken
            last = mask.sum(dim=1).long() - 1
            pooled.append(hidden[torch.arange(hidden.shape[0], device=hidden.device), last])
    return torch.cat(pooled, dim=-1)
