"""BERTScore with bert_score's default model size: ours against bert_score's best call.

bert_score's default English model is roberta-large read at layer 17 (355M parameters);
this package's offline default is all-MiniLM-L6-v2 (22M). Time does not depend on the
weights' values, so the large encoder is built here, offline, from roberta-large's
configuration with random weights (seeded): 1024 wide, 16 heads, feed-forward 4096, a
50,265-entry vocabulary, 514 positions. Only its first 17 layers are built: both bert_score
(``get_model``) and this package (at loading) drop the layers above ``num_layers`` and never
run them. Its tokenizer is a RoBERTa-style byte-level BPE trained here on the workloads'
own texts (roberta-large's vocabulary cannot be had offline): it cuts this English into
about as many tokens as roberta-large's does (the printout gives the token counts), and
every id it gives is within the model's vocabulary.

Workloads (``--workload``):

  captions    1,000 caption pairs (``bertscore_throughput.py``'s deterministic captions);
  paragraphs  200 paragraph pairs of 300+ tokens: the human summaries of several RealSumm
              documents (``examples/data/realsumm``) joined, against one system's summaries
              of the same documents, cut to the model's limit.

Cases, each in a fresh process, interleaved over ``--rounds`` rounds (medians reported):
bert_score's ``BERTScorer.score`` on the whole list at each ``--bert-score-batch-sizes``
(its default is 64; the best of them is the anchor), and our ``BERTScoreEngine.score``
(what ``BERTScore.score_batch`` runs) at its default settings, in float32, and with
``--fast`` also in the fast mode. Every case scores one warm-up pair before the clock
starts. ``max dF1`` is each case's largest F1 difference from the anchor's: under
transformers 5 bert_score drops RoBERTa's prefix space, which this package keeps (see the
README's faithfulness table), so on the roberta-large shape it is not a rounding error.
GFLOP/s count the encoder's useful matmul work on the distinct texts (no padding),
set against the float32 matmul peak measured here (``bertscore_throughput.sgemm_gflops``).
With ``--in-process`` (what ``gpu_suite.sh`` runs) every case runs in this process, each
model loaded once (bert_score's scorer is reused across its batch sizes); every case's
figures are appended to ``large_encoder.jsonl`` as soon as it ends (``suite_log.py``).

    python benchmarks/large_encoder.py                           # roberta-large shape, CPU
    python benchmarks/large_encoder.py --encoder minilm --workload captions
    python benchmarks/large_encoder.py --encoder both      # the large shape, then MiniLM
    python benchmarks/large_encoder.py --captions 100 --paragraphs 10 --rounds 1  # subset
    python benchmarks/large_encoder.py --device cuda --fast --bert-score-batch-sizes 64,128,256
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bertscore_throughput import _minilm, _quiet, run_fresh, sgemm_gflops, workload
from suite_log import record

STEP = "large_encoder"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REALSUMM = Path(__file__).parents[1] / "examples" / "data" / "realsumm" / "realsumm_3systems.jsonl"

#: roberta-large's sizes (its Hub configuration), and bert_score's layer for it.
ROBERTA_LARGE = {
    "vocab_size": 50265,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "max_position_embeddings": 514,
    "type_vocab_size": 1,
    "layer_norm_eps": 1e-5,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
}
ROBERTA_LARGE_LAYER = 17
_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
#: Fewest tokens of a paragraph pair's reference, and most of either text (special
#: tokens included, as the limit counts them).
PARAGRAPH_MIN_TOKENS = 300
PARAGRAPH_MAX_TOKENS = 510


def _realsumm() -> list[dict[str, str]]:
    rows = [json.loads(line) for line in REALSUMM.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        for key in ("reference", "summary"):
            # RealSumm marks sentences with <t> ... </t>: plain text is what users score.
            row[key] = re.sub(r"\s+", " ", re.sub(r"</?t>", " ", row[key])).strip()
    return rows


def build_large_encoder(directory: Path, layers: int = ROBERTA_LARGE_LAYER) -> Path:
    """Write a roberta-large-shaped RoBERTa of ``layers`` layers (random, seeded) and a
    byte-level BPE tokenizer trained on the workloads' texts into ``directory``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    rows = _realsumm()
    references, system_a, system_b = workload(2000)
    corpus = [row[key] for row in rows for key in ("reference", "summary")]
    corpus += references + system_a + system_b
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=ROBERTA_LARGE["vocab_size"],
        special_tokens=_SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(corpus, trainer=trainer)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")), ("<s>", backend.token_to_id("<s>"))
    )
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=PARAGRAPH_MAX_TOKENS + 2,
    )
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(directory)
    backend.model.save(str(directory))  # vocab.json and merges.txt, for the slow class
    if len(tokenizer) > ROBERTA_LARGE["vocab_size"]:
        raise SystemExit(f"tokenizer of {len(tokenizer)} entries exceeds the vocabulary")
    config = RobertaConfig(num_hidden_layers=layers, **ROBERTA_LARGE)
    torch.manual_seed(0)
    model = RobertaModel(config, add_pooling_layer=False).eval()
    model.save_pretrained(directory)
    return directory


