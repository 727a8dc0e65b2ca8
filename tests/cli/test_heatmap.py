"""``opik-semantic-metrics heatmap``: one pair's token similarities as a PNG."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.cli.main import main
from tests.cli.cli_files import write_text_files

MINILM = ["-m", "all-MiniLM-L6-v2", "--device", "cpu"]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory, stsb_pairs) -> dict[str, Path]:
    return write_text_files(tmp_path_factory.mktemp("cli"), stsb_pairs)


@pytest.fixture(scope="module")
def engine() -> BERTScoreEngine:
    return BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")


def test_heatmap_of_a_line_of_two_files(capsys, tmp_path, text_files, engine):
    output = tmp_path / "pair.png"
    arguments = ["heatmap", "-c", str(text_files["candidates"]), "-r"]
    arguments += [str(text_files["references_1"]), "--line", "3", "-o", str(output), *MINILM]
    assert main(arguments) == 0
    candidate = text_files["candidates"].read_text().splitlines()[2]
    reference = text_files["references_1"].read_text().splitlines()[2]
    cand_tokens, ref_tokens, _ = engine.token_similarity(candidate, reference)
    [result] = engine.score([candidate], [reference])
    printed = capsys.readouterr().out.strip()
    assert printed.startswith(f"{output}: {len(cand_tokens)} x {len(ref_tokens)} tokens, ")
    assert f"BERTScore F1 {result.f1:.3f}" in printed
    image = Image.open(io.BytesIO(output.read_bytes()))
    assert image.format == "PNG" and image.size[0] >= 500 and image.size[1] >= 400


def test_heatmap_of_texts_given_on_the_command_line(capsys, tmp_path):
    output = tmp_path / "texts.PNG"
    arguments = ["heatmap", "--candidate", "A cat sits.", "--reference", "A cat sat."]
    assert main([*arguments, "-o", str(output), "--dpi", "50", *MINILM]) == 0
    assert ": 6 x 6 tokens, BERTScore F1 " in capsys.readouterr().out
    assert Image.open(output).size == (250, 200)  # the 5 x 4 inch minimum at 50 dpi


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--line", "13"], "--line 13 is outside {candidates}, which has 12 lines"),
        (["--line", "0"], "--line 0 is outside"),
        (["-o", "pair.jpg"], "--output must name a .png file, got pair.jpg"),
        # Refused before the model loads now (tests/cli/test_early_refusals.py).
        (["-o", "/nonexistent-dir/pair.png"], "the folder /nonexistent-dir does not exist"),
        (["--dpi", "0"], "--dpi must be between 1 and 2400, got 0"),
        (["--dpi", "100000"], "--dpi must be between 1 and 2400, got 100000"),
    ],
)
def test_bad_arguments_are_a_clear_error(capsys, text_files, extra, expected):
    arguments = ["heatmap", "-c", str(text_files["candidates"])]
    arguments += ["-r", str(text_files["references_1"]), "-o", "unused.png", *MINILM, *extra]
    assert main(arguments) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert expected.format(candidates=text_files["candidates"]) in line


def test_files_of_different_lengths_are_refused_as_in_every_command(capsys, tmp_path):
    # Line 2 of files that are not aligned was drawn as if it were a pair.
    candidates, references = tmp_path / "c.txt", tmp_path / "r.txt"
    candidates.write_text("A cat.\nA dog.\n")
    references.write_text("One.\nTwo.\nThree.\nFour.\n")
    arguments = ["heatmap", "-c", str(candidates), "-r", str(references), "--line", "2"]
    assert main([*arguments, "-o", str(tmp_path / "pair.png"), *MINILM]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"{references} has 4 lines but {candidates} has 2" in line
    assert not (tmp_path / "pair.png").exists()


def test_a_file_of_one_line_is_counted_in_the_singular(capsys, tmp_path):
    # "which has 1 lines" before.
    one = tmp_path / "one.txt"
    one.write_text("A cat.\n")
    arguments = ["heatmap", "-c", str(one), "-r", str(one), "--line", "2"]
    assert main([*arguments, "-o", str(tmp_path / "pair.png"), *MINILM]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(f"--line 2 is outside {one}, which has 1 line")
    two = tmp_path / "two.txt"
    two.write_text("A cat.\nA dog.\n")
    assert main(["heatmap", "-c", str(two), "-r", str(one), "-o", "p.png", *MINILM]) == 2
    assert f"{one} has 1 line but {two} has 2" in capsys.readouterr().err


@pytest.mark.slow
def test_a_text_cut_at_the_token_limit_is_said(capsys, tmp_path):
    output = tmp_path / "long.png"
    long_text = "word " * 600  # over MiniLM's 512 tokens
    arguments = ["heatmap", "--candidate", long_text, "--reference", "A cat sat."]
    assert main([*arguments, "-o", str(output), "--dpi", "10", *MINILM]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed.endswith("(candidate cut at the model's 512 tokens)")


@pytest.mark.slow
def test_a_png_too_large_to_draw_is_refused_before_drawing(capsys, tmp_path):
    # 512 x 512 tokens at 300 dpi: a 31,000-pixel square, tens of gigabytes to draw.
    output = tmp_path / "huge.png"
    long_text = "word " * 600
    arguments = ["heatmap", "--candidate", long_text, "--reference", long_text, "--dpi", "300"]
    assert main([*arguments, "-o", str(output), *MINILM]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "512 x 512 tokens at --dpi 300 would be a 31470 x 31320 pixel PNG" in line
    assert line.endswith("pixels this command draws; use --dpi 104 or less")
    assert not output.exists()


def test_text_and_file_for_one_side_are_refused_by_argparse(capsys, text_files):
    with pytest.raises(SystemExit) as exit_info:
        main(["heatmap", "--candidate", "x", "-c", str(text_files["candidates"]), "-o", "a.png"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
