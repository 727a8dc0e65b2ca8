"""Headless Chromium for rendering tests: find it, and screenshot a local HTML file.

Debian's package is ``chromium`` (``apt-get install chromium``). Each screenshot runs a
fresh browser with its own throw-away profile and everything that would reach the
network (updates, sync, background requests) switched off.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from PIL import Image

_NAMES = ("chromium", "chromium-browser", "google-chrome")
SKIP_REASON = "headless Chromium is not installed (Debian: apt-get install chromium)"


def find_chromium() -> str | None:
    """Path of a Chromium executable, or None."""
    return next((path for name in _NAMES if (path := shutil.which(name))), None)


def screenshot(html: Path, *, width: int = 1280, height: int = 5000) -> Image.Image:
    """The page as Chromium renders it in a ``width`` x ``height`` window, as RGB."""
    executable = find_chromium()
    if executable is None:
        raise RuntimeError(SKIP_REASON)
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "screenshot.png"
        subprocess.run(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={Path(folder) / 'profile'}",
                f"--window-size={width},{height}",
                f"--screenshot={output}",
                html.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
        with Image.open(output) as image:
            return image.convert("RGB")