def paragraph_pairs(count: int, tokens) -> tuple[list[str], list[str]]:
    """``count`` (candidate, reference) paragraphs: several documents' human summaries
    joined (at least :data:`PARAGRAPH_MIN_TOKENS` tokens) against one system's summaries
    of the same documents; both cut at a sentence end to fit the model's limit."""
    rows = _realsumm()
    by_doc: dict[int, dict[str, str]] = {}
    for row in rows:
        by_doc.setdefault(int(row["doc_id"]), {"reference": row["reference"]})[row["system"]] = row[
            "summary"
        ]
    docs = sorted(by_doc)
    systems = sorted({str(row["system"]) for row in rows})
    rng = random.Random(0)
    candidates: list[str] = []
    references: list[str] = []
    seen: set[tuple[int, ...]] = set()
    while len(candidates) < count:
        system = systems[len(candidates) % len(systems)]
        chosen = rng.sample(docs, 8)
        reference = ""
        candidate = ""
        used = []
        for doc in chosen:
            longer = f"{reference} {by_doc[doc]['reference']}".strip()
            if tokens(longer) > PARAGRAPH_MAX_TOKENS:
                break
            reference, used = longer, [*used, doc]
            extra = f"{candidate} {by_doc[doc][system]}".strip()
            if tokens(extra) <= PARAGRAPH_MAX_TOKENS:
                candidate = extra
            if tokens(reference) >= PARAGRAPH_MIN_TOKENS:
                break
        key = (*used, systems.index(system))
        if tokens(reference) < PARAGRAPH_MIN_TOKENS or key in seen:
            continue
        seen.add(key)
        candidates.append(candidate)
        references.append(reference)
    return candidates, references


def _model(args: argparse.Namespace) -> tuple[str, int]:
    if args.encoder == "minilm":
        return _minilm(), 6
    return args.model_dir, args.layers


def _counter(model_dir: str):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return lambda text: len(tokenizer(text, truncation=True, max_length=512)["input_ids"])


#: Pairs and loaded scorers kept across the cases of one process (``--in-process``).
_KEPT: dict[tuple[object, ...], object] = {}


