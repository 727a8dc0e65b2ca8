"""The BLIP captioning example's real pipeline, on a tiny random BLIP (no download).

The model is the example's own ``--offline-tiny`` BLIP (``build_tiny_blip``), built from a
config with a word-level vocabulary, so its captions are random words: the tests check
the wiring (images in, tracked task, Opik experiments, metric results per item, the
report), not the captions' quality.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import opik
import pytest
import requests
import torch
from opik.exceptions import MetricComputationError
from PIL import Image, ImageDraw

from tests.examples.example_modules import load_example
from tests.examples.exit_timing import run_watching_opik
from tests.test_repository_url import REPOSITORY_URL, colab_link

captioning = load_example("captioning/captioning.py", "captioning_example")

CAPTIONS = (
    "A red square on a white background.",
    "A blue circle in the middle of the picture.",
    "Green and yellow stripes.",
    "A cat sits on the mat.",
    "A dog runs in the park.",
)


@pytest.fixture(scope="module")
def captioner(tmp_path_factory) -> object:
    return captioning.Captioner(
        str(captioning.build_tiny_blip(tmp_path_factory.mktemp("blip"))), "cpu"
    )


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory) -> Path:
    """Three small pictures drawn with pillow."""
    folder = tmp_path_factory.mktemp("images")
    shapes = (("red", "rectangle"), ("blue", "ellipse"), ("green", "rectangle"))
    for index, (color, shape) in enumerate(shapes):
        image = Image.new("RGB", (64 + 16 * index, 48), "white")
        getattr(ImageDraw.Draw(image), shape)((8, 8, 40, 40), fill=color)
        image.save(folder / f"{color}.png")
    return folder


@pytest.fixture(scope="module")
def image_server(image_folder) -> Iterator[str]:
    """The picture folder served over HTTP on localhost."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(image_folder), **kwargs)

        def log_message(self, *args):  # keep the test output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def items(image_folder, image_server) -> list[dict]:
    """Two local images and one served by URL, with reference captions."""
    return [
        {"image": str(image_folder / "red.png"), "reference": [CAPTIONS[0], "A red box."]},
        {"image": str(image_folder / "blue.png"), "reference": [CAPTIONS[1]]},
        {"image": f"{image_server}/green.png", "reference": [CAPTIONS[2], "Stripes."]},
    ]


@pytest.fixture(scope="module")
def metrics(items) -> list:
    return captioning.caption_metrics(items, track=False, device="cpu")


def test_images_load_from_paths_and_urls(image_folder, image_server):
    local = captioning.load_image(str(image_folder / "blue.png"))
    remote = captioning.load_image(f"{image_server}/green.png")
    assert (local.mode, local.size) == ("RGB", (80, 48))
    assert (remote.mode, remote.size) == ("RGB", (96, 48))
    assert remote.getpixel((20, 20)) == (0, 128, 0)  # pillow's "green"
    with pytest.raises(captioning.ImageUnavailableError, match=r"missing\.png: 404") as error:
        captioning.load_image(f"{image_server}/missing.png")
    assert isinstance(error.value.__cause__, requests.HTTPError)
    with pytest.raises(captioning.ImageUnavailableError, match=r"cannot read the image .*missing"):
        captioning.load_image(str(image_folder / "missing.png"))


def _generated(captioner, image, **settings) -> tuple[torch.Tensor, str]:
    inputs = captioner.processor(images=image, return_tensors="pt")
    ids = captioner.model.generate(**inputs, **settings)
    return ids[0], captioner.processor.decode(ids[0], skip_special_tokens=True).strip()


@pytest.mark.parametrize(
    "config",
    [
        captioning.CaptionConfig("short", max_length=6, min_length=3),
        captioning.CaptionConfig("beams", num_beams=3, max_length=9, min_length=7),
        captioning.CaptionConfig("penalised", max_length=8, repetition_penalty=1.5),
    ],
    ids=lambda config: config.name,
)
def test_captions_are_generated_with_the_configurations_settings(captioner, image_folder, config):
    image = captioning.load_image(str(image_folder / "red.png"))
    caption = captioner.caption(image, config)
    settings = {
        "num_beams": config.num_beams,
        "max_length": config.max_length,
        "min_length": config.min_length,
        "repetition_penalty": config.repetition_penalty,
        "length_penalty": config.length_penalty,
    }
    ids, expected = _generated(captioner, image, **settings)
    assert caption == expected and caption
    assert config.min_length <= len(ids) <= config.max_length
    assert config.generate_kwargs() == settings


