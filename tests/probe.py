"""A fresh interpreter that runs a probe program and reports in JSON: what the CLI's tests
use to see which modules a command imports, which no test inside this process can see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_json_probe(program: str, arguments: list[str], pythonpath: Path, timeout: float) -> Any:
    """Run ``program`` with ``arguments`` in a fresh interpreter that imports the package
    from ``pythonpath``; the JSON its last line of output prints.

    The program must exit 0 (its error output is the assertion's message)."""
    completed = subprocess.run(
        [sys.executable, "-c", program, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
        timeout=timeout,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])
