"""transformers' own progress bars kept out of what the package prints when it loads a model.

transformers 5 draws a "Loading weights" bar for every model it builds (and, for sharded
checkpoints, "Loading checkpoint shards"): a metric built in a script or a notebook would
print one each time, between the user's own output. Downloads are another matter: their
bars are huggingface_hub's, and they stay, since a first download of roberta-large takes
minutes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
#: Loads in progress, from any thread, and whether transformers' bars were on before the
#: first of them: the last one to end puts them back as they were.
_loading = 0
_were_on: bool | None = None


@contextlib.contextmanager
def no_loading_bars() -> Iterator[None]:
    """Within it, transformers draws none of its own progress bars; after it, they are as
    they were (the user's ``transformers.utils.logging.enable_progress_bar()`` or
    ``disable_progress_bar()`` holds). Safe with loads in several threads at once.

    transformers has no public switch for its own bars alone (``disable_progress_bar``
    also hides huggingface_hub's download bars), so this sets the module flag that
    switch sets; where a transformers release has no such flag, it does nothing.
    """
    global _loading, _were_on
    from transformers.utils import logging as transformers_logging

    with _lock:
        if _loading == 0:
            _were_on = getattr(transformers_logging, "_tqdm_active", None)
            if _were_on is not None:
                transformers_logging._tqdm_active = False
        _loading += 1
    try:
        yield
    finally:
        with _lock:
            _loading -= 1
            if _loading == 0 and _were_on is not None:
                transformers_logging._tqdm_active = _were_on