def pairs_of(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    model_dir, _ = _model(args)
    key = ("pairs", args.encoder, args.workload, model_dir, args.captions, args.paragraphs)
    if key not in _KEPT:
        if args.workload == "captions":
            references, candidates, _ = workload(args.captions)
            _KEPT[key] = (candidates, references)
        else:
            _KEPT[key] = paragraph_pairs(args.paragraphs, _counter(model_dir))
    return _KEPT[key]  # type: ignore[return-value]


def run_case(case: str, args: argparse.Namespace) -> dict[str, float]:
    """Time one case in this process."""
    import torch

    _quiet()
    model_dir, layer = _model(args)
    candidates, references = pairs_of(args)
    warm = (["A warm-up sentence."], ["A sentence to warm up."])
    synchronize = torch.cuda.synchronize if args.device.startswith("cuda") else lambda: None
    if case.startswith("bert_score/"):
        from bert_score import BERTScorer

        batch_size = int(case.split("/")[1])
        key = ("bert_score", model_dir, layer, args.device)
        if key not in _KEPT:
            _KEPT[key] = BERTScorer(model_type=model_dir, num_layers=layer, device=args.device)
        scorer = _KEPT[key]
        scorer.score(*warm, batch_size=batch_size)  # type: ignore[attr-defined]
        synchronize()
        start = time.perf_counter()
        _, _, f1 = scorer.score(candidates, references, batch_size=batch_size)  # type: ignore[attr-defined]
        synchronize()
        return {"seconds": time.perf_counter() - start, "f1": f1.tolist()}  # type: ignore[dict-item]
    from opik_semantic_metrics.batching.cache import EmbeddingCache
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    engine = BERTScoreEngine(
        model_dir,
        layer,
        device=args.device,
        dtype="fast" if case == "ours/fast" else None,
        cache=EmbeddingCache(0),
    )
    engine.score(*warm)
    synchronize()
    start = time.perf_counter()
    results = engine.score(candidates, references)
    synchronize()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "f1": [result.f1 for result in results]}  # type: ignore[dict-item]


