"""Files written whole or not at all: a write that fails keeps the old file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from opik_semantic_metrics.output_files import replace_file


def test_replace_file_writes_and_replaces_the_file(tmp_path):
    target = tmp_path / "report.html"
    assert replace_file(target, b"first") == target
    replace_file(target, b"second")
    assert target.read_bytes() == b"second"
    assert [path.name for path in tmp_path.iterdir()] == ["report.html"]


def test_a_write_cut_short_leaves_the_old_file_whole_and_nothing_beside_it(tmp_path):
    # A file size limit stands in for a full disk: the write fails partway. Writing in
    # place had left the first 50 KiB of the new report where the old one was.
    target = tmp_path / "report.html"
    target.write_bytes(b"old report")
    script = textwrap.dedent(
        f"""
        import resource
        from opik_semantic_metrics.output_files import replace_file

        resource.setrlimit(resource.RLIMIT_FSIZE, (50 * 1024, 50 * 1024))
        try:
            replace_file({str(target)!r}, b"x" * 200_000)
        except OSError as error:
            print("OSError", error.errno)
        """
    )
    # Python ignores SIGXFSZ, so the oversized write is an OSError (EFBIG), not a kill.
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.stdout.strip() == "OSError 27", run.stderr
    assert target.read_bytes() == b"old report"
    assert [path.name for path in tmp_path.iterdir()] == ["report.html"]
