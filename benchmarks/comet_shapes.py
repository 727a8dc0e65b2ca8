"""COMET throughput of the native engine alone, on a tiny and an XLM-R-base-shaped checkpoint.

``comet_throughput.py`` sets our COMET against unbabel-comet, which needs its own
environment; a GPU machine lent for a benchmark run has neither it nor a network. This
benchmark needs neither: it times our engine on two checkpoints in unbabel-comet's layout
(``hparams.yaml``, ``checkpoints/model.ckpt``), both with random weights (time does not
depend on their values):

  tiny          the test fixture ``tests/fixtures/comet/regression-xlmr`` (2 layers, 32
                wide; wmt22-comet-da's layer mix and pooling);
  xlmr-base     built here: an XLM-R-base encoder (12 layers, 768 wide, 12 heads,
                feed-forward 3072, a 250,002-entry vocabulary) under wmt22-comet-da's head
                (a layer mix of every layer, average pooling, a 3072-1024 feed-forward
                estimator on the six combined features; wmt22-comet-da itself reads
                XLM-R large). Its tokenizer is the
                fixture's small XLM-R-style one, which cuts these English segments into
                more pieces than XLM-R's own 250,002-entry vocabulary would (the table
                gives the mean token count).

Cases, on ``comet_throughput.py``'s deterministic workload (4 systems x ``--segments``
source segments with references), all in this process (the model loaded once per
checkpoint and dtype), after one warm-up item, each case's figures appended to
``comet_shapes.jsonl`` as soon as it ends (``suite_log.py``):

  d   ``score_batch`` on the whole list (every system's samples), float32;
  f   the same in the fast mode (``dtype="fast"``), with its largest score difference;
  c   per item through ``opik.evaluate_on_dict_items`` with 16 threads, one system.

    python benchmarks/comet_shapes.py --device cuda
    python benchmarks/comet_shapes.py --segments 20 --xlmr-layers 2 --rounds 1   # quick
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).parent))
from comet_throughput import _evaluate, workload
from suite_log import record

STEP = "comet_shapes"
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "comet"

#: XLM-RoBERTa base's sizes (its Hub configuration), the encoder of wmt22-comet-da.
XLMR_BASE = {
    "vocab_size": 250002,
    "hidden_size": 768,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 514,
    "type_vocab_size": 1,
    "layer_norm_eps": 1e-5,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
}
#: wmt22-comet-da's estimator: hidden sizes of its feed-forward.
ESTIMATOR_HIDDEN = [3072, 1024]


def build_xlmr_base_shape(directory: Path, layers: int = 12, full_vocabulary: bool = True) -> Path:
    """Write an XLM-R-base COMET regression checkpoint (random, seeded) into ``directory``;
    returns the model folder. ``layers`` and ``full_vocabulary`` shrink it for a quick run."""
    import torch
    import yaml
    from transformers import XLMRobertaConfig, XLMRobertaModel

    encoder_dir = directory / "encoders" / "xlmr-base"
    model_dir = directory / "model"
    (model_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURES / "encoders" / "xlmr", encoder_dir, dirs_exist_ok=True)
    sizes = dict(XLMR_BASE)
    if not full_vocabulary:  # the tokenizer's own size: lookup time does not depend on it
        sizes["vocab_size"] = XLMRobertaConfig.from_pretrained(encoder_dir).vocab_size
    config = XLMRobertaConfig(num_hidden_layers=layers, **sizes)
    config.save_pretrained(encoder_dir)
    torch.manual_seed(0)
    encoder = XLMRobertaModel(config, add_pooling_layer=False)
    fixture = torch.load(
        FIXTURES / "regression-xlmr" / "checkpoints" / "model.ckpt", weights_only=True
    )
    hyper = dict(fixture["hyper_parameters"])
    hyper.update(pretrained_model="../encoders/xlmr-base", hidden_sizes=ESTIMATOR_HIDDEN)
    state = {f"encoder.model.{key}": value for key, value in encoder.state_dict().items()}
    mixed = layers + 1  # the embeddings and every layer
    state["layerwise_attention.gamma"] = torch.ones(1)
    state["layerwise_attention.dropout_mask"] = torch.zeros(mixed)
    state["layerwise_attention.dropout_fill"] = torch.full((mixed,), -1e20)
    for index in range(mixed):
        state[f"layerwise_attention.scalar_parameters.{index}"] = 0.1 * torch.randn(1)
    widths = [6 * sizes["hidden_size"], *ESTIMATOR_HIDDEN, 1]
    for position, (inputs, outputs) in enumerate(itertools.pairwise(widths)):
        layer = torch.nn.Linear(inputs, outputs)
        state[f"estimator.ff.{3 * position}.weight"] = layer.weight.detach()
        state[f"estimator.ff.{3 * position}.bias"] = layer.bias.detach()
    checkpoint = {key: value for key, value in fixture.items() if key != "state_dict"}
    checkpoint.update(state_dict=state, hyper_parameters=hyper)
    torch.save(checkpoint, model_dir / "checkpoints" / "model.ckpt")
    (model_dir / "hparams.yaml").write_text(yaml.safe_dump(hyper), encoding="utf-8")
    return model_dir


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def run_case(case: str, model_dir: Path, segments: int, device: str) -> dict[str, object]:
    """Time one case in this process: seconds and items."""
    from opik_semantic_metrics import COMET
    from opik_semantic_metrics.batching.cache import shared_cache

    logging.getLogger("opik").setLevel(logging.ERROR)
    shared_cache().clear()
    systems = workload(segments)
    metric = COMET(
        str(model_dir), device=device, track=False, dtype="fast" if case == "f" else None
    )
    warm = {"src": "A warm-up sentence.", "mt": "Ein Satz.", "ref": "Ein Satz zum Aufwärmen."}
    if case == "c":
        _evaluate(metric, [warm])  # Opik's engine starts once
        shared_cache().clear()
        start = time.perf_counter()
        evaluation = _evaluate(metric, systems[0])
        seconds = time.perf_counter() - start
        failed = sum(
            result.scoring_failed
            for test in evaluation.test_results
            for result in test.score_results
        )
        return {"seconds": seconds, "items": len(systems[0]), "failed": failed}
    flat = [sample for samples in systems for sample in samples]
    metric.score_batch([warm["src"]], [warm["mt"]], [warm["ref"]])
    shared_cache().clear()
    _synchronize(device)
    start = time.perf_counter()
    results = metric.score_batch(
        [s["src"] for s in flat], [s["mt"] for s in flat], [s["ref"] for s in flat]
    )
    _synchronize(device)
    return {
        "seconds": time.perf_counter() - start,
        "items": len(flat),
        "scores": [result.value for result in results],
    }


def mean_tokens(model_dir: Path, segments: int) -> float:
    """Mean token count of the workload's distinct texts with the checkpoint's tokenizer."""
    import yaml
    from transformers import AutoTokenizer

    hyper = yaml.safe_load((model_dir / "hparams.yaml").read_text(encoding="utf-8"))
    tokenizer = AutoTokenizer.from_pretrained(model_dir / hyper["pretrained_model"])
    texts = {text for samples in workload(segments) for s in samples for text in s.values()}
    return statistics.mean(len(tokenizer(text)["input_ids"]) for text in texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=500, help="source segments a system")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cases", default="dfc", help="of d, f, c")
    parser.add_argument("--xlmr-layers", type=int, default=12, help="fewer only to develop")
    parser.add_argument(
        "--small-vocabulary",
        action="store_true",
        help="the xlmr-base shape with its tokenizer's vocabulary (quick runs)",
    )
    args = parser.parse_args()
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    built = Path(tempfile.mkdtemp(prefix="comet-shapes-"))
    try:
        started = time.perf_counter()
        checkpoints = {
            "tiny": FIXTURES / "regression-xlmr",
            "xlmr-base": build_xlmr_base_shape(
                built, args.xlmr_layers, full_vocabulary=not args.small_vocabulary
            ),
        }
        print(
            f"built the xlmr-base shape in {time.perf_counter() - started:.0f} s", file=sys.stderr
        )
        record(
            STEP, "meta", device=args.device, segments=args.segments, xlmr_layers=args.xlmr_layers
        )
        speeds: dict[tuple[str, str], list[float]] = {}
        scores: dict[tuple[str, str], list[float]] = {}
        for name, model_dir in checkpoints.items():
            record(STEP, "work", checkpoint=name, mean_tokens=mean_tokens(model_dir, args.segments))
            for round_index in range(args.rounds):
                for case in args.cases:
                    figures = run_case(case, model_dir, args.segments, args.device)
                    record(STEP, "case", checkpoint=name, case=case, round=round_index, **figures)
                    speeds.setdefault((name, case), []).append(
                        float(figures["items"]) / float(figures["seconds"])  # type: ignore[arg-type]
                    )
                    if "scores" in figures:
                        scores[name, case] = figures["scores"]  # type: ignore[assignment]
                    print(f"{name} round {round_index + 1}: ({case}) done", file=sys.stderr)
    finally:
        shutil.rmtree(built, ignore_errors=True)
    labels = {
        "d": "score_batch, float32",
        "f": "score_batch, fast",
        "c": "per item in Opik, 16 thr.",
    }
    print(f"\nCOMET, our engine, device={args.device}, median of {args.rounds} rounds; items/s")
    for (name, case), values in speeds.items():
        line = f"{name:<10} {labels[case]:<28} {statistics.median(values):9.1f}"
        if case == "f" and (name, "d") in scores:
            difference = max(
                abs(a - b) for a, b in zip(scores[name, "f"], scores[name, "d"], strict=True)
            )
            line += f"   max |score - float32| {difference:.1e}"
        print(line)


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
