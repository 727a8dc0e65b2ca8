"""length_batches: texts share a padded forward pass only with texts of similar length."""

from __future__ import annotations

import random

import torch

from opik_semantic_metrics.batching.cpu_parallel import map_longest_first
from opik_semantic_metrics.batching.lengths import MAX_LENGTH_RATIO, length_batches


def test_similar_lengths_are_cut_by_count_only():
    lengths = [14, 9, 17, 12, 10, 16, 11]
    assert length_batches(lengths, batch_size=3) == [[2, 5, 0], [3, 6, 4], [1]]


def test_a_paragraph_among_captions_gets_a_batch_of_its_own_length():
    # Sorted: 100, 90, 60 | 40 | 15, 14, 12 (each cut where a length falls below half).
    lengths = [100, 15, 12, 90, 14, 60, 40]
    assert length_batches(lengths, batch_size=64) == [[0, 3, 5], [6], [1, 4, 2]]


def test_every_index_once_and_padding_below_the_real_tokens():
    rng = random.Random(0)
    lengths = [rng.choice([rng.randint(5, 30), rng.randint(60, 400)]) for _ in range(500)]
    batches = length_batches(lengths, batch_size=16)
    assert sorted(index for batch in batches for index in batch) == list(range(500))
    for batch in batches:
        batch_lengths = [lengths[index] for index in batch]
        assert len(batch) <= 16
        assert max(batch_lengths) <= MAX_LENGTH_RATIO * min(batch_lengths)
        assert len(batch) * max(batch_lengths) < 2 * sum(batch_lengths)
    # Longest first, batch after batch.
    firsts = [lengths[batch[0]] for batch in batches]
    assert firsts == sorted(firsts, reverse=True)


def test_empty_input_gives_no_batches():
    assert length_batches([], batch_size=8) == []


def test_map_longest_first_runs_length_batches_and_answers_in_the_items_order():
    seen: list[list[str]] = []

    def upper(batch: list[str]) -> list[str]:
        seen.append(batch)
        return [text.upper() for text in batch]

    texts = ["a cat", "a long paragraph about a cat on a mat", "a dog", "two cats"]
    result = map_longest_first(upper, texts, batch_size=8, length=len, device=torch.device("meta"))
    assert result == [text.upper() for text in texts]
    assert seen == [[texts[1]], [texts[3], texts[0], texts[2]]]


def test_a_token_budget_bounds_each_batch_padded_size():
    rng = random.Random(1)
    lengths = [rng.choice([rng.randint(5, 30), rng.randint(60, 400)]) for _ in range(500)]
    batches = length_batches(lengths, batch_size=1000, token_budget=2048)
    assert sorted(index for batch in batches for index in batch) == list(range(500))
    for batch in batches:
        assert len(batch) * lengths[batch[0]] <= 2048
        assert lengths[batch[0]] == max(lengths[index] for index in batch)
    # Captions fill a batch with many more rows than paragraphs do.
    assert max(len(batch) for batch in batches if lengths[batch[0]] <= 30) >= 2048 // 30
    assert max(len(batch) for batch in batches if lengths[batch[0]] > 200) <= 2048 // 200


def test_an_item_longer_than_the_budget_runs_alone():
    assert length_batches([600, 10, 700], batch_size=8, token_budget=512) == [[2], [0], [1]]
