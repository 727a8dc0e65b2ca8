"""BERTScore throughput: our metric per item inside Opik against bert_score's best call.

Measures, side by side in one run, on a deterministic workload of caption-length pairs
and the packaged all-MiniLM-L6-v2 (layer 6, float32):

  (a) bert_score ``BERTScorer.score`` on the whole list (its best case: loaded once,
      sorted, batched);
  (b) Opik's built-in ``BERTScore`` per item through ``opik.evaluate_on_dict_items``
      (it reloads the model on every call, so only a subset is run);
  (c) our ``BERTScore`` per item through ``opik.evaluate_on_dict_items``, 16 threads;
  (d) our ``score_batch`` on the whole list;
  (e) (c) again, a second experiment: another system's outputs for the same references,
      in the same process (references come from the embedding cache);
  (f) (d) with ``dtype="fast"`` (bf16 where the hardware has it), with its largest
      F1 deviation from float32.

  (l) (c) with the references prepared first (``BERTScore.prepare``: one whole-list,
      length-sorted pass that fills the embedding cache, so that each item encodes only
      its output), ``prepare`` counted in the time: what a user's first experiment on a
      dataset costs with the Opik recipe of ``docs/performance/prepare.md``.

Two more cases tell where (c)'s time goes:

  (g) our ``BERTScore.score`` per item from 16 plain threads, without Opik: the metric's
      own per-item throughput;
  (h) Opik's engine alone: ``opik.evaluate_on_dict_items`` with 16 threads and a metric
      that returns three fixed scores at once (as many as ours returns), so the pairs/s
      of the evaluation machinery itself;
  (i) (c) with Opik's message streamer switched off (``Streamer.put``, which takes
      every trace and feedback-score message of every item behind one lock, made a
      no-op): how much of (c) is Opik's logging pipeline. A diagnostic only; it patches
      a private Opik class, and where that class has changed the case reports nothing.

And one that checks the anchor is bert_score's best:

  (k) bert_score's whole-list call at ``batch_size`` 32, 64 (its default, used in (a)),
      128 and 256, one after another in one process (the order turned by one each
      round): if another size were clearly faster than 64, (a) would not be bert_score's
      best call.

And a second peer:

  (m) torchmetrics' ``bert_score`` (``torchmetrics.functional.text.bert``) on the whole
      list with the same model and layer, loaded once, at ``batch_size`` 64 (its default)
      and 256; left out where torchmetrics is not installed.

And one for a caller that is alone:

  (j) one thread scoring one pair a call, each pair new (no cache hits): through the
      micro-batcher (``score_one``, what ``BERTScore.score`` calls), alternated call by
      call with the same engine's ``score`` on a one-pair list in the caller's own
      thread; median milliseconds a pair. The batcher must add no wait for a lone caller.

For (c), (g) and (i) the share of the machine's CPU time left idle while the case ran is
read from ``/proc/stat`` (Linux), to show how well the work overlaps.

Each case runs in a fresh process, so that its peak resident memory is its own; the
cases are interleaved over ``--rounds`` rounds and the median of each is reported. With
``--in-process`` (what ``gpu_suite.sh`` runs) every case runs in this one process instead,
which imports the package and Opik once and loads each model once (a fresh process took
12 s to import them on an H200, longer than most cases): each case then starts with an
empty embedding cache, and its peak memory is the process's so far. Either way each
case's figures are appended to ``<step>.jsonl`` the moment it ends (``suite_log.py``), so
that a run cut short keeps every finished case. Pairs/s exclude start-up: every case loads
its model and runs one warm-up pair (through Opik's engine for (b) and (c)) before the
clock starts.

The model is the packaged all-MiniLM-L6-v2, or on a machine without it a model of its
shape with random weights (``minilm_shape.py``); the table says which. GFLOP/s count the
encoder's useful work on the workload's distinct texts (no padding) per second, against
a float32 matrix-multiply peak measured here.

    python benchmarks/bertscore_throughput.py            # 2,000 pairs, 3 rounds
    python benchmarks/bertscore_throughput.py --pairs 500 --rounds 1
    python benchmarks/bertscore_throughput.py --cases acdh --device cuda   # a few cases
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from caption_workload import workload

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: Every case, in the order they run; (e) is timed in (c)'s process.
ALL_CASES = "abcdfghijklm"
STEP = "bertscore_throughput"

# Case (k): bert_score's default batch_size (64) and its neighbours.
ANCHOR_BATCH_SIZES = [32, 64, 128, 256]


def _cpu_times() -> list[int] | None:
    """The machine's CPU time counters (Linux ``/proc/stat``), or None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            return [int(field) for field in stat.readline().split()[1:9]]
    except OSError:
        return None


