"""What BERTScore gives for one candidate, and the token matches that explain it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenMatch:
    """One candidate token and the reference token it matched best.

    Attributes:
        candidate_token, reference_token: Readable token strings.
        similarity: Their cosine similarity (raw, not rescaled).
    """

    candidate_token: str
    reference_token: str
    similarity: float


@dataclass(frozen=True)
class BERTScoreResult:
    """BERTScore of one candidate against its reference(s).

    With several references each of P, R and F1 is the maximum over the references
    (bert_score's rule), so the three may come from different references.

    Attributes:
        precision, recall, f1: The scores (rescaled when the engine rescales).
        candidate_truncated: The candidate was longer than the model's limit and was cut.
        reference_truncated: At least one reference was cut.
        candidate_empty: The candidate had no tokens (scores are 0).
        reference_empty: The best-F1 reference had no tokens (scores are 0).
        opposite_signs: Against the best-F1 reference, the raw P and R had opposite signs,
            so its raw F1 is 0 where bert_score's ``2PR / (P + R)`` is unbounded
            (``greedy.py``).
        best_reference: Index of the reference with the highest F1.
        candidate_unknown_tokens, reference_unknown_tokens: How many tokens of the
            candidate and of the best-F1 reference the tokenizer could only read as its
            unknown token (``[UNK]``): the model cannot tell such words apart.
        best_match, worst_match: The candidate's best- and worst-matched tokens against
            the best reference; ``None`` when the candidate or that reference is empty, or
            when every candidate token weighs 0 under idf.
    """

    precision: float
    recall: float
    f1: float
    candidate_truncated: bool
    reference_truncated: bool
    candidate_empty: bool
    reference_empty: bool
    opposite_signs: bool
    best_reference: int
    candidate_unknown_tokens: int
    reference_unknown_tokens: int
    best_match: TokenMatch | None
    worst_match: TokenMatch | None
