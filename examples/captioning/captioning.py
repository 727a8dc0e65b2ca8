"""BLIP image captions as tracked Opik experiments, scored by BERTScore and SemanticMatch.

The picture of Comet's "BERTScore for LLM evaluation" post, on this package's metrics: a
BLIP captioning task (``transformers.BlipForConditionalGeneration``, by default
``Salesforce/blip-image-captioning-base``) decorated with Opik's ``@track`` is run by
``opik.evaluate`` over an Opik dataset of (image, reference captions), once per
generation configuration, each run an experiment with its ``experiment_config`` (model,
beams, lengths): compare them side by side in the Opik UI. With several references per
image, each metric takes the best (bert_score's rule for BERTScore; SemanticMatch, which
reads a list as one answer in parts, scores each alternative here and keeps the best).

Without an Opik server configured (``OPIK_URL_OVERRIDE``, ``OPIK_API_KEY`` or
``opik configure``), the same experiments run on Opik's local engine
(``opik.evaluate_on_dict_items``) and the comparison is printed and written to an HTML
report.

    python examples/captioning/captioning.py [--model DIR_OR_HUB_ID] [--items items.jsonl]
    python examples/captioning/captioning.py --offline-tiny   # no network at all

``--items`` takes JSON lines ``{"image": "<path or URL>", "reference": ["caption", ...]}``
(or ``"reference": "caption"`` for one caption).
Images are read from local paths or downloaded (requests + pillow). The BLIP weights
come from the Hub (or its cache, or a local directory): this example needs network
access or a downloaded model, except with ``--offline-tiny``, which builds a tiny random
BLIP and draws its pictures (its captions are random words: it runs the flow offline, not
the captioning). ``colab.ipynb`` runs it on Colab.
"""

from __future__ import annotations

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Opik imports litellm when a metric fails; keep litellm from fetching its price list.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import dataclasses
import io
import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import opik
import requests
import torch
from opik import track
from opik.evaluation.metrics import base_metric, score_result
from PIL import Image
from transformers import BlipForConditionalGeneration, BlipProcessor
from transformers.utils import logging as transformers_logging

from opik_semantic_metrics import BERTScore, SemanticMatch
from opik_semantic_metrics.compare.experiments import (
    ExperimentRunner,
    ExperimentScores,
    MetricSummary,
    aligned_scores,
    opik_server_configured,
    summarize,
)
from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.models.devices import resolve_device
from opik_semantic_metrics.report.html import HtmlReport
from opik_semantic_metrics.report.plots import figure_png, score_distributions
from opik_semantic_metrics.report.tables import Table, summaries_pairwise_table, summary_table

DEFAULT_MODEL = "Salesforce/blip-image-captioning-base"
DATASET_NAME = "blip-captions"
METRICS = ("bertscore_f1", "bertscore_precision", "bertscore_recall", "semantic_match")
IMAGE_TIMEOUT_S = 30


class ImageUnavailableError(RuntimeError):
    """An image could not be read: a URL that fails or a file that is not an image."""


@dataclass(frozen=True)
class CaptionConfig:
    """One way of generating captions: an experiment.

    Attributes:
        name: The experiment's name suffix.
        num_beams: Beams of beam search (1: greedy decoding).
        max_length, min_length: Caption length bounds, in tokens.
        repetition_penalty, length_penalty: ``generate`` penalties (1.0: none).
    """

    name: str
    num_beams: int = 1
    max_length: int = 30
    min_length: int = 5
    repetition_penalty: float = 1.0
    length_penalty: float = 1.0

    def generate_kwargs(self) -> dict[str, Any]:
        """The ``generate`` arguments of this configuration."""
        settings = dataclasses.asdict(self)
        del settings["name"]
        return settings


#: The two configurations compared: greedy short captions, and the post's beam search.
CONFIGS = (
    CaptionConfig("greedy-short", num_beams=1, max_length=20, min_length=5),
    CaptionConfig("beam5-long", num_beams=5, max_length=50, min_length=10, repetition_penalty=1.2),
)

