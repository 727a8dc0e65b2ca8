"""Inverse document frequency of word pieces over a reference corpus, as bert_score.

For a corpus of ``M`` reference texts, a token id that occurs in ``df`` of them weighs
``idf = log((M + 1) / (df + 1))``; an id that never occurs weighs ``log(M + 1)``
(bert_score 0.3.13, ``get_idf_dict``). Special tokens occur in every text and so weigh 0.

idf is a corpus-level setting: fitted on one reference it gives every token weight 0
and undefined scores, which is why it is fitted on a dataset's references and never
per item.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class IdfTable:
    """idf weights of token ids, with the weight of ids never seen in the corpus.

    Example:
        >>> table = fit_idf([(1, 5, 2), (1, 6, 6, 2)])
        >>> round(table.weight(5), 4), round(table.weight(1), 4), round(table.weight(9), 4)
        (0.4055, 0.0, 1.0986)
        >>> [round(weight, 4) for weight in table.weigh(torch.tensor([5, 1, 9])).tolist()]
        [0.4055, 0.0, 1.0986]
    """

    num_documents: int
    weights: dict[int, float] = field(repr=False)

    @property
    def unseen_weight(self) -> float:
        """idf of an id that occurs in no reference: ``log(M + 1)``."""
        return math.log(self.num_documents + 1)

    def weight(self, token_id: int) -> float:
        """idf of one token id."""
        return self.weights.get(token_id, self.unseen_weight)

    def weigh(self, ids: torch.Tensor) -> torch.Tensor:
        """idf of each id of a 1-D tensor of ids, in one vectorised lookup (float32)."""
        known, values = self._lookup
        if known.numel() == 0:
            return torch.full(ids.shape, self.unseen_weight)
        position = torch.searchsorted(known, ids).clamp(max=known.numel() - 1)
        return torch.where(known[position] == ids, values[position], self.unseen_weight)

    @functools.cached_property
    def _lookup(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The fitted ids, sorted, and their weights, for :meth:`weigh`."""
        known = sorted(self.weights)
        weights = [self.weights[token_id] for token_id in known]
        return torch.tensor(known, dtype=torch.long), torch.tensor(weights, dtype=torch.float32)


def fit_idf(encoded_references: Iterable[Sequence[int]]) -> IdfTable:
    """Fit idf weights on the token ids of a reference corpus (one sequence per text)."""
    document_frequency: Counter[int] = Counter()
    num_documents = 0
    for ids in encoded_references:
        document_frequency.update(set(ids))
        num_documents += 1
    return idf_from_document_frequencies(document_frequency, num_documents)


def idf_from_document_frequencies(
    document_frequency: Mapping[int, int], num_documents: int
) -> IdfTable:
    """idf weights from counts made elsewhere: in how many of ``num_documents`` reference
    texts each token id occurs (counts of several parts of a corpus add up).

    Example:
        >>> table = idf_from_document_frequencies({1: 2, 5: 1}, 2)
        >>> round(table.weight(5), 4), table.weight(1)
        (0.4055, 0.0)
    """
    weights = {
        token_id: math.log((num_documents + 1) / (count + 1))
        for token_id, count in document_frequency.items()
    }
    return IdfTable(num_documents=num_documents, weights=weights)


def uniform_weights(ids: torch.Tensor, zero_ids: Sequence[int]) -> torch.Tensor:
    """Weights without idf: 1 for every id except ``zero_ids`` ([CLS] and [SEP]), 0.

    Example:
        >>> uniform_weights(torch.tensor([101, 5, 102]), [101, 102]).tolist()
        [0.0, 1.0, 0.0]
    """
    return (~torch.isin(ids, torch.tensor(zero_ids, dtype=ids.dtype))).float()