@pytest.mark.slow
def test_two_configurations_are_two_experiments_with_scores_per_image(captioner, items, metrics):
    experiments = captioning.run_experiments(items, captioner, metrics, online=False)
    assert [e.name for e in experiments] == ["blip-greedy-short", "blip-beam5-long"]
    keys = tuple(sorted(item["image"] for item in items))
    for experiment in experiments:
        assert experiment.items == keys
        assert experiment.failed == {}
        for metric in captioning.METRICS:
            assert tuple(experiment.scores[metric]) == keys
    # Each score is the metric's score of that configuration's caption.
    bertscore, semantic_match = metrics
    task = captioning.make_task(captioner, captioning.CONFIGS[0])
    caption = task(items[0])["output"]
    [expected] = bertscore.engine.score([caption], [items[0]["reference"]])
    scores = experiments[0].scores
    assert scores["bertscore_f1"][items[0]["image"]] == pytest.approx(expected.f1, abs=1e-6)
    expected_match = semantic_match.score(output=caption, reference=items[0]["reference"])
    assert scores["semantic_match"][items[0]["image"]] == pytest.approx(expected_match.value)


def test_semantic_match_takes_the_best_alternative_reference(metrics):
    _, semantic_match = metrics
    assert isinstance(semantic_match, captioning.BestReferenceSemanticMatch)
    references = ["Stocks fell sharply on Monday.", CAPTIONS[3]]
    best = semantic_match.score(output=CAPTIONS[3], reference=references)
    singles = [semantic_match.score(output=CAPTIONS[3], reference=r).value for r in references]
    assert best.value == max(singles) == 1.0
    assert best.metadata["best_reference"] == 1
    one = semantic_match.score(output="A dog runs.", reference=CAPTIONS[4])
    assert "best_reference" not in one.metadata
    for bad in ([], [CAPTIONS[0], None], None):
        with pytest.raises(MetricComputationError):
            semantic_match.score(output="A dog runs.", reference=bad)


def test_a_reference_given_as_one_string_is_one_caption(items, metrics):
    as_strings = [{**item, "reference": item["reference"][0]} for item in items]
    as_lists = [{**item, "reference": [item["reference"][0]]} for item in items]
    _, from_strings = captioning.caption_metrics(as_strings, track=False, device="cpu")
    _, from_lists = captioning.caption_metrics(as_lists, track=False, device="cpu")
    pair = {"output": "A red box on white.", "reference": CAPTIONS[0]}
    assert from_strings.score(**pair).value == from_lists.score(**pair).value
    assert from_strings.score(**pair).value != metrics[1].score(**pair).value


def test_experiment_config_names_model_beams_and_lengths(captioner):
    config = captioning.experiment_config(captioner, captioning.CONFIGS[1])
    assert config["model"] == captioner.model_name
    assert (config["num_beams"], config["max_length"], config["min_length"]) == (5, 50, 10)


@pytest.fixture
def tracing() -> Iterator[None]:
    """Opik tracing on for one test (the suite runs with it off)."""
    opik.set_tracing_active(True)
    yield
    opik.reset_tracing_to_config_default()


def test_the_task_is_tracked_with_the_captioning_call_inside(captioner, items, tracing):
    task = captioning.make_task(captioner, captioning.CONFIGS[0])
    with opik.record_traces_locally() as recorded:
        output = task(items[1])
        # The recorder is per connection: late traces of earlier runs may arrive too.
        [trace] = [t for t in recorded.trace_trees if t.name == "caption_task"]
    assert trace.input == {"item": items[1]} and trace.output == output
    [task_span] = trace.spans
    assert task_span.name == "caption_task"
    [span] = task_span.spans
    assert span.name == "generate_caption"
    assert span.input == {"image_source": items[1]["image"]}
    assert span.output == {"output": output["output"]}


@pytest.mark.slow
def test_the_report_compares_the_experiments(captioner, items, metrics, tmp_path):
    experiments = captioning.run_experiments(items, captioner, metrics, online=False)
    summaries = captioning.summarize(experiments, captioning.METRICS)
    path = captioning.write_report(tmp_path / "r.html", experiments, summaries, "tiny")
    page = path.read_text(encoding="utf-8")
    assert "blip-greedy-short" in page and "blip-beam5-long" in page
    assert "semantic_match" in page
    assert page.count('src="data:image/png;base64,') == 1


NOTEBOOK = captioning.Path(captioning.__file__).with_name("colab.ipynb")


