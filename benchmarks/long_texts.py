"""Over-long outputs: the time and memory one ``score()`` call takes, text read in part or whole.

Every metric keeps a text's first tokens up to its model's limit. Since
``models/long_texts.py`` the tokenizer is given only a leading part of an over-long text,
long enough to fill that limit; before, it read all of it. This script scores one output
of 1 MB and 5 MB against a short reference with each metric, both ways, on three kinds of
runaway output (deterministic):

  captions:    caption words, a line break now and then (a leading part is found at once);
  stop words:  "no, it is not that, is it?" over and over: SemanticMatch finds no
               content word in the whole text (before the stop-word fallback its cleaned
               text was empty and the item was not scored; now it keeps every word);
  sparse:      a word and 200 spaces, over and over: 512 tokens need 100 KB.

  part:  as the metrics run;
  whole: the same metric with the leading part switched off (the private flag on its
         tokenizer set to False), which is how every text was read before.

Metrics: ``BERTScore`` and ``SemanticMatch`` on the packaged all-MiniLM-L6-v2, and
``COMET`` on the tiny random XCOMET checkpoint of the tests (``tests/fixtures/comet/
xcomet``): tokenizing a long text costs the same whatever the model's size. Each case runs
in a fresh process after a warm-up call; ``--rounds`` interleaved rounds, medians printed.
Memory is the growth of the process's peak resident set during the call.

    python benchmarks/long_texts.py
    python benchmarks/long_texts.py --sizes 1 --rounds 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
XCOMET = ROOT / "tests" / "fixtures" / "comet" / "xcomet"
METRICS = ("bertscore", "semantic_match", "comet")
CAPTION_WORDS = (
    "a", "man", "is", "riding", "a", "brown", "horse", "along", "the", "beach", "while", "two",
    "dogs", "run", "beside", "him", "in", "the", "late", "evening", "sun", "and", "children",
    "are", "playing", "with", "a", "red", "ball", "near", "the", "water",
)  # fmt: skip


KINDS = ("captions", "stop words", "sparse")


def long_output(kind: str, megabytes: float) -> str:
    """A runaway output of one kind, ``megabytes`` million characters long."""
    size = int(megabytes * 1_000_000)
    if kind == "stop words":
        return "no, it is not that, is it? " * (size // 27)
    if kind == "sparse":
        return (("word" + " " * 200) * (size // 204 + 1))[:size]
    rng = random.Random(0)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(CAPTION_WORDS) + ("\n" if rng.random() < 0.05 else "")
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_case(metric_name: str, mode: str, kind: str, megabytes: float) -> dict[str, float]:
    """One score() call on an over-long output, in this process."""
    from opik_semantic_metrics import COMET, BERTScore, SemanticMatch

    # The object that decides whether over-long texts are read by their leading part.
    if metric_name == "bertscore":
        metric = BERTScore(model="all-MiniLM-L6-v2", track=False)
        owner, switch = metric.engine.text_encoder, "_cuts_long_texts"
    elif metric_name == "semantic_match":
        metric = SemanticMatch(track=False)
        owner, switch = metric.engine.loaded, "cuts_long_texts"
    else:
        metric = COMET(model=str(XCOMET), track=False)
        owner, switch = metric.engine.loaded.model.encoder.tokenizer, "_cuts_long_texts"
    setattr(owner, switch, mode == "part")
    arguments = {"input": "A short source."} if metric_name == "comet" else {}
    metric.score(output="A warm-up output.", reference="A warm-up reference.", **arguments)
    text = long_output(kind, megabytes)
    before = _peak_rss_mib()
    start = time.perf_counter()
    result = metric.score(output=text, reference="A short reference.", **arguments)
    seconds = time.perf_counter() - start
    value = result[0].value if isinstance(result, list) else result.value
    return {"seconds": seconds, "rss_growth_mib": _peak_rss_mib() - before, "value": value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 5], help="MB")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        metric_name, mode, kind, megabytes = args.case
        print(json.dumps(run_case(metric_name, mode, kind, float(megabytes))))
        return

    cases = [
        (metric_name, mode, kind, size)
        for metric_name in METRICS
        for kind in args.kinds
        for size in args.sizes
        for mode in ("part", "whole")
    ]
    runs: dict[tuple[str, str, str, float], list[dict[str, float]]] = {c: [] for c in cases}
    for round_index in range(args.rounds):
        for case in cases:
            command = [sys.executable, __file__, "--case", *map(str, case)]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            runs[case].append(json.loads(output.strip().splitlines()[-1]))
        print(f"round {round_index + 1} done", file=sys.stderr)

    def median(case: tuple[str, str, str, float], key: str) -> float:
        return statistics.median(run[key] for run in runs[case])

    print(f"\nOne score() call on an over-long output, median of {args.rounds} rounds\n")
    print(f"{'metric':<15} {'output':<11} {'':>5} {'part s':>8} {'whole s':>8} {'x faster':>9} "
          f"{'part MiB':>9} {'whole MiB':>10} {'same score':>11}")  # fmt: skip
    for metric_name in METRICS:
        for kind, size in itertools.product(args.kinds, args.sizes):
            part = (metric_name, "part", kind, size)
            whole = (metric_name, "whole", kind, size)
            same = all(
                a["value"] == b["value"] for a, b in zip(runs[part], runs[whole], strict=True)
            )
            print(
                f"{metric_name:<15} {kind:<11} {size:>3g}MB {median(part, 'seconds'):8.3f} "
                f"{median(whole, 'seconds'):8.3f} "
                f"{median(whole, 'seconds') / median(part, 'seconds'):9.1f} "
                f"{median(part, 'rss_growth_mib'):9.0f} {median(whole, 'rss_growth_mib'):10.0f} "
                f"{'yes' if same else 'NO':>11}"
            )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
