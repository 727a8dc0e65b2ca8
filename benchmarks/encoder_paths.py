"""Which encoder path, batch size and type score a whole list fastest on this device.

BERTScore's layers run through the compiled layer loop of ``models/unpadded.py`` where
the model allows it, and through transformers otherwise. The loop was tuned on a 2-core
CPU; this benchmark times, on any device, the whole-list call (``BERTScoreEngine.score``,
what ``score_batch`` runs) and the per-item call from 16 threads (what Opik's threads
do) with:

  compiled      the compiled layer loop (the default);
  no-fuser      the same loop with TorchScript's kernel fuser off (on a GPU it compiles
                fused kernels for new shapes while the list runs);
  transformers  the model's own forward pass (the loop switched off);

each at ``batch_size`` 64 (the default) and 256, in float32 and in the fast mode, against
bert_score's ``BERTScorer.score`` at ``batch_size`` 64 (its default) and 256. Every
setting runs a cold call (first use: compilation, cuBLAS and allocator warm-up) and then
``--repeats`` warm calls, with no embedding cache, on the deterministic caption workload
of ``bertscore_throughput.py``; each path runs in its own process, and the whole-list
F1s of every setting are compared with the default's. With ``--in-process`` (what
``gpu_suite.sh`` runs) the paths run one after another in this process, loading the model
once; a path's cold call then follows the earlier paths' work on the same shapes, so it
measures what that path compiles or specialises for itself. Each path's figures are
appended to ``encoder_paths.jsonl`` as soon as it ends (``suite_log.py``).

    python benchmarks/encoder_paths.py --device cuda
    python benchmarks/encoder_paths.py --device cpu --pairs 500 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bertscore_throughput import _minilm, _quiet, run_fresh, workload
from suite_log import record

STEP = "encoder_paths"

PATHS = ["compiled", "no-fuser", "transformers"]
BATCH_SIZES = [64, 256]
DTYPES = ["float32", "fast"]


def _synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(call, device: str, repeats: int) -> tuple[float, float, object]:
    """Seconds of a cold call, the median of ``repeats`` warm calls, and the last result."""
    _synchronize(device)
    start = time.perf_counter()
    result = call()
    _synchronize(device)
    cold = time.perf_counter() - start
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        _synchronize(device)
        warm.append(time.perf_counter() - start)
    return cold, statistics.median(warm), result


def run_path(path: str, pairs: int, device: str, repeats: int) -> dict[str, object]:
    """Time every batch size and type through one encoder path, in this process."""
    import torch

    _quiet()
    references, candidates, _ = workload(pairs)
    figures: dict[str, object] = {}
    if path == "bert_score":
        from bert_score import BERTScorer

        scorer = BERTScorer(model_type=_minilm(), num_layers=6, device=device)
        scorer.score(["A warm-up sentence."], ["A sentence to warm up."])
        for batch_size in BATCH_SIZES:
            cold, warm, _ = _timed(
                lambda size=batch_size: scorer.score(candidates, references, batch_size=size),
                device,
                repeats,
            )
            figures[f"{batch_size}"] = {"cold": cold, "warm": warm}
        return figures
    fuser = torch._C._jit_texpr_fuser_enabled()
    if path == "no-fuser":
        torch._C._jit_set_texpr_fuser_enabled(False)
    try:
        _time_engines(path, figures, pairs, device, repeats, candidates, references)
    finally:  # in one process, the next path runs as it would alone
        torch._C._jit_set_texpr_fuser_enabled(fuser)
    return figures


def _time_engines(
    path: str,
    figures: dict[str, object],
    pairs: int,
    device: str,
    repeats: int,
    candidates: list[str],
    references: list[str],
) -> None:
    from opik_semantic_metrics.batching.cache import EmbeddingCache
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    for dtype in DTYPES:
        for batch_size in BATCH_SIZES:
            engine = BERTScoreEngine(
                _minilm(),
                6,
                device=device,
                dtype=None if dtype == "float32" else dtype,
                batch_size=batch_size,
                cache=EmbeddingCache(0),
            )
            unpadded = engine.encoder.unpadded
            if path == "transformers":
                object.__setattr__(engine.encoder, "unpadded", None)
            try:
                cold, warm, results = _timed(
                    lambda engine=engine: engine.score(candidates, references), device, repeats
                )
            finally:  # the loaded encoder is shared by every engine of this process
                object.__setattr__(engine.encoder, "unpadded", unpadded)
            entry: dict[str, object] = {
                "cold": cold,
                "warm": warm,
                "f1": [result.f1 for result in results],  # type: ignore[attr-defined]
            }
            if batch_size == BATCH_SIZES[0]:

                def per_item(engine=engine) -> list[object]:
                    with ThreadPoolExecutor(max_workers=16) as pool:
                        return list(pool.map(engine.score_one, candidates, references))

                if path == "transformers":
                    object.__setattr__(engine.encoder, "unpadded", None)
                try:
                    entry["per_item_cold"], entry["per_item_warm"], _ = _timed(per_item, device, 1)
                finally:
                    object.__setattr__(engine.encoder, "unpadded", unpadded)
            figures[f"{dtype}/{batch_size}"] = entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--in-process", action="store_true", help="every path in this process (gpu_suite.sh)"
    )
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.path:
        print(json.dumps(run_path(args.path, args.pairs, args.device, args.repeats)))
        return
    from minilm_shape import weights_of

    record(STEP, "meta", pairs=args.pairs, device=args.device, weights=weights_of(_minilm()))
    common = ["--pairs", str(args.pairs), "--device", args.device, "--repeats", str(args.repeats)]
    runs = {}
    for path in ["bert_score", *PATHS]:
        if args.in_process:
            runs[path] = run_path(path, args.pairs, args.device, args.repeats)
        else:
            runs[path] = run_fresh(__file__, [*common, "--path", path])
        record(STEP, "case", case=path, figures=runs[path])
        print(f"({path}) done", file=sys.stderr)
    anchor = args.pairs / runs["bert_score"]["64"]["warm"]
    best_anchor = max(args.pairs / entry["warm"] for entry in runs["bert_score"].values())
    print(
        f"\nWhole list and per item, {args.pairs} caption pairs, all-MiniLM-L6-v2 L6, "
        f"device={args.device}; pairs/s, warm = median of {args.repeats} calls after a cold one"
    )
    print(
        "bert_score whole list: "
        + ", ".join(
            f"batch {size}: {args.pairs / entry['warm']:.0f} warm, "
            f"{args.pairs / entry['cold']:.0f} cold"
            for size, entry in runs["bert_score"].items()
        )
    )
    default_f1 = runs["compiled"]["float32/64"]["f1"]
    print(
        f"\n{'path':<13} {'type/batch':<12} {'warm':>7} {'cold':>7} {'x bs 64':>8} "
        f"{'x best':>7} {'per item':>9} {'max dF1':>9}"
    )
    for path in PATHS:
        for setting, entry in runs[path].items():
            warm = args.pairs / entry["warm"]
            per_item = (
                f"{args.pairs / entry['per_item_warm']:9.0f}" if "per_item_warm" in entry else ""
            )
            deviation = max(abs(a - b) for a, b in zip(entry["f1"], default_f1, strict=True))
            print(
                f"{path:<13} {setting:<12} {warm:7.0f} {args.pairs / entry['cold']:7.0f} "
                f"{warm / anchor:8.2f} {warm / best_anchor:7.2f} {per_item:>9} {deviation:9.1e}"
            )
    from suite_log import results_dir

    (results_dir() / "encoder_paths.json").write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
