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


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of items in batches of similar length, longest first.

    Each batch holds at most ``batch_size`` indices, and no length in it is below
    ``1 / MAX_LENGTH_RATIO`` of its first (longest).

    Example:
        >>> length_batches([3, 9, 1, 7, 8], batch_size=2)
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
        ):
            batch.append(index)
        else:
            batches.append([index])
    return batches


def padded_batch(
    id_lists: Sequence[Sequence[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids padded on the right to the longest, and the attention mask, on ``device``.

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
    return ids.to(device), mask.to(device)