def _idle_share(before: list[int] | None, after: list[int] | None) -> float:
    """Share of CPU time idle between two :func:`_cpu_times` readings (NaN if unknown)."""
    if before is None or after is None:
        return float("nan")
    spent = [end - start for start, end in zip(before, after, strict=True)]
    return spent[3] / max(sum(spent), 1)  # field 3: idle


def _switch_off_opik_streamer() -> bool:
    """Make Opik's message streamer drop every message (case i); False if it cannot."""
    try:
        from opik.message_processing import streamer
    except ImportError:
        return False
    if not callable(getattr(streamer.Streamer, "put", None)):
        return False
    streamer.Streamer.put = lambda self, message, force=False: None
    return True


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _minilm() -> str:
    """The MiniLM every case times (``minilm_shape.py``: packaged, or random of its shape)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from minilm_shape import minilm_dir

    return minilm_dir()


#: Models loaded by earlier cases of this process (``--in-process``): bert_score's scorer
#: and torchmetrics' model, each loaded once.
_LOADED: dict[str, object] = {}


def _bert_scorer(device: str):
    if "bert_score" not in _LOADED:
        from bert_score import BERTScorer

        _LOADED["bert_score"] = BERTScorer(model_type=_minilm(), num_layers=6, device=device)
    return _LOADED["bert_score"]


def _torchmetrics_bert_score(device: str):
    """torchmetrics' functional BERTScore bound to MiniLM, loaded once; None without it."""
    if "torchmetrics" not in _LOADED:
        try:
            from torchmetrics.functional.text.bert import bert_score
        except ImportError:
            return None
        from transformers import AutoModel, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(_minilm())
        model = AutoModel.from_pretrained(_minilm()).eval().to(device)

        def score(candidates: list[str], references: list[str], batch_size: int):
            return bert_score(
                candidates, references, model=model, user_tokenizer=tokenizer, num_layers=6,
                device=device, batch_size=batch_size,
            )  # fmt: skip

        _LOADED["torchmetrics"] = score
    return _LOADED["torchmetrics"]


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _quiet() -> None:
    import logging

    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    logging.getLogger("opik").setLevel(logging.ERROR)


def _evaluate(metric, candidates: list[str], references: list[str], threads: int = 16):
    import opik

    items = [
        {"candidate": candidate, "reference": reference}
        for candidate, reference in zip(candidates, references, strict=True)
    ]
    return opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["candidate"]},
        scoring_metrics=[metric],
        scoring_threads=threads,
    )


def _fixed_scores_metric():
    """An Opik metric that computes nothing and returns three fixed scores (case h)."""
    from opik.evaluation.metrics import base_metric, score_result

    class FixedScores(base_metric.BaseMetric):
        def score(self, output: str, reference: str, **ignored_kwargs):
            return [
                score_result.ScoreResult(name=f"fixed_{key}", value=0.5, reason="fixed")
                for key in ("f1", "precision", "recall")
            ]

    return FixedScores(name="fixed", track=False)