def _settings(notebook: dict) -> dict:
    [cell] = [cell for cell in notebook["cells"] if cell["id"] == "settings"]
    return cell


def test_the_colab_notebook_is_valid_python_with_its_settings_in_one_cell():
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert (notebook["nbformat"], notebook["nbformat_minor"]) == (4, 5)
    code = []
    for cell in notebook["cells"]:
        assert cell["cell_type"] in ("markdown", "code") and isinstance(cell["id"], str)
        assert isinstance(cell["source"], list) and isinstance(cell["metadata"], dict)
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            code.append("".join(cell["source"]))
    source = "\n".join(code)
    compile(source, str(NOTEBOOK), "exec")  # plain Python: no shell lines to skip
    # The settings the offline run below replaces are all in the first code cell.
    settings = "".join(_settings(notebook)["source"])
    names = re.findall(r"^([A-Z_]+) = ", settings, flags=re.MULTILINE)
    assert names == [
        "INSTALL", "SOURCE", "REPOSITORY", "PROJECT_DIR", "USE_OPIK", "OFFLINE_TINY",
        "BLIP_MODEL", "METRICS_MODEL", "ITEMS_FILE",
    ]  # fmt: skip
    # Installed into site-packages, not editable: an editable install's import hook is
    # read at start-up, so the running kernel could not import the package.
    assert '"install", "-q", f"{project}[offline,captioning,report]"' in source
    used = set(re.findall(r"captioning\.([A-Za-z_]+)", source))
    assert used >= {"Captioner", "caption_metrics", "run_experiments", "caption_table"}
    assert all(hasattr(captioning, name) for name in used)


def test_both_colab_badges_open_this_notebook():
    root = Path(__file__).resolve().parents[2]
    link = colab_link(REPOSITORY_URL)
    for page in ("README.md", "docs/guides/examples.md"):
        badges = re.findall(
            r"\[!\[Open in Colab\]\([^)]+\)\]\(([^)]+)\)", (root / page).read_text("utf-8")
        )
        assert badges == [link], page
    assert NOTEBOOK.relative_to(root).as_posix() == "examples/captioning/colab.ipynb"


