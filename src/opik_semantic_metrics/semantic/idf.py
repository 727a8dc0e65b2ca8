"""Smoothed inverse document frequency of word pieces over a reference corpus.

For a corpus of ``N`` reference texts (a reference given as a list of strings is one
text, its parts joined), a word piece of the model's own tokenizer that occurs in ``df``
of them weighs::

    idf = log((N + 1) / (df + 1)) + 1

(the smoothed idf of the layered semantic score's recipe, also scikit-learn's
``TfidfVectorizer(smooth_idf=True)``).
A piece never seen weighs ``log(N + 1) + 1``, the same formula with ``df = 0``, so an
empty corpus (no fit) weighs every piece 1: plain, unweighted matching. This is
bert_score's idf plus one, so the counting is
:func:`opik_semantic_metrics.bertscore.idf.fit_idf`'s; the ``+ 1`` keeps a piece that
occurs in every reference at weight 1 instead of 0, so no text is left without weight.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from opik_semantic_metrics.bertscore.idf import IdfTable, fit_idf
from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.inputs import as_whole_number, is_finite_number, is_real_number


@dataclass(frozen=True)
class SmoothedIdf:
    """Smoothed idf weights of token ids.

    Attributes:
        table: bert_score-style weights ``log((N + 1) / (df + 1))`` of the corpus's ids.

    Example:
        >>> idf = SmoothedIdf.fit([(7, 8), (7, 9), (7,)])
        >>> round(idf.weight(7), 4), round(idf.weight(8), 4), round(idf.weight(5), 4)
        (1.0, 1.6931, 2.3863)
    """

    table: IdfTable

    @classmethod
    def fit(cls, token_ids: Iterable[Sequence[int]]) -> SmoothedIdf:
        """Fit on the token ids of a corpus, one sequence per reference text."""
        return cls(fit_idf(token_ids))

    @classmethod
    def uniform(cls) -> SmoothedIdf:
        """The weights of an empty corpus: 1 for every id."""
        return cls(IdfTable(num_documents=0, weights={}))

    @property
    def num_documents(self) -> int:
        """``N``, the number of reference texts fitted on."""
        return self.table.num_documents

    def weight(self, token_id: int) -> float:
        """The smoothed idf of one token id."""
        return self.table.weight(token_id) + 1.0

    def weigh(self, ids: torch.Tensor) -> torch.Tensor:
        """The smoothed idf of each id of a 1-D tensor of ids, in one lookup (float32).

        Example:
            >>> weights = SmoothedIdf.fit([(7, 8), (7, 9), (7,)]).weigh(torch.tensor([7, 5]))
            >>> [round(weight, 4) for weight in weights.tolist()]
            [1.0, 2.3863]
        """
        return self.table.weigh(ids) + 1.0

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form: ``N`` and the weights of the ids seen (exact round trip)."""
        weights = {str(token_id): weight for token_id, weight in self.table.weights.items()}
        return {"num_documents": self.num_documents, "weights": weights}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> SmoothedIdf:
        """Inverse of :meth:`to_json`."""
        raw = data["weights"]
        if not isinstance(raw, dict):
            raise ValueError("Expected `weights` to be a JSON object of token id -> weight.")
        num_documents = as_whole_number(data["num_documents"])
        if num_documents is None:
            raise ValueError("Expected `num_documents` to be an integer.")
        if not 0 <= num_documents < 2**63:
            # No fit counts 2**63 references; past 1e308, (N + 1) / 2 overflows a float.
            raise ValueError(
                f"Expected `num_documents` in [0, 2**63), got {shown(num_documents, 40)}."
            )
        if not all(_is_token_id(token_id) for token_id in raw):
            raise ValueError("Expected every token id to be a non-negative 64-bit integer.")
        if not all(is_real_number(weight) for weight in raw.values()):
            raise ValueError("Expected every idf weight to be a number.")
        # log((N + 1) / (df + 1)) with 1 <= df <= N lies in [0, log((N + 1) / 2)], so a
        # table with weights needs N >= 1. A weight outside that range no fit writes, and
        # an overflowing one would turn scores into NaN.
        highest = math.log((num_documents + 1) / 2) if num_documents else -1.0
        if not all(
            is_finite_number(weight) and 0.0 <= weight <= highest for weight in raw.values()
        ):
            raise ValueError(
                f"Expected every idf weight in [0, log((N + 1) / 2)] with N = {num_documents}."
            )
        weights = {int(token_id): float(weight) for token_id, weight in raw.items()}
        return cls(IdfTable(num_documents=num_documents, weights=weights))


def _is_token_id(key: str) -> bool:
    """Whether a JSON key is a token id: ASCII digits of a value that fits int64."""
    return key.isascii() and key.isdigit() and int(key) < 2**63
