"""How long a script takes to end after its last printed line.

Opik's engine queues one trace per item for its configured host even with tracking off;
with no server there, the process waited about 12 s at exit on Opik's retries unless the
script ended Opik's client (``opik.get_global_client().end(flush=False)``). What is left
once it does is the interpreter's teardown, which takes seconds on a busy machine whatever
the script does: so a script's exit is measured against a script with the same imports
that only scores one pair, timed beside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Seconds a script may take from its last printed line to its end beyond the teardown of
#: an interpreter holding Opik, PyTorch and the model: far below the ~12 s of Opik's retries.
EXIT_ALLOWANCE_S = 3.0

#: The same imports and one score, without Opik's engine: how long this machine takes to
#: tear down an interpreter holding Opik, PyTorch and the model, now.
TEARDOWN_ONLY = """
import opik
from opik_semantic_metrics import BERTScore
metric = BERTScore(model="all-MiniLM-L6-v2", track=False)
print(metric.score(output="A cat sits.", reference="A cat sat.")[0].value)
"""


def offline_environment(folder: Path) -> dict[str, str]:
    """This test's environment with no Opik server: no URL, no key, no configuration file
    (a newcomer has none), and the package from this checkout."""
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "HF_HUB_OFFLINE": "1",
        "OPIK_CONFIG_PATH": str(folder / "none.config"),
    }
    for name in ("OPIK_URL_OVERRIDE", "OPIK_API_KEY", "OPIK_DEFAULT_FLUSH_TIMEOUT"):
        environment.pop(name, None)
    return environment


def run_timed(
    command: list[str], environment: dict[str, str], folder: Path
) -> tuple[list[str], float]:
    """Run ``command``: the lines it printed, and the seconds from its last printed line
    to the end of the process. A failed run is an ``AssertionError`` with its stderr."""
    errors = (folder / "stderr").open("w+", encoding="utf-8")
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        # Each line as soon as it is printed, as on a terminal.
        env={**environment, "PYTHONUNBUFFERED": "1"},
        cwd=folder,
    )
    lines = []
    assert process.stdout is not None
    printed = time.monotonic()
    for line in process.stdout:
        lines.append(line)
        printed = time.monotonic()
    process.wait(timeout=600)
    exited = time.monotonic()
    errors.close()
    assert process.returncode == 0, (folder / "stderr").read_text(encoding="utf-8")[-3000:]
    return lines, exited - printed


#: What :data:`RUN_AND_WATCH_OPIK` prints to stderr when the script ended Opik's client
#: without flushing before the interpreter began to exit.
ENDED_MARKER = "opik-client-ended-without-flush"

#: Runs the script ``sys.argv[1]`` (its arguments after it) as ``__main__`` and watches
#: Opik's client: when the script's code is done, and before Python runs its exit
#: handlers (where Opik would retry delivering its traces), it prints
#: :data:`ENDED_MARKER` to stderr if the script called ``Opik.end(flush=False)``. The real
#: ``end`` runs; only the call is recorded. Timing the exit alone cannot tell the ~12 s
#: of retries from a teardown slowed by a busy machine; the call can.
RUN_AND_WATCH_OPIK = f"""
import os, runpy, sys
from opik.api_objects import opik_client

calls = []
real_end = opik_client.Opik.end

def end(self, *args, **kwargs):
    calls.append(kwargs.get("flush", True))
    return real_end(self, *args, **kwargs)

opik_client.Opik.end = end
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
try:
    runpy.run_path(script, run_name="__main__")
finally:
    if False in calls:
        print({ENDED_MARKER!r}, file=sys.stderr, flush=True)
"""


def run_watching_opik(
    script: Path, arguments: list[str], environment: dict[str, str], folder: Path
) -> tuple[list[str], float, bool]:
    """:func:`run_timed` on ``script`` under :data:`RUN_AND_WATCH_OPIK`: its lines, its
    seconds from last line to exit, and whether it ended Opik's client without flushing."""
    command = [sys.executable, "-c", RUN_AND_WATCH_OPIK, str(script), *arguments]
    lines, exit_seconds = run_timed(command, environment, folder)
    ended = ENDED_MARKER in (folder / "stderr").read_text(encoding="utf-8")
    return lines, exit_seconds, ended
