"""Oracles of SemanticMatch's levels computed from sentence-transformers itself."""

from __future__ import annotations

import numpy as np


def sentence_transformers_word_f1(
    model, first: str, second: str, idf: dict[int, float] | None = None
) -> float:
    """Word level from sentence-transformers' token embeddings; pieces weigh ``idf[id]``
    (1 for every piece without it)."""

    def pieces(text: str) -> tuple[np.ndarray, np.ndarray]:
        ids = model.tokenizer(text)["input_ids"]
        tokens = model.tokenizer.convert_ids_to_tokens(ids)
        states = model.encode(text, output_value="token_embeddings").numpy()
        keep = [
            i
            for i, token in enumerate(tokens)
            if token not in model.tokenizer.all_special_tokens and token.lstrip("#").isalnum()
        ]
        vectors = states[keep]
        weights = np.array([1.0 if idf is None else idf[ids[i]] for i in keep])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), weights

    (a, a_weights), (b, b_weights) = pieces(first), pieces(second)
    sim = a @ b.T
    precision = (sim.max(axis=1) * a_weights).sum() / a_weights.sum()
    recall = (sim.max(axis=0) * b_weights).sum() / b_weights.sum()
    precision, recall = max(precision, 0.0), max(recall, 0.0)
    return float(2 * precision * recall / (precision + recall))
