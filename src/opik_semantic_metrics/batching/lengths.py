"""Length bucketing: which texts share a padded forward pass.

A batch of token sequences is padded to its longest, and the padding costs compute in
every layer that sees the padded layout (all of them for most models; attention, whose
cost grows with the square of the length, even for the BERT-family layers that
``models/unpadded.py`` runs on real tokens only). :func:`length_batches` sorts the
texts longest first and cuts a new batch at ``batch_size`` texts or where a text is
shorter than ``1 / MAX_LENGTH_RATIO`` of its batch's longest. With the ratio at 2, no
text's padding is longer than the text itself, so a batch carries fewer padded rows
than real ones.

Why cut by length as well as by count: Opik's micro-batches hold whatever items arrive
together, and a summarisation or QA dataset mixes one-line and paragraph-long texts,
whose padding would otherwise outweigh the real tokens (figures:
``docs/design/micro-batching.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn.utils.rnn import pad_sequence

#: Longest over shortest length a batch may hold (see the module docstring).
MAX_LENGTH_RATIO = 2.0


def length_batches(
    lengths: Sequence[int], batch_size: int, token_budget: int | None = None
) -> list[list[int]]:
    """Indices of items in batches of similar length, longest first.

    Each batch holds at most ``batch_size`` indices, no length in it is below
    ``1 / MAX_LENGTH_RATIO`` of its first (longest), and with a ``token_budget`` its
    padded size (rows times its longest length) stays within the budget, unless one item
    alone exceeds it. A budget sizes batches by work rather than by count: on a GPU, a
    batch of captions can then hold far more rows than a batch of paragraphs.

    Example:
        >>> length_batches([3, 9, 1, 7, 8], batch_size=2)
        [[1, 4], [3], [0], [2]]
        >>> length_batches([3, 9, 1, 7, 8], batch_size=64, token_budget=20)
        [[1, 4], [3], [0], [2]]
    """
    order = sorted(range(len(lengths)), key=lambda index: lengths[index], reverse=True)
    batches: list[list[int]] = []
    for index in order:
        batch = batches[-1] if batches else None
        if (
            batch is not None
            and len(batch) < batch_size
            and lengths[index] * MAX_LENGTH_RATIO >= lengths[batch[0]]
            and (token_budget is None or (len(batch) + 1) * lengths[batch[0]] <= token_budget)
        ):
            batch.append(index)
        else:
            batches.append([index])
    return batches


def padded_batch(
    id_lists: Sequence[Sequence[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids padded on the right to the longest, and the attention mask, on ``device``.

    On a GPU both are copied from pinned memory without waiting: the host goes on to the
    next batch while the copy and the forward pass run (PyTorch keeps a pinned block
    until the copy that reads it has run).

    Example:
        >>> ids, mask = padded_batch([[5, 6, 7], [8]], pad_id=0, device=torch.device("cpu"))
        >>> ids.tolist(), mask.tolist()
        ([[5, 6, 7], [8, 0, 0]], [[1, 1, 1], [1, 0, 0]])
    """
    ids = pad_sequence(
        [torch.tensor(row, dtype=torch.long) for row in id_lists],
        batch_first=True,
        padding_value=pad_id,
    )
    lengths = torch.tensor([len(row) for row in id_lists])
    mask = (torch.arange(ids.shape[1]) < lengths.unsqueeze(1)).long()
    if device.type == "cuda":
        return (
            ids.pin_memory().to(device, non_blocking=True),
            mask.pin_memory().to(device, non_blocking=True),
        )
    return ids.to(device), mask.to(device)