def encoder_gflop(model_dir: str, texts: list[str]) -> tuple[float, float]:
    """The encoder's useful matmul work on the distinct texts (GFLOP, no padding) and
    their mean token count."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model_dir)
    width, inner = config.hidden_size, config.intermediate_size
    layers = config.num_hidden_layers
    count = _counter(model_dir)
    lengths = [count(text) for text in dict.fromkeys(texts)]
    total = sum(
        layers * (length * (8 * width * width + 4 * width * inner) + 4 * length**2 * width)
        for length in lengths
    )
    return total / 1e9, statistics.mean(lengths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--encoder",
        choices=["roberta-large-shape", "minilm", "both"],
        default="roberta-large-shape",
    )
    parser.add_argument("--workload", choices=["captions", "paragraphs", "both"], default="both")
    parser.add_argument("--captions", type=int, default=1000, help="caption pairs")
    parser.add_argument("--paragraphs", type=int, default=200, help="paragraph pairs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--fast", action="store_true", help="also time our dtype='fast'")
    parser.add_argument(
        "--bert-score-batch-sizes",
        default="16,32,64",
        help="bert_score's batch sizes to sweep (its default is 64)",
    )
    parser.add_argument(
        "--layers",
        type=int,
        default=ROBERTA_LARGE_LAYER,
        help="layers of the large encoder, read at the last (fewer only to develop)",
    )
    parser.add_argument("--model-dir", help="reuse a large encoder built before")
    parser.add_argument(
        "--in-process", action="store_true", help="every case in this process (gpu_suite.sh)"
    )
    parser.add_argument(
        "--peak-repeats", type=int, default=25, help="timed runs of the matmul peak"
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args)))
        return
    # The large shape first: its rows are what the suite cannot have from another step.
    encoders = ["roberta-large-shape", "minilm"] if args.encoder == "both" else [args.encoder]
    workloads = ["captions", "paragraphs"] if args.workload == "both" else [args.workload]
    built = None
    if "roberta-large-shape" in encoders and args.model_dir is None:
        built = Path(tempfile.mkdtemp(prefix="roberta-large-shape-"))
        started = time.perf_counter()
        args.model_dir = str(build_large_encoder(built, args.layers))
        print(
            f"built the roberta-large-shaped encoder ({args.layers} layers) in "
            f"{time.perf_counter() - started:.0f} s: {args.model_dir}",
            file=sys.stderr,
        )
    try:
        report(args, encoders, workloads)
    finally:
        if built is not None:
            shutil.rmtree(built, ignore_errors=True)


def report(args: argparse.Namespace, encoders: list[str], workloads: list[str]) -> None:
    batch_sizes = [int(size) for size in args.bert_score_batch_sizes.split(",")]
    cases = [f"bert_score/{size}" for size in batch_sizes] + ["ours/float32"]
    if args.fast:
        cases.append("ours/fast")
    peaks: list[float] = []
    rows = []
    from minilm_shape import weights_of

    record(STEP, "meta", device=args.device, weights=weights_of(_minilm()), layers=args.layers)
    for encoder in encoders:
        for name in workloads:
            common = [
                "--encoder", encoder, "--workload", name, "--device", args.device,
                "--captions", str(args.captions), "--paragraphs", str(args.paragraphs),
                "--layers", str(args.layers),
            ]  # fmt: skip
            if args.model_dir:
                common += ["--model-dir", args.model_dir]
            args.encoder, args.workload = encoder, name
            candidates, references = pairs_of(args)
            model_dir, layer = _model(args)
            gflop, mean_tokens = encoder_gflop(model_dir, candidates + references)
            record(
                STEP, "work", encoder=encoder, workload=name, layer=layer,
                gflop=gflop, mean_tokens=mean_tokens,
            )  # fmt: skip
            runs: dict[str, list[dict[str, float]]] = {case: [] for case in cases}
            for round_index in range(args.rounds):
                # Turned by one each round, so that no case always runs first.
                turn = round_index % len(cases)
                for case in cases[turn:] + cases[:turn]:
                    if args.in_process:
                        figures = run_case(case, args)
                    else:
                        figures = run_fresh(__file__, [*common, "--case", case])
                    runs[case].append(figures)
                    record(
                        STEP, "case", encoder=encoder, workload=name, case=case,
                        round=round_index, pairs=len(candidates), **figures,
                    )  # fmt: skip
                    print(f"{encoder} {name} round {round_index + 1}: {case}", file=sys.stderr)
                peaks.append(sgemm_gflops(args.device, repeats=args.peak_repeats))
                record(STEP, "peak", gflops=peaks[-1])
            rows.append((encoder, name, layer, len(candidates), gflop, mean_tokens, runs))
    peak = max(peaks)
    print(
        f"\nBERTScore whole list, ours against bert_score's best batch size, "
        f"device={args.device}, median of {args.rounds} rounds; float32 matmul peak "
        f"{peak:.0f} GFLOP/s (best of {len(peaks)})"
    )
    print(
        f"{'encoder':<20} {'workload':<11} {'pairs':>5} {'tokens':>6} {'case':<14} "
        f"{'pairs/s':>8} {'x best bs':>9} {'GFLOP/s':>8} {'% peak':>6} {'max dF1':>8}"
    )
    for encoder, name, layer, pairs, gflop, mean_tokens, runs in rows:
        speed = {
            case: pairs / statistics.median(r["seconds"] for r in run) for case, run in runs.items()
        }
        best = max((case for case in speed if case.startswith("bert_score/")), key=speed.get)
        anchor_f1 = runs[best][0]["f1"]
        for case, pairs_per_s in speed.items():
            gflops = gflop * pairs_per_s / pairs
            deviation = max(abs(a - b) for a, b in zip(runs[case][0]["f1"], anchor_f1, strict=True))
            mark = " (best)" if case == best else ""
            print(
                f"{encoder:<20} {name:<11} {pairs:>5} {mean_tokens:>6.0f} {case + mark:<14} "
                f"{pairs_per_s:8.2f} {pairs_per_s / speed[best]:9.2f} {gflops:8.1f} "
                f"{100 * gflops / peak:5.0f}% {deviation:8.1e}"
            )
        ratios = [
            f"{runs[best][i]['seconds'] / run['seconds']:.2f}"
            for i, run in enumerate(runs["ours/float32"])
        ]
        target = 1.3
        print(
            f"  {encoder} {name} (layer {layer}): ours/float32 vs bert_score's best "
            f"({best}) {speed['ours/float32'] / speed[best]:.2f} (target >= {target}); "
            f"per round: {' '.join(ratios)}"
        )
    from suite_log import results_dir

    (results_dir() / "large_encoder.json").write_text(
        json.dumps(
            {
                "device": args.device,
                "peak_gflops": peak,
                "rows": [
                    {"encoder": e, "workload": w, "layer": la, "pairs": p, "gflop": g, "runs": r}
                    for e, w, la, p, g, _, r in rows
                ],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
