"""Score generated captions against several reference captions each, through Opik.

A captioning evaluation usually has several human references per image: BERTScore takes
the best of them per score, as bert_score does. Runs offline on the packaged MiniLM.

    python examples/captioning/score_captions.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")

import opik
from transformers.utils import logging as transformers_logging

from opik_semantic_metrics import BERTScore

# Captions of three images: a model's caption and the human references
# (STS Benchmark `images` sentences, PASCAL VOC-2008 descriptions, CC BY-SA 4.0).
IMAGES = [
    {
        "image": "hard_hat.jpg",
        "caption": "A man in a helmet dances.",
        "references": ["A man with a hard hat is dancing.", "A man wearing a hard hat is dancing."],
    },
    {
        "image": "horse.jpg",
        "caption": "A kid on a horse.",
        "references": ["A young child is riding a horse.", "A child is riding a horse."],
    },
    {
        "image": "dog_flowers.jpg",
        "caption": "A dog among flowers.",
        "references": [
            "A black dog standing in front of yellow flowers.",
            "A black and white dog standing in a field of yellow flowers.",
        ],
    },
]


def main() -> None:
    transformers_logging.disable_progress_bar()
    metric = BERTScore(model="all-MiniLM-L6-v2", track=False)
    result = opik.evaluate_on_dict_items(
        items=IMAGES,
        task=lambda item: {"output": item["caption"], "reference": item["references"]},
        scoring_metrics=[metric],
    )
    for test in result.test_results:
        f1 = test.score_results[0]
        item = test.test_case.dataset_item_content
        best = item["references"][f1.metadata["best_reference"]]
        print(f"{item['image']:>16}  F1 {f1.value:.3f}  {item['caption']!r} ~ {best!r}")


if __name__ == "__main__":
    main()
