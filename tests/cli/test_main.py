"""The installed command: its entry point, ``python -m``, and exit statuses."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from opik_semantic_metrics.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _module_command(*arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "opik_semantic_metrics", *arguments],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_the_console_script_points_at_main():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attribute = scripts["opik-semantic-metrics"].partition(":")
    assert getattr(import_module(module), attribute) is main


def test_the_main_module_runs_the_command_and_imports_without_running_it():
    completed = _module_command("--help")
    assert completed.returncode == 0
    assert completed.stdout.startswith("usage: opik-semantic-metrics")
    # Tools that walk the package (pydoc, Sphinx, pkgutil) import __main__ too.
    module = import_module("opik_semantic_metrics.__main__")
    assert module.main is main


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("bert-score", "comet-score", "compare-results", "heatmap"):
        assert command in out


@pytest.mark.parametrize(
    ("command", "files", "ours", "theirs"),
    [
        (
            "bert-score",
            ["-c", "c.txt", "-r", "r.txt"],
            ["-l", "3", "-b", "8", "--rescale-with-baseline", "--baseline-path", "b.csv"],
            [
                *("--num_layers", "3", "--batch_size", "8"),
                *("--rescale_with_baseline", "--baseline_path", "b.csv"),
            ],
        ),
        ("comet-score", ["-s", "s.txt", "-t", "t.txt"], ["-b", "8"], ["--batch_size", "8"]),
        (
            "heatmap",
            ["-c", "c.txt", "-r", "r.txt", "-o", "pair.png"],
            ["--num-layers", "3", "--batch-size", "8"],
            ["--num_layers", "3", "--batch_size", "8"],
        ),
    ],
)
def test_the_reference_tools_underscore_spellings_set_the_same_options(
    command, files, ours, theirs
):
    parser = build_parser()
    defaults = vars(parser.parse_args([command, *files]))
    parsed = [vars(parser.parse_args([command, *files, *options])) for options in (ours, theirs)]
    assert parsed[0] == parsed[1] != defaults
    assert parsed[1]["batch_size"] == 8


def test_usage_shows_the_hyphen_spellings(capsys):
    with pytest.raises(SystemExit):
        main(["bert-score", "--help"])
    usage = capsys.readouterr().out.split("\n\n")[0]
    assert "[--rescale-with-baseline]" in usage and "[--baseline-path BASELINE_PATH]" in usage
    assert "--rescale_with_baseline" not in usage and "--baseline_path" not in usage


@pytest.mark.slow
def test_an_error_exits_2_with_one_line_and_no_traceback(tmp_path):
    completed = _module_command("compare-results", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        f"opik-semantic-metrics: error: cannot read {tmp_path / 'a.txt'}: No such file or directory"
    ]


def test_a_hugging_face_hub_warning_is_printed_once():
    program = (
        "import logging\n"
        "from opik_semantic_metrics.cli.main import _configure_output\n"
        "_configure_output()\n"
        "logging.getLogger('huggingface_hub.file_download').warning('Retrying in 1s')\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert finished.stderr.splitlines().count("Retrying in 1s") == 1
    assert "warning: Retrying in 1s" not in finished.stderr


def test_the_bare_command_lists_every_subcommand(capsys):
    # argparse alone said only "the following arguments are required: COMMAND".
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    listed = captured.err
    assert listed.startswith("usage: opik-semantic-metrics")
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command in commands:
        assert command in listed, command


def _subcommand_parsers() -> dict:
    return build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]


def test_every_option_with_a_default_shows_it_in_its_help():
    for name, parser in _subcommand_parsers().items():
        for action in parser._actions:
            if not action.option_strings or action.default in (None, False, "==SUPPRESS=="):
                continue
            # The option's block of the printed help, as argparse formats it.
            shown = " ".join(parser._get_formatter()._format_action(action).split())
            assert "default" in shown, (name, shown)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("score-dataset", "the metric (default: bertscore)"),
        ("score-dataset", "(default: all-MiniLM-L6-v2, the packaged offline model"),
        ("heatmap", "line of the files to draw, counted from 1 (default: 1)"),
        ("heatmap", "resolution of the PNG (default: 100)"),
        ("compare-results", "significance level (default: 0.05)"),
    ],
)
def test_the_defaults_the_issue_named_are_in_the_help(command, shown):
    text = " ".join(_subcommand_parsers()[command].format_help().split())
    assert shown in text