def run_case(
    case: str, pairs: int, subset: int, device: str, rotation: int = 0
) -> dict[str, float]:
    """Run one case in this process; returns its figures."""
    from opik_semantic_metrics.batching.cache import shared_cache

    _quiet()
    shared_cache().clear()  # each case starts with no embeddings, in-process too
    references, system_a, system_b = workload(pairs)
    warm_candidate, warm_reference = "A warm-up sentence.", "A sentence to warm up."
    result: dict[str, float] = {}
    if case == "a":
        scorer = _bert_scorer(device)
        scorer.score([warm_candidate], [warm_reference])
        _synchronize(device)
        start = time.perf_counter()
        scorer.score(system_a, references)
        _synchronize(device)
        result["seconds"] = time.perf_counter() - start
    elif case == "k":
        scorer = _bert_scorer(device)
        scorer.score([warm_candidate], [warm_reference])
        turn = rotation % len(ANCHOR_BATCH_SIZES)
        for batch_size in ANCHOR_BATCH_SIZES[turn:] + ANCHOR_BATCH_SIZES[:turn]:
            _synchronize(device)
            start = time.perf_counter()
            scorer.score(system_a, references, batch_size=batch_size)
            _synchronize(device)
            result[f"seconds_{batch_size}"] = time.perf_counter() - start
    elif case == "m":
        score = _torchmetrics_bert_score(device)
        if score is None:
            return {"missing": 1.0}
        score([warm_candidate], [warm_reference], 64)
        for batch_size in (64, 256):
            _synchronize(device)
            start = time.perf_counter()
            figures = score(system_a, references, batch_size)
            _synchronize(device)
            result[f"seconds_{batch_size}"] = time.perf_counter() - start
        result["f1"] = [float(value) for value in figures["f1"]]  # type: ignore[assignment]
    elif case == "b":
        from opik.evaluation.metrics import BERTScore as OpikBERTScore

        metric = OpikBERTScore(model_type=_minilm(), num_layers=6, device=device, track=False)
        _evaluate(metric, [warm_candidate], [warm_reference])  # Opik's engine starts once
        start = time.perf_counter()
        _evaluate(metric, system_a[:subset], references[:subset])
        result["seconds"] = time.perf_counter() - start
        result["pairs"] = subset
    elif case == "g":
        from concurrent.futures import ThreadPoolExecutor

        from opik_semantic_metrics import BERTScore

        metric = BERTScore(model=_minilm(), num_layers=6, device=device, track=False)
        metric.score(output=warm_candidate, reference=warm_reference)
        cpu_before, start = _cpu_times(), time.perf_counter()
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(metric.score, system_a, references))
        result["seconds"] = time.perf_counter() - start
        result["idle"] = _idle_share(cpu_before, _cpu_times())
    elif case == "h":
        metric = _fixed_scores_metric()
        _evaluate(metric, [warm_candidate], [warm_reference])
        start = time.perf_counter()
        _evaluate(metric, system_a, references)
        result["seconds"] = time.perf_counter() - start
    elif case == "j":
        from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

        engine = BERTScoreEngine(_minilm(), 6, device=device)
        engine.score_one(warm_candidate, warm_reference)
        engine.score([warm_candidate], [warm_reference])
        batcher_s: list[float] = []
        caller_s: list[float] = []
        for index in range(min(pairs, 400)):
            candidate, reference = system_a[index], references[index]
            start = time.perf_counter()
            if index % 2 == 0:
                engine.score_one(candidate, reference)
                batcher_s.append(time.perf_counter() - start)
            else:
                engine.score([candidate], [reference])
                caller_s.append(time.perf_counter() - start)
        result["batcher_ms"] = 1000 * statistics.median(batcher_s)
        result["caller_ms"] = 1000 * statistics.median(caller_s)
    elif case == "l":
        from opik_semantic_metrics import BERTScore

        metric = BERTScore(model=_minilm(), num_layers=6, device=device, track=False)
        _evaluate(metric, [warm_candidate], [warm_reference])  # Opik's engine starts once
        shared_cache().clear()  # the warm-up's texts
        cpu_before, start = _cpu_times(), time.perf_counter()
        metric.prepare(references)
        result["seconds_prepare"] = time.perf_counter() - start
        evaluation = _evaluate(metric, system_a, references)
        result["seconds"] = time.perf_counter() - start
        result["idle"] = _idle_share(cpu_before, _cpu_times())
        result["failed"] = sum(
            score.scoring_failed for test in evaluation.test_results for score in test.score_results
        )
        batcher = metric.engine.batcher
        result["mean_batch"] = batcher.items_run / max(batcher.batches_run, 1)
    elif case in {"c", "d", "f", "i"}:
        from opik_semantic_metrics import BERTScore

        if case == "i" and not _switch_off_opik_streamer():
            return {"seconds": float("nan"), "idle": float("nan"), "peak_rss_mib": float("nan")}
        in_opik = case in {"c", "i"}
        dtype = "fast" if case == "f" else None
        metric = BERTScore(model=_minilm(), num_layers=6, device=device, dtype=dtype, track=False)
        if in_opik:
            _evaluate(metric, [warm_candidate], [warm_reference])  # Opik's engine starts once
        else:
            metric.score_batch([warm_candidate], [warm_reference])
        shared_cache().clear()  # the warm-up's texts
        _synchronize(device)
        cpu_before, start = _cpu_times(), time.perf_counter()
        if in_opik:
            evaluation = _evaluate(metric, system_a, references)
            result["seconds"] = time.perf_counter() - start
            result["idle"] = _idle_share(cpu_before, _cpu_times())
        if case == "c":
            failed = sum(
                score.scoring_failed
                for test in evaluation.test_results
                for score in test.score_results
            )
            result["failed"] = failed
            batcher = metric.engine.batcher
            result["mean_batch"] = batcher.items_run / max(batcher.batches_run, 1)
            result["peak_rss_mib"] = _peak_rss_mib()  # (c)'s own peak, before (e) runs
            start = time.perf_counter()
            _evaluate(metric, system_b, references)
            result["seconds_e"] = time.perf_counter() - start
        elif not in_opik:
            scores = metric.score_batch(system_a, references)
            _synchronize(device)
            result["seconds"] = time.perf_counter() - start
            result["f1"] = [item[0].value for item in scores]  # type: ignore[assignment]
    result.setdefault("peak_rss_mib", _peak_rss_mib())
    if device.startswith("cuda"):
        import torch

        result["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return result


def sgemm_gflops(device: str = "cpu", size: int = 2048, repeats: int = 25) -> float:
    """The float32 matrix-multiply peak of ``device``, GFLOP/s.

    On a CPU, the best run of MKL's sgemm (``torch.mm``) and of oneDNN's packed product
    (what our encoders use on x86-64); on a GPU, the best run of ``torch.mm`` there at
    PyTorch's default precision (TF32 off, as the cases run), on 4x larger matrices.
    Best of many short runs, because a neighbour taking a core for a moment halves a run.
    """
    import torch

    from opik_semantic_metrics.models.packed_linear import PackedLinear, packing_supported

    on_gpu = torch.device(device).type == "cuda"
    if on_gpu:
        size *= 4
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    products = [lambda: torch.mm(a, b)]
    if not on_gpu and packing_supported(torch.float32):
        packed = PackedLinear(torch.nn.Linear(size, size, bias=False))
        products.append(lambda: packed(a))
    synchronize = torch.cuda.synchronize if on_gpu else lambda: None
    best = 0.0
    with torch.inference_mode():
        for product in products:
            product()
            for _ in range(repeats):
                synchronize()
                start = time.perf_counter()
                product()
                synchronize()
                best = max(best, 2 * size**3 / (time.perf_counter() - start) / 1e9)
    return best


def workload_gflop(texts: list[str]) -> float:
    """Useful encoder work for the distinct texts, in GFLOP (matmuls, no padding)."""
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    engine = BERTScoreEngine(_minilm(), 6, device="cpu")
    config = engine.encoder.model.config
    width, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    total = 0.0
    for encoded in engine.text_encoder.encode_many(list(dict.fromkeys(texts))):
        length = len(encoded.ids)
        # Q, K, V, output projections and the feed-forward pair, then QK^T and AV.
        total += layers * (length * (8 * width * width + 4 * width * inner) + 4 * length**2 * width)
    return total / 1e9


def run_fresh(script: str, arguments: list[str]) -> dict[str, float]:
    """Run a benchmark script in a fresh Python process; the JSON its last line prints."""
    command = [sys.executable, script, *arguments]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _spawn(case: str, args: argparse.Namespace, round_index: int) -> dict[str, float]:
    return run_fresh(
        __file__,
        [
            "--case", case, "--pairs", str(args.pairs), "--subset", str(args.subset),
            "--device", args.device, "--rotation", str(round_index),
        ],
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--subset", type=int, default=32, help="items for case (b)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--cases",
        default=ALL_CASES,
        help=f"which cases to run, e.g. 'acdh' (default {ALL_CASES!r}; a is needed)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run every case in this process, loading each model once (gpu_suite.sh)",
    )
    parser.add_argument(
        "--peak-repeats", type=int, default=25, help="timed runs of the matmul peak"
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--rotation", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case == "peak":
        print(json.dumps({"gflops": sgemm_gflops(args.device, repeats=args.peak_repeats)}))
        return
    if args.case:
        figures = run_case(args.case, args.pairs, args.subset, args.device, args.rotation)
        print(json.dumps(figures))
        return

    import torch

    cases = "".join(case for case in ALL_CASES if case in args.cases)
    if "a" not in cases or set(args.cases) - set(ALL_CASES):
        parser.error(f"--cases takes letters of {ALL_CASES!r} and must include a (the anchor)")
    references, system_a, system_b = workload(args.pairs)
    sys.path.insert(0, str(Path(__file__).parent))
    from minilm_shape import weights_of
    from suite_log import record

    record(
        STEP, "meta", pairs=args.pairs, subset=args.subset, device=args.device,
        weights=weights_of(_minilm()), in_process=args.in_process, cases=cases,
    )  # fmt: skip
    gflop = workload_gflop(system_a + references)
    # The second experiment encodes only its outputs: the references come from the cache.
    gflop_of = {case: gflop for case in cases} | {"e": workload_gflop(system_b)}
    record(STEP, "work", gflop=gflop_of)
    runs: dict[str, list[dict[str, float]]] = {case: [] for case in cases}
    peaks = []
    for round_index in range(args.rounds):
        # In one process, the order turns by one each round: no case always runs first.
        turn = round_index % len(cases) if args.in_process else 0
        for case in cases[turn:] + cases[:turn]:
            if args.in_process:
                figures = run_case(case, args.pairs, args.subset, args.device, round_index)
            else:
                figures = _spawn(case, args, round_index)
            runs[case].append(figures)
            record(STEP, "case", case=case, round=round_index, **figures)
            print(f"round {round_index + 1}: ({case}) done", file=sys.stderr)
        # The matmul peak each round, as the cases run (in a fresh process unless
        # --in-process): one measurement on a machine whose neighbours come and go can
        # fall to half the peak.
        if args.in_process:
            peaks.append(sgemm_gflops(args.device, repeats=args.peak_repeats))
        else:
            command = ["--case", "peak", "--device", args.device]
            peaks.append(
                run_fresh(__file__, [*command, "--peak-repeats", str(args.peak_repeats)])["gflops"]
            )
        record(STEP, "peak", gflops=peaks[-1])
    runs = {
        case: [run for run in case_runs if "missing" not in run] for case, case_runs in runs.items()
    }
    cases = "".join(case for case in cases if runs[case])

    def median(case: str, key: str = "seconds") -> float:
        return statistics.median(run[key] for run in runs[case])

    # (e) is timed in (c)'s process; (b) runs on --subset items.
    pairs_per_s = {
        case: (args.subset if case == "b" else args.pairs) / median(case)
        for case in cases
        if case not in "jkm"
    }
    if "c" in cases:
        pairs_per_s["e"] = args.pairs / median("c", "seconds_e")
    peak = max(peaks)
    labels = {
        "a": "bert_score BERTScorer.score, whole list",
        "b": f"Opik built-in BERTScore, per item ({args.subset} items)",
        "c": "ours, per item in Opik, 16 threads",
        "d": "ours, score_batch, whole list",
        "e": "ours, per item in Opik, 2nd experiment",
        "f": "ours, score_batch, dtype='fast'",
        "g": "ours, per item, 16 plain threads (no Opik)",
        "h": "Opik's engine alone (fixed scores), 16 thr.",
        "i": "(c) with Opik's message streamer off (diag.)",
        "l": "ours, per item in Opik, prepare() first (timed)",
    }
    print(
        f"\nBERTScore throughput, {args.pairs} caption pairs, all-MiniLM-L6-v2 L6, "
        f"device={args.device}, torch threads={torch.get_num_threads()}, "
        f"median of {args.rounds} rounds"
    )
    print(
        f"float32 matmul peak on {args.device} (best of {len(peaks)} rounds): "
        f"{peak:.0f} GFLOP/s; workload: {gflop:.1f} GFLOP of encoder work "
        f"({gflop_of['e']:.1f} in (e), whose references are cached; (f)'s bfloat16 work is "
        f"set against the float32 peak)\n"
    )
    print(f"{'case':<48} {'pairs/s':>8} {'x (a)':>7} {'GFLOP/s':>8} {'% peak':>7} {'RSS MiB':>8}")
    for case, label in labels.items():
        if case not in pairs_per_s:
            continue
        speed = pairs_per_s[case]
        rss = median("c" if case == "e" else case, "peak_rss_mib")
        gflops = gflop_of[case] * speed / args.pairs
        work = f"{gflops:8.1f} {100 * gflops / peak:6.0f}%" if case != "h" else f"{'-':>8} {'-':>7}"
        ratio = speed / pairs_per_s["a"]
        print(f"({case}) {label:<44} {speed:8.1f} {ratio:7.2f} {work} {rss:8.0f}")
    targets = [
        ("(c)/(a)", "c", "a", ".2f", ">= 1.0"),
        ("(l)/(a)", "l", "a", ".2f", ">= 1.2"),
        ("(d)/(a)", "d", "a", ".2f", ">= 1.3"),
        ("(c)/(b)", "c", "b", ".0f", ">= 40"),
    ]
    verdicts = [
        f"{name} {pairs_per_s[ours] / pairs_per_s[theirs]:{form}} ({goal})"
        for name, ours, theirs, form, goal in targets
        if ours in pairs_per_s and theirs in pairs_per_s
    ]
    if "c" in cases:
        rss_ratio = median("c", "peak_rss_mib") / median("a", "peak_rss_mib")
        verdicts.append(f"RSS (c)/(a) {rss_ratio:.2f} (<= 1.2)")
    print("\n" + "; ".join(verdicts))
    if args.device.startswith("cuda"):
        print(
            "peak GPU memory allocated (median MiB): "
            + ", ".join(
                f"({case}) {median(case, 'peak_gpu_mib'):.0f}" for case in "acd" if case in cases
            )
            + (" ((c) with (e))" if "c" in cases else "")
        )
    if "c" in cases:
        print(
            f"(c) mean micro-batch {median('c', 'mean_batch'):.1f} items; "
            f"failed scores {int(max(r['failed'] for r in runs['c']))}"
        )
    if "d" in cases and "f" in cases:
        f1_exact = torch.tensor(runs["d"][0]["f1"])
        f1_fast = torch.tensor(runs["f"][0]["f1"])
        print(f"fast mode max |F1 - F1 fp32| {(f1_fast - f1_exact).abs().max().item():.2e}")
    speeds_a = [args.pairs / run["seconds"] for run in runs["a"]]
    # Each case's per-round speeds: the process it ran in and the key of its time.
    per_round = {"c": "c", "d": "d", "e": "c", "f": "f", "g": "g", "i": "i", "l": "l"}
    for case, source in per_round.items():
        if source in cases:
            key = "seconds_e" if case == "e" else "seconds"
            speeds = [args.pairs / run[key] for run in runs[source]]
            ratios = " ".join(f"{speed / a:.2f}" for speed, a in zip(speeds, speeds_a, strict=True))
            print(f"({case})/(a) per round: {ratios}")
    if "l" in cases:
        print(
            f"(l) prepare {median('l', 'seconds_prepare'):.2f} s of {median('l'):.2f} s; mean "
            f"micro-batch {median('l', 'mean_batch'):.1f} items; failed scores "
            f"{int(max(r['failed'] for r in runs['l']))}"
        )
    idle = [f"({case}) {100 * median(case, 'idle'):.0f}%" for case in "cgil" if case in cases]
    if idle:
        print("CPU idle while running (median): " + ", ".join(idle))
    if "j" in cases:
        print(
            f"(j) a lone caller, one pair a call: {median('j', 'batcher_ms'):.1f} ms through "
            f"the micro-batcher, {median('j', 'caller_ms'):.1f} ms scored in the caller's "
            f"thread (median); per round: "
            + " ".join(f"{run['batcher_ms']:.1f}/{run['caller_ms']:.1f}" for run in runs["j"])
        )
    if "k" in cases:
        anchor = {size: args.pairs / median("k", f"seconds_{size}") for size in ANCHOR_BATCH_SIZES}
        print(
            "(k) bert_score's whole list by batch_size (median pairs/s, x its default 64): "
            + ", ".join(
                f"{size}: {speed:.1f} ({speed / anchor[64]:.2f})" for size, speed in anchor.items()
            )
        )
    if "m" in cases:
        peer = {size: args.pairs / median("m", f"seconds_{size}") for size in (64, 256)}
        line = "(m) torchmetrics' bert_score, whole list (median pairs/s, x (a)): " + ", ".join(
            f"batch {size}: {speed:.1f} ({speed / pairs_per_s['a']:.2f})"
            for size, speed in peer.items()
        )
        if "d" in cases:
            f1_peer = torch.tensor(runs["m"][0]["f1"])
            f1_ours = torch.tensor(runs["d"][0]["f1"])
            line += f"; max |F1 - ours (d)| {(f1_peer - f1_ours).abs().max().item():.1e}"
        print(line)
    # The suite (gpu_suite.sh) reads the JSON lines; this summary is for other readers.
    from suite_log import results_dir

    (results_dir() / "bertscore_throughput.json").write_text(
        json.dumps(
            {
                "pairs": args.pairs,
                "device": args.device,
                "peak_gflops": peak,
                "gflop": gflop_of,
                "pairs_per_s": pairs_per_s,
                "runs": runs,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