@pytest.mark.slow
def test_the_colab_notebook_installs_from_git_and_runs_top_to_bottom_offline(tmp_path):
    """The notebook as a user runs it, with its offline settings: the install cell clones
    the repository and pip-installs the clone (into a folder of its own here, dependencies
    left out, so that the test's environment stays as it is), then every cell runs."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    root = Path(__file__).resolve().parents[2]
    if (
        shutil.which("git") is None
        or subprocess.run(
            ["git", "-C", str(root), "rev-parse"], capture_output=True, check=False
        ).returncode
    ):
        pytest.skip("no git, or not a git checkout: nothing for the install cell to clone")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    settings = "".join(_settings(notebook)["source"])
    shown = ('SOURCE = "git"', "OFFLINE_TINY = False", "INSTALL = True", "ITEMS_FILE = None")
    assert all(line in settings.splitlines() for line in shown)
    # The repository as it is committed here stands in for its URL.
    repository = re.search(r'^REPOSITORY = "(.+)"$', settings, flags=re.MULTILINE)
    assert repository is not None and repository.group(1) == REPOSITORY_URL
    settings = settings.replace(repository.group(1), (root / ".git").parent.as_uri())
    settings = settings.replace("OFFLINE_TINY = False", "OFFLINE_TINY = True")
    project = tmp_path / "project"
    settings = settings.replace(
        'PROJECT_DIR = "opik-semantic-metrics"', f"PROJECT_DIR = {str(project)!r}"
    )
    _settings(notebook)["source"] = settings
    installed = tmp_path / "installed"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "src"), *sys.path]),
        "PIP_TARGET": str(installed),
        "PIP_NO_DEPS": "1",
        # The environment's setuptools builds it: no index needed.
        "PIP_NO_BUILD_ISOLATION": "0",
    }
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute(env=environment)
    assert (project / "examples" / "captioning" / "captioning.py").is_file()
    assert (installed / "opik_semantic_metrics" / "__init__.py").is_file()
    [run] = [cell for cell in notebook.cells if cell.id == "run"]
    printed = "".join(output.get("text", "") for output in run.outputs)
    # The captions table, then the summary: each drawn picture under each configuration.
    for color, _, captions in captioning.TINY_PICTURES:
        rows = [line for line in printed.splitlines() if line.startswith(f"{color}.png")]
        assert len(rows) == 2 and all(captions[0] in row for row in rows)
    assert "blip-greedy-short" in printed and "blip-beam5-long" in printed
    assert "bertscore_f1" in printed and "failed" not in printed


@pytest.mark.parametrize("name", ["no-such-dir", "models/blip/no-such-dir"])
def test_a_model_that_cannot_be_loaded_is_a_message_not_a_traceback(
    monkeypatch, tmp_path, capsys, name
):
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")  # main sets it; restored after the test
    monkeypatch.chdir(tmp_path)
    assert captioning.main(["--model", name, "--output", str(tmp_path / "report")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"Cannot load {name!r}: ")
    assert "Pass --model with a downloaded BLIP directory" in error


@pytest.fixture(scope="module")
def blip_directory(tmp_path_factory) -> Path:
    return captioning.build_tiny_blip(tmp_path_factory.mktemp("blip-main"))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (None, "cannot read the items file"),
        (["not json"], "line 1: not JSON"),
        (['{"reference": "A cat."}'], 'line 1: expected an object with an "image" string'),
        (['{"image": "IMAGE"}'], 'line 1: expected a "reference" caption or list of captions'),
        (['{"image": "IMAGE", "reference": "A cat."}', '{"image": "no.png", "reference": "x"}'],
         "line 2: there is no image file no.png"),
        ([""], "holds no items"),
        (['{"image": "IMAGE", "reference": "A cat."}', '{"image": "IMAGE", "reference": "A dog."}'],
         "line 2: the image "),
        # Each passed, then stopped the run with a traceback once the models had loaded.
        (['{"image": "IMAGE", "reference": "A cat.", "id": 7}'], 'line 1: a field named "id"'),
        (['{"image": "ITEMS", "reference": "A cat."}'], "items.jsonl is no image"),
    ],
)  # fmt: skip
def test_a_bad_items_file_is_a_message_before_any_model_loads(
    monkeypatch, tmp_path, capsys, image_folder, lines, message
):
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")  # main sets it; restored after the test
    path = tmp_path / "items.jsonl"
    if lines is not None:
        image = str(image_folder / "red.png").replace("\\", "/")
        items_path = str(path).replace("\\", "/")
        text = "\n".join(line.replace("IMAGE", image) for line in lines)
        path.write_text(text.replace("ITEMS", items_path), "utf-8")
    arguments = ["--model", "no-such-model", "--items", str(path), "--output", str(tmp_path)]
    assert captioning.main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("Cannot use --items: ") and message in error


def _one_item_file(folder: Path, image: str) -> Path:
    """An items file of one image with one reference caption."""
    path = folder / "items.jsonl"
    path.write_text(json.dumps({"image": image, "reference": "A red square."}) + "\n", "utf-8")
    return path


@pytest.mark.slow
def test_a_bad_device_or_metrics_model_is_a_message_not_a_traceback(
    monkeypatch, tmp_path, capsys, image_folder, blip_directory
):
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")
    path = _one_item_file(tmp_path, str(image_folder / "red.png"))
    arguments = ["--model", str(blip_directory), "--items", str(path), "--output", str(tmp_path)]
    if not torch.cuda.is_available():  # PyTorch's AssertionError before
        assert captioning.main([*arguments, "--device", "cuda"]) == 2
        assert capsys.readouterr().err.startswith("Cannot use --device: ")
    # A ModelUnavailableError traceback before, where an unloadable --model was one line.
    assert captioning.main([*arguments, "--device", "cpu", "--metrics-model", "no-such"]) == 2
    assert capsys.readouterr().err.startswith("Cannot use --metrics-model 'no-such': ")


@pytest.mark.slow
def test_an_image_that_cannot_be_read_stops_the_run_with_one_line(
    monkeypatch, tmp_path, capsys, image_server, blip_directory
):
    # A URL is read when its item is captioned (no network: the built-in items offline).
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")
    path = _one_item_file(tmp_path, f"{image_server}/missing.png")
    arguments = ["--model", str(blip_directory), "--items", str(path), "--device", "cpu"]
    assert captioning.main([*arguments, "--output", str(tmp_path / "report")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"Stopped: cannot read the image {image_server}/missing.png: 404")
    assert "Traceback" not in error


def test_an_image_on_two_lines_names_both(tmp_path, image_folder):
    path = tmp_path / "items.jsonl"
    item = {"image": str(image_folder / "red.png"), "reference": "A red square."}
    path.write_text("\n".join([json.dumps(item)] * 2), "utf-8")
    with pytest.raises(ValueError, match=r"line 2: the image .*red\.png is also on line 1"):
        captioning.read_items(path)


def test_a_line_separator_inside_a_json_string_is_text_not_a_line_break(tmp_path, image_folder):
    path = tmp_path / "items.jsonl"
    item = {"image": str(image_folder / "red.png"), "reference": "A red\u2028square."}
    path.write_text(json.dumps(item, ensure_ascii=False) + "\r\n", "utf-8")
    [read] = captioning.read_items(path)
    assert read["reference"] == "A red\u2028square."


@pytest.mark.slow
def test_a_single_image_with_one_caption_runs(
    monkeypatch, tmp_path, capsys, image_folder, blip_directory
):
    """One caption cannot fit SemanticMatch's paragraph baseline: the run goes on unfitted."""
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")
    path = _one_item_file(tmp_path, str(image_folder / "red.png"))
    arguments = ["--model", str(blip_directory), "--items", str(path), "--device", "cpu"]
    assert captioning.main([*arguments, "--output", str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "report" / "report.html").is_file()
    assert re.search(r"semantic_match\s+blip-\S+\s+1\s+0\s", out)


@pytest.mark.slow
def test_the_run_prints_and_reports_each_generated_caption_with_its_scores(
    monkeypatch, tmp_path, capsys, image_folder, blip_directory, captioner, items, metrics
):
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")
    path = _one_item_file(tmp_path, str(image_folder / "red.png"))
    arguments = ["--model", str(blip_directory), "--items", str(path), "--device", "cpu"]
    assert captioning.main([*arguments, "--output", str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    # The captions table comes first: one row per configuration, with the caption each
    # configuration's task generates for the image (the model is deterministic).
    tiny = captioning.Captioner(str(blip_directory), "cpu")
    image = captioning.load_image(str(image_folder / "red.png"))
    for config in captioning.CONFIGS:
        caption = tiny.caption(image, config)
        [row] = [line for line in out.splitlines() if f"blip-{config.name}  " in line][:1]
        assert row.startswith("red.png") and "A red square." in row and caption in row
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "The generated captions and their scores" in page

    # The table's scores are the experiments' own.
    captions: dict[str, dict[str, str]] = {}
    experiments = captioning.run_experiments(
        items, captioner, metrics, online=False, captions=captions
    )
    table = captioning.caption_table(items, experiments, captions)
    assert table.headers == (
        "image", "reference", "experiment", "caption", "bertscore_f1", "semantic_match"
    )  # fmt: skip
    assert len(table.rows) == 2 * len(items)
    for row, (item, experiment) in zip(
        table.rows, [(i, e) for i in items for e in experiments], strict=True
    ):
        assert row[2] == experiment.name
        assert row[3] == captions[experiment.name][item["image"]]
        assert row[4] == f"{experiment.scores['bertscore_f1'][item['image']]:.3f}"


@pytest.mark.slow
def test_offline_tiny_runs_the_whole_flow_with_nothing_downloaded(monkeypatch, tmp_path, capsys):
    # As a user runs it: a script in a fresh interpreter, no network, no Opik server.
    output = tmp_path / "out"
    root = Path(__file__).resolve().parents[2]
    environment = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "HF_HUB_OFFLINE": "1",
        "OPIK_CONFIG_PATH": str(tmp_path / "none.config"),  # no server configured
    }
    for name in ("OPIK_TRACK_DISABLE", "OPIK_URL_OVERRIDE", "OPIK_API_KEY"):
        environment.pop(name, None)  # the example decides, as for a newcomer
    lines, exit_seconds, ended = run_watching_opik(
        root / "examples" / "captioning" / "captioning.py",
        ["--offline-tiny", "--output", str(output), "--device", "cpu"],
        environment, tmp_path,
    )  # fmt: skip
    for color, _, captions in captioning.TINY_PICTURES:
        rows = [line for line in lines if line.startswith(f"{color}.png")]
        assert len(rows) == 2 and all(captions[0] in row for row in rows)
    assert (output / "tiny-blip" / "config.json").is_file()
    assert (output / "report.html").is_file()
    # It ends Opik's client: no wait on Opik's retries at exit (see exit_timing.py).
    assert ended, f"Opik's client was left to flush at exit ({exit_seconds:.1f} s)"
    monkeypatch.setenv("OPIK_TRACK_DISABLE", "true")  # main sets it; restored after the test
    with pytest.raises(SystemExit) as stop:
        captioning.main(["--offline-tiny", "--model", "some/blip", "--output", str(output)])
    assert stop.value.code == 2
    assert "--offline-tiny builds its own model" in capsys.readouterr().err