#: Two well-known images (the COCO val2017 cats of the transformers docs, and BLIP's own
#: demo image), with reference captions written for this example.
EXAMPLE_ITEMS = (
    {
        "image": "http://images.cocodataset.org/val2017/000000039769.jpg",
        "reference": [
            "Two cats sleeping on a pink blanket next to two remote controls.",
            "Two cats lying on a couch with remotes beside them.",
        ],
    },
    {
        "image": "https://storage.googleapis.com/sfr-vision-language-research/BLIP/demo.jpg",
        "reference": [
            "A woman sitting on the beach with her dog.",
            "A woman and a dog sit on the sand by the sea at sunset.",
        ],
    },
)


#: The ``--offline-tiny`` run's pictures, drawn with pillow: colour, shape and captions.
TINY_PICTURES = (
    ("red", "rectangle", ["A red square on a white background.", "A red box."]),
    ("blue", "ellipse", ["A blue circle in the middle of the picture."]),
    ("green", "rectangle", ["A green square on white.", "A small green box."]),
)


def build_tiny_blip(directory: Path) -> Path:
    """A random 2-layer BLIP for 32x32 images, with a word-level vocabulary: no download.

    Its captions are random words; it runs the example's whole flow (tracked task,
    experiments, metrics, report) offline and in seconds, to check the wiring, not to
    caption. Written to ``directory``, which is returned.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import (
        BertTokenizerFast,
        BlipConfig,
        BlipImageProcessor,
        BlipTextConfig,
        BlipVisionConfig,
    )

    directory.mkdir(parents=True, exist_ok=True)
    captions = [caption for _, _, references in TINY_PICTURES for caption in references]
    words = sorted({word.strip(".,").lower() for caption in captions for word in caption.split()})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocabulary = {token: index for index, token in enumerate([*specials, *words, ".", ","])}
    backend = Tokenizer(models.WordPiece(vocab=vocabulary, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocabulary["[CLS]"]), ("[SEP]", vocabulary["[SEP]"])],
    )
    # The tokenizer object, not a vocabulary file: the two transformers majors name that
    # argument differently.
    tokenizer = BertTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=True,
    )
    text = BlipTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        encoder_hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        # [CLS] stands in for BLIP's [DEC] start token; [SEP] ends a caption.
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        sep_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    vision = BlipVisionConfig(
        hidden_size=32,
        image_size=32,
        patch_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    config = BlipConfig(
        text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=32
    )
    torch.manual_seed(0)
    BlipForConditionalGeneration(config).eval().save_pretrained(directory)
    processor = BlipProcessor(
        image_processor=BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer=tokenizer
    )
    processor.save_pretrained(directory)
    return directory


def draw_tiny_items(directory: Path) -> list[dict[str, Any]]:
    """The ``--offline-tiny`` items: :data:`TINY_PICTURES` drawn as PNG files in
    ``directory``, each with its reference captions."""
    from PIL import ImageDraw

    directory.mkdir(parents=True, exist_ok=True)
    items = []
    for color, shape, captions in TINY_PICTURES:
        image = Image.new("RGB", (64, 48), "white")
        getattr(ImageDraw.Draw(image), shape)((8, 8, 40, 40), fill=color)
        path = directory / f"{color}.png"
        image.save(path)
        items.append({"image": str(path), "reference": list(captions)})
    return items


class BestReferenceSemanticMatch(SemanticMatch):
    """SemanticMatch of a caption against alternative reference captions: the best counts.

    SemanticMatch reads a list of strings as one answer in parts; an image's references
    are alternatives instead, so each is scored and the highest kept (its index in
    ``metadata["best_reference"]``), the rule BERTScore follows for several references.
    """

    def score(
        self, output: str, reference: str | list[str], **ignored_kwargs: Any
    ) -> score_result.ScoreResult:
        if not isinstance(reference, list) or not reference:
            return super().score(output, reference)  # one text, or input it rejects
        results = self.score_batch([output] * len(reference), reference)
        best = max(range(len(results)), key=lambda index: results[index].value)
        metadata = {**(results[best].metadata or {}), "best_reference": best}
        return dataclasses.replace(results[best], metadata=metadata)


def caption_metrics(
    items: Sequence[dict[str, Any]],
    model: str = "all-MiniLM-L6-v2",
    *,
    track: bool,
    device: str | None = None,
) -> list[base_metric.BaseMetric]:
    """BERTScore and SemanticMatch, the latter fitted on every reference caption of ``items``
    (an item's ``reference``: a list of captions, or one caption as a string)."""
    semantic_match = BestReferenceSemanticMatch(model=model, device=device, track=track)
    captions = [caption for item in items for caption in _captions(item["reference"])]
    # The fit needs two different captions to estimate the paragraph baseline; with
    # fewer (one image, or one caption everywhere), the metric keeps its defaults.
    if len({caption for caption in captions if caption.strip()}) >= 2:
        semantic_match.fit(captions)
    return [BERTScore(model=model, device=device, track=track), semantic_match]


def read_items(path: Path) -> list[dict[str, Any]]:
    """The items of a JSON lines file: each an ``image`` (a path or an http(s) URL) and a
    ``reference`` (a caption, or a list of captions).

    Raises:
        ValueError: The file cannot be read, a line is not such an item or has a field
            named ``id`` (Opik's own), an image is on two lines (each image is one item,
            keyed by it in Opik), or a local image is missing or no image (found before
            any model loads, not in the middle of a run).
    """
    try:
        # Split at newlines only: JSON strings may hold U+2028 and the like, which
        # str.splitlines() would also split at.
        lines = path.read_text("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read the items file {path}: {error}") from None
    items = []
    line_of_image: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {number}: not JSON ({error})") from None
        reference = item.get("reference") if isinstance(item, dict) else None
        references = _captions(reference) if isinstance(reference, str | list) else []
        if not isinstance(item, dict) or not isinstance(item.get("image"), str):
            raise ValueError(f'{path}, line {number}: expected an object with an "image" string')
        if not references or not all(isinstance(caption, str) for caption in references):
            raise ValueError(
                f'{path}, line {number}: expected a "reference" caption or list of captions'
            )
        if "id" in item:
            raise ValueError(
                f'{path}, line {number}: a field named "id" is Opik\'s own item id: '
                "rename it (for example item_id)"
            )
        image = item["image"]
        if image in line_of_image:
            raise ValueError(
                f"{path}, line {number}: the image {image} is also on line "
                f"{line_of_image[image]} (one line an image: list its captions together)"
            )
        line_of_image[image] = number
        if not image.startswith(("http://", "https://")):
            if not Path(image).is_file():
                raise ValueError(f"{path}, line {number}: there is no image file {image}")
            try:
                with Image.open(image) as opened:
                    opened.verify()
            except (OSError, SyntaxError) as error:  # pillow's damaged-file errors
                raise ValueError(f"{path}, line {number}: {image} is no image ({error})") from None
        items.append(item)
    if not items:
        raise ValueError(f"{path} holds no items")
    return items


def _captions(reference: str | Sequence[str]) -> list[str]:
    # A string is one caption, not a list of characters to fit on.
    return [reference] if isinstance(reference, str) else list(reference)


def load_image(source: str) -> Image.Image:
    """An RGB image from a local path or an http(s) URL.

    Raises:
        ImageUnavailableError: No network, an error status, a missing file, or data that
            is not an image; named with the image's source.
    """
    try:
        if source.startswith(("http://", "https://")):
            response = requests.get(source, timeout=IMAGE_TIMEOUT_S)
            response.raise_for_status()
            image = Image.open(io.BytesIO(response.content))
        else:
            image = Image.open(source)
        return image.convert("RGB")
    except (requests.RequestException, OSError, SyntaxError) as error:
        raise ImageUnavailableError(f"cannot read the image {source}: {error}") from error


class Captioner:
    """A BLIP captioning model, loaded once.

    Args:
        model: Hub id or local directory of a BLIP captioning checkpoint.
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available.
    """

    def __init__(self, model: str = DEFAULT_MODEL, device: str | None = None) -> None:
        self.model_name = model
        self.device = resolve_device(device)
        self.processor = BlipProcessor.from_pretrained(model)
        self.model = BlipForConditionalGeneration.from_pretrained(model).to(self.device).eval()

    def caption(self, image: Image.Image, config: CaptionConfig) -> str:
        """The caption of one image under ``config``."""
        inputs = self.processor(images=image, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            ids = self.model.generate(**inputs, **config.generate_kwargs())
        return self.processor.decode(ids[0], skip_special_tokens=True).strip()


def make_task(
    captioner: Captioner, config: CaptionConfig, captions: dict[str, str] | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The tracked Opik task of one configuration: dataset item -> ``{"output": caption}``.

    Both the task and the captioning call are ``@track``-ed, so each item's trace in Opik
    shows the image source, the generated caption and the metric scores. ``captions``,
    when given, receives each caption under its image, to show beside the scores.
    """

    @track(name="generate_caption")
    def generate_caption(image_source: str) -> str:
        return captioner.caption(load_image(image_source), config)

    @track(name="caption_task")
    def caption_task(item: dict[str, Any]) -> dict[str, Any]:
        caption = generate_caption(item["image"])
        if captions is not None:
            captions[item["image"]] = caption
        return {"output": caption}

    return caption_task


def experiment_config(captioner: Captioner, config: CaptionConfig) -> dict[str, Any]:
    """What Opik stores with the experiment: the model and the generation settings."""
    return {"model": captioner.model_name, **dataclasses.asdict(config)}


def run_experiments(
    items: Sequence[dict[str, Any]],
    captioner: Captioner,
    metrics: Sequence[base_metric.BaseMetric],
    configs: Sequence[CaptionConfig] = CONFIGS,
    *,
    online: bool | None = None,
    task_threads: int = 4,
    captions: dict[str, dict[str, str]] | None = None,
) -> list[ExperimentScores]:
    """One experiment per configuration over the same dataset; their per-item scores.

    ``captions``, when given, receives experiment name -> image -> generated caption.
    """
    runner = ExperimentRunner(
        items, DATASET_NAME, key_field="image", online=online, task_threads=task_threads
    )
    experiments = []
    for config in configs:
        name = f"blip-{config.name}"
        record = None if captions is None else captions.setdefault(name, {})
        task = make_task(captioner, config, record)
        experiments.append(runner.run(name, task, metrics, experiment_config(captioner, config)))
    return experiments


def caption_table(
    items: Sequence[dict[str, Any]],
    experiments: Sequence[ExperimentScores],
    captions: Mapping[str, Mapping[str, str]],
    metrics: Sequence[str] = ("bertscore_f1", "semantic_match"),
) -> Table:
    """Each image's first reference caption and, per experiment, the caption generated
    and its scores: what the means summarise. An unscored item shows "failed"."""
    rows = []
    for item in items:
        image = item["image"]
        for experiment in experiments:
            scores = [experiment.scores.get(metric, {}).get(image) for metric in metrics]
            rows.append(
                (
                    Path(image).name or image,
                    _captions(item["reference"])[0],
                    experiment.name,
                    captions.get(experiment.name, {}).get(image, "(none)"),
                    *("failed" if score is None else f"{score:.3f}" for score in scores),
                )
            )
    return Table(("image", "reference", "experiment", "caption", *metrics), tuple(rows))


def quiet_without_server() -> None:
    """Tracing off and Opik's warnings silenced, for runs with no Opik server to log to
    (the experiments then run on Opik's local engine)."""
    # The flag is read once and cached, so set it too.
    os.environ["OPIK_TRACK_DISABLE"] = "true"
    opik.set_tracing_active(False)
    logging.getLogger("opik").setLevel(logging.ERROR)


def write_report(
    path: Path,
    experiments: Sequence[ExperimentScores],
    summaries: Sequence[MetricSummary],
    model: str,
    captions: Table | None = None,
) -> Path:
    """The comparison as an HTML report with the per-image score distributions, and the
    captions (a :func:`caption_table`) where given."""
    report = HtmlReport(f"BLIP captions: {', '.join(e.name for e in experiments)}")
    report.add_paragraph(
        f"Model {model}; BERTScore and SemanticMatch against the best reference caption."
    )
    report.add_table(summary_table(summaries), caption="Means and 95% bootstrap intervals")
    report.add_table(summaries_pairwise_table(summaries), caption="Pairwise differences")
    if captions is not None:
        report.add_table(captions, caption="The generated captions and their scores")
    # The images the tables compare: those every configuration scored.
    distributions = {
        metric: aligned_scores(experiments, metric)[1]
        for metric in ("bertscore_f1", "semantic_match")
    }
    report.add_image(
        figure_png(score_distributions(distributions)), alt="caption score distributions"
    )
    return report.write(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="BLIP hub id or directory")
    parser.add_argument("--items", default=None, help="JSON lines of image and reference")
    parser.add_argument(
        "--metrics-model", default="all-MiniLM-L6-v2", help="model of BERTScore and SemanticMatch"
    )
    parser.add_argument("--device", default=None, help="cpu, cuda, ...")
    parser.add_argument("--output", default="captioning-report", help="report folder")
    parser.add_argument(
        "--offline-tiny",
        action="store_true",
        help="no download: a tiny random BLIP (random-word captions) and pictures drawn "
        "locally, written under --output; checks the flow, not the captions",
    )
    args = parser.parse_args(argv)
    if args.offline_tiny:
        if args.model != DEFAULT_MODEL:
            parser.error("--offline-tiny builds its own model: leave out --model")
        args.model = str(build_tiny_blip(Path(args.output) / "tiny-blip"))
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    online = opik_server_configured()
    if not online:
        quiet_without_server()
    try:
        if args.items:
            items = read_items(Path(args.items))
        elif args.offline_tiny:
            items = draw_tiny_items(Path(args.output) / "pictures")
        else:
            items = [dict(i) for i in EXAMPLE_ITEMS]
    except ValueError as error:
        print(f"Cannot use --items: {error}", file=sys.stderr)
        return 2
    try:
        resolve_device(args.device)
    except ValueError as error:
        print(f"Cannot use --device: {error}", file=sys.stderr)
        return 2
    try:
        captioner = Captioner(args.model, device=args.device)
    except (OSError, ValueError) as error:  # huggingface_hub rejects a path as a repo id
        print(f"Cannot load {args.model!r}: {error}".splitlines()[0], file=sys.stderr)
        print(
            "Pass --model with a downloaded BLIP directory, or run with network (without "
            "one, set HF_HUB_OFFLINE=1: the Hub is then not retried for minutes first).",
            file=sys.stderr,
        )
        return 2
    try:
        metrics = caption_metrics(items, args.metrics_model, track=online, device=args.device)
    except (ModelUnavailableError, ValueError) as error:
        print(f"Cannot use --metrics-model {args.metrics_model!r}: {error}", file=sys.stderr)
        return 2
    captions: dict[str, dict[str, str]] = {}
    try:
        experiments = run_experiments(items, captioner, metrics, online=online, captions=captions)
    except ImageUnavailableError as error:
        # Opik stops an experiment at a task that raises: a caption needs its image.
        print(f"Stopped: {error}", file=sys.stderr)
        return 2
    summaries = summarize(experiments, METRICS)
    table = caption_table(items, experiments, captions)
    print(table.to_text())
    print()
    print(summary_table(summaries).to_text())
    print()
    print(summaries_pairwise_table(summaries).to_text())
    report = write_report(
        Path(args.output) / "report.html", experiments, summaries, captioner.model_name, table
    )
    print(f"\nHTML report: {report}")
    return 0


if __name__ == "__main__":
    status = main()
    if not opik_server_configured():
        # Opik's local engine still queues a trace per item for its default host, with no
        # server to take them: dropped here, or the exit waits about 12 s on its retries.
        opik.get_global_client().end(flush=False)
    raise SystemExit(status)
