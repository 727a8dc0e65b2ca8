"""The benchmarks' caption workload: deterministic caption-length pairs, two systems' outputs.

Its own module so that the throughput benchmark and the stand-in MiniLM's tokenizer
(``minilm_shape.py``) both read it without importing each other.
"""

from __future__ import annotations

import random

SUBJECTS = [
    "a man", "a woman", "a young boy", "a little girl", "two children", "an old man",
    "a black dog", "a brown horse", "a white cat", "a group of people", "a cyclist",
    "a skateboarder", "three friends", "a chef", "a soccer player", "a street musician",
]  # fmt: skip
ACTIONS = [
    "is riding", "is walking along", "is standing near", "is playing beside",
    "is sitting on", "is running across", "is looking at", "is jumping over",
    "is painting", "is cleaning", "is climbing", "is resting under",
]  # fmt: skip
OBJECTS = [
    "a red bicycle", "the wooden fence", "a small boat", "the old bridge", "a park bench",
    "a tall tree", "the city fountain", "a sandy beach", "a snowy hill", "the kitchen table",
    "a busy market", "a green field", "the train station", "a stone wall",
]  # fmt: skip
PLACES = [
    "", " in the rain", " at sunset", " on a sunny day", " in the snow", " at night",
    " near the river", " in a crowded street", " next to a lake", " in the morning",
]  # fmt: skip
SYNONYMS = {
    "a man": "a guy", "a woman": "a lady", "a young boy": "a boy", "a little girl": "a girl",
    "two children": "two kids", "is riding": "rides", "is walking along": "walks along",
    "is standing near": "stands next to", "is sitting on": "sits on", "a black dog": "a dog",
    "is running across": "runs across", "is looking at": "watches", "a tall tree": "a tree",
    "a small boat": "a boat", "a park bench": "a bench", "at sunset": "in the evening",
}  # fmt: skip


def _caption(rng: random.Random) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(ACTIONS)} {rng.choice(OBJECTS)}{rng.choice(PLACES)}."
    ).capitalize()


def _paraphrase(caption: str, rng: random.Random) -> str:
    text = caption.lower()
    for phrase, synonym in SYNONYMS.items():
        if phrase in text and rng.random() < 0.7:
            text = text.replace(phrase, synonym)
    if rng.random() < 0.3:
        text = text.rstrip(".") + rng.choice(PLACES) + "."
    return text.capitalize()


def workload(pairs: int, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """References, system A's outputs and system B's outputs: distinct, caption-length."""
    rng = random.Random(seed)
    references: list[str] = []
    seen: set[str] = set()
    while len(references) < pairs:
        caption = _caption(rng)
        if caption not in seen:
            seen.add(caption)
            references.append(caption)
    system_a = [
        _paraphrase(text, rng) if rng.random() < 0.8 else _caption(rng) for text in references
    ]
    system_b = [
        _paraphrase(text, rng) if rng.random() < 0.6 else _caption(rng) for text in references
    ]
    return references, system_a, system_b
