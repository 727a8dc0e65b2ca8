"""Writing a file so that a failure leaves the old one whole.

A report, a heatmap or a fitted state that fails halfway (a full disk, a size limit, an
interrupted run) must not leave a cut-off file where a good one was: the bytes go to a
hidden file beside it, which then replaces it in one step (``os.replace`` is atomic on a
POSIX file system and on Windows).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def replace_file(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` in an existing folder; the old file stays if this fails.

    Returns:
        The path written.

    Raises:
        OSError: The folder or the file cannot be written; nothing is left behind.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "page.html"
        >>> replace_file(target, b"<p>ok</p>").read_bytes()
        b'<p>ok</p>'
    """
    path = Path(path)
    # One name a writer, so that two threads or processes writing at once do not mix.
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
    try:
        # Opened by name, not by tempfile, whose files only their owner may read: the
        # file gets the permissions any new file of the user gets.
        with partial.open("wb") as file:
            file.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return path
