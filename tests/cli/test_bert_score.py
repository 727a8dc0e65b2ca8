"""``opik-semantic-metrics bert-score``: bert_score's own scores, tables, JSON and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from bert_score.utils import get_hash

from opik_semantic_metrics.cli.common import read_lines
from opik_semantic_metrics.cli.main import main
from tests.bert_score_oracle import minilm_prf
from tests.cli.cli_files import write_text_files

MINILM = ["-m", "all-MiniLM-L6-v2", "--device", "cpu"]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory, stsb_pairs) -> dict[str, Path]:
    return write_text_files(tmp_path_factory.mktemp("cli"), stsb_pairs)


def _json_run(capsys, *arguments: str) -> dict:
    assert main(["bert-score", *arguments, "--json", *MINILM]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("idf", [False, True], ids=["no-idf", "idf"])
def test_scores_equal_bert_score_with_two_reference_files(capsys, text_files, minilm_path, idf):
    files = [str(text_files[name]) for name in ("candidates", "references_1", "references_2")]
    result = _json_run(capsys, "-c", files[0], "-r", *files[1:], *(["--idf"] if idf else []))
    candidates = text_files["candidates"].read_text().splitlines()
    references = list(
        zip(
            text_files["references_1"].read_text().splitlines(),
            text_files["references_2"].read_text().splitlines(),
            strict=True,
        )
    )
    # bert_score's command loads the fast tokenizer by default, and so does ours.
    oracle = minilm_prf(
        minilm_path,
        candidates,
        [list(group) for group in references],
        idf=idf,
        use_fast_tokenizer=True,
    )
    ours = torch.tensor([[s["precision"], s["recall"], s["f1"]] for s in result["scores"]])
    assert ours.shape == (12, 3)
    assert (ours - oracle).abs().max().item() <= 1e-5
    assert result["mean"]["f1"] == pytest.approx(oracle[:, 2].mean().item(), abs=1e-5)
    assert [s["line"] for s in result["scores"]] == list(range(1, 13))
    assert result["hash"] == get_hash(
        "sentence-transformers/all-MiniLM-L6-v2", 6, idf, False, False, use_fast_tokenizer=True
    )


@pytest.mark.parametrize("flag", ["--slow-tokenizer", "--use_fast_tokenizer"])
def test_the_slow_tokenizer_flag_gives_bert_scores_hash_for_it(capsys, text_files, flag):
    # bert_score's --use_fast_tokenizer is an argparse store_false: it selects the slow one.
    files = ("-c", str(text_files["candidates"]), "-r", str(text_files["references_1"]))
    fast = _json_run(capsys, *files)
    slow = _json_run(capsys, *files, flag)
    assert slow["hash"] == get_hash(
        "sentence-transformers/all-MiniLM-L6-v2", 6, False, False, False, use_fast_tokenizer=False
    )
    assert slow["hash"] + "_fast-tokenizer" == fast["hash"]
    # The same tokens here; the two runs batch differently (one finds cached embeddings).
    for slow_line, fast_line in zip(slow["scores"], fast["scores"], strict=True):
        assert slow_line == pytest.approx(fast_line, abs=1e-6)


def test_text_output_lists_every_line_then_the_means(capsys, text_files):
    files = (str(text_files["candidates"]), str(text_files["references_1"]))
    result = _json_run(capsys, "-c", files[0], "-r", files[1])
    assert main(["bert-score", "-c", files[0], "-r", files[1], *MINILM]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["line", "P", "R", "F1"]
    first = result["scores"][0]
    assert lines[2].split() == ["1", *(f"{first[k]:.6f}" for k in ("precision", "recall", "f1"))]
    assert len(lines) == 2 + 12 + 1
    assert lines[-1] == (
        f"{result['hash']} P: {result['mean']['precision']:.6f} "
        f"R: {result['mean']['recall']:.6f} F1: {result['mean']['f1']:.6f}"
    )


def test_progress_bar_goes_to_stderr_only_when_asked(capsys, text_files):
    files = ("-c", str(text_files["candidates"]), "-r", str(text_files["references_1"]))
    assert main(["bert-score", *files, *MINILM, "--json", "--progress", "-b", "2"]) == 0
    captured = capsys.readouterr()
    assert "12/12" in captured.err and "line" in captured.err
    json.loads(captured.out)  # the bar never mixes into the results
    assert main(["bert-score", *files, *MINILM, "--json", "--no-progress"]) == 0
    assert "12/12" not in capsys.readouterr().err


def test_line_endings_bom_and_unicode_separators(capsys, tmp_path, minilm_path):
    candidates = tmp_path / "c.txt"
    candidates.write_bytes("\ufeffA cat sits.\r\nA dog\u2028runs.\rBirds fly.".encode())
    references = tmp_path / "r.txt"
    references.write_text("A cat sat.\nA dog is running.\nBirds are flying.\n", encoding="utf-8")
    result = _json_run(capsys, "-c", str(candidates), "-r", str(references))
    # The texts the file means: no BOM, lines cut at \r\n and \r only, and the line
    # separator U+2028 kept inside its line. The scores show the line cutting, but not
    # those two characters (MiniLM's tokenizer drops U+FEFF and reads U+2028 as a
    # space), so the lines read are checked too.
    texts = ["A cat sits.", "A dog\u2028runs.", "Birds fly."]
    assert read_lines(candidates) == texts
    oracle = minilm_prf(
        minilm_path, texts, ["A cat sat.", "A dog is running.", "Birds are flying."]
    )
    ours = torch.tensor([[s["precision"], s["recall"], s["f1"]] for s in result["scores"]])
    assert ours.shape == (3, 3)
    assert (ours - oracle).abs().max().item() <= 1e-5


def _error_run(capsys, arguments: list[str]) -> str:
    assert main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("opik-semantic-metrics: error: ")
    return lines[0]


def test_unequal_line_counts_are_a_clear_error(capsys, text_files):
    message = _error_run(
        capsys,
        ["bert-score", "-c", str(text_files["candidates"]), "-r", str(text_files["short"])],
    )
    assert f"{text_files['short']} has 5 lines but {text_files['candidates']} has 12" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read {path}: No such file or directory"),
        (b"fine\n\xe9t\xe9\n", "{path} is not a UTF-8 text file: byte 0xe9 at line 2"),
        (b"", "{path} is empty"),
        ("directory", "cannot read {path}: Is a directory"),
    ],
    ids=["missing", "latin-1", "empty", "directory"],
)
def test_unreadable_files_are_a_clear_error(capsys, tmp_path, text_files, content, expected):
    path = tmp_path / "candidates.txt"
    if content == "directory":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    message = _error_run(
        capsys, ["bert-score", "-c", str(path), "-r", str(text_files["references_1"])]
    )
    assert expected.format(path=path) in message


def test_settings_the_engine_rejects_are_a_clear_error(capsys, text_files):
    files = ["-c", str(text_files["candidates"]), "-r", str(text_files["references_1"])]
    message = _error_run(capsys, ["bert-score", *files, *MINILM, "--rescale-with-baseline"])
    # Refused before the model loads, naming the options (tests/cli/test_early_refusals.py).
    assert "--rescale-with-baseline needs --lang" in message
    message = _error_run(capsys, ["bert-score", *files, *MINILM, "-l", "9"])
    assert "layer" in message.lower()
    # The engine's messages name the command's options, not its Python arguments.
    message = _error_run(capsys, ["bert-score", *files, *MINILM, "--device", "gpu"])
    assert "--device" in message and "`device`" not in message
    message = _error_run(capsys, ["bert-score", *files, *MINILM, "--dtype", "int8"])
    assert "--dtype" in message and "`dtype`" not in message


def test_a_model_that_cannot_be_had_offline_is_a_clear_error(capsys, text_files):
    files = ["-c", str(text_files["candidates"]), "-r", str(text_files["references_1"])]
    message = _error_run(capsys, ["bert-score", *files, "--lang", "en", "--device", "cpu"])
    assert "Model 'roberta-large' could not be loaded" in message


def test_missing_required_arguments_exit_2_through_argparse(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bert-score", "-c", "only-candidates.txt"])
    assert exit_info.value.code == 2
    assert "the following arguments are required: -r/--references" in capsys.readouterr().err


def test_bert_scores_own_option_spellings_give_the_same_output(capsys, text_files, tmp_path):
    # A baseline of our own for MiniLM's layers 0-6 (row 5 is read): rescaling is then
    # visible in the scores, so the spellings are shown to reach the engine.
    baseline = tmp_path / "minilm.csv"
    rows = "".join(f"{layer},0.2,0.3,0.25\n" for layer in range(7))
    baseline.write_text("LAYER,P,R,F\n" + rows, encoding="utf-8")
    files = (str(text_files["candidates"]), str(text_files["references_1"]))
    ours = ["-c", files[0], "-r", files[1], "-l", "5", "-b", "4"]
    ours += ["--rescale-with-baseline", "--baseline-path", str(baseline)]
    # bert_score's spellings: --cand/--ref work as abbreviations of our long options.
    theirs = ["--cand", files[0], "--ref", files[1], "--num_layers", "5", "--batch_size", "4"]
    theirs += ["--rescale_with_baseline", "--baseline_path", str(baseline)]
    outputs = []
    for arguments in (ours, theirs):
        assert main(["bert-score", *arguments, *MINILM]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert outputs[0].splitlines()[-1].startswith("sentence-transformers/all-MiniLM-L6-v2_L5_")
    assert "-rescaled" in outputs[0].splitlines()[-1]
    raw = _json_run(capsys, "-c", files[0], "-r", files[1], "-l", "5")
    first_row = outputs[0].splitlines()[2].split()
    rescaled_f1 = (raw["scores"][0]["f1"] - 0.25) / (1 - 0.25)
    assert first_row[0] == "1" and float(first_row[3]) == pytest.approx(rescaled_f1, abs=2e-6)


def test_dtype_runs_the_encoder_in_that_type_and_the_json_says_which(capsys, text_files):
    files = ["-c", str(text_files["candidates"]), "-r", str(text_files["references_1"])]
    exact = _json_run(capsys, *files)
    half = _json_run(capsys, *files, "--dtype", "bf16")
    assert (exact["dtype"], half["dtype"]) == ("float32", "bfloat16")
    moved = [abs(a["f1"] - b["f1"]) for a, b in zip(exact["scores"], half["scores"], strict=True)]
    # bfloat16 keeps 8 bits of mantissa: scores move, by far less than they differ.
    assert 0 < max(moved) < 1e-2
