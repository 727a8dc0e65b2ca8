"""A model's tokenizer: loaded, checked to belong to its model, and its token limit.

A tokenizer that cannot read words, or that makes ids the model has no embedding for,
would fail or mislead on every item; both are refused when the model is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.models.sources import ModelSource, local_files_only, model_unavailable

#: Tokenizers without a real limit report this sentinel (transformers' VERY_LARGE_INTEGER).
_UNBOUNDED_LENGTH = 1_000_000
#: The length used where a tokenizer reports no limit: the position table of BERT-size models.
FALLBACK_MAX_LENGTH = 512


def check_tokenizer_has_words(
    vocabulary: Iterable[str], special_tokens: Iterable[str], location: object
) -> None:
    """Refuse a tokenizer whose vocabulary is its special tokens alone.

    transformers 5 builds one, without an error, from a model directory that lacks its
    vocabulary file: every word then reads as the unknown token, and a score compares
    nothing but unknown tokens (BERTScore gave 0.99 to two different sentences).

    Raises:
        ModelUnavailableError: Only special tokens; names ``location``.
    """
    if set(vocabulary) <= set(special_tokens):
        raise ModelUnavailableError(
            f"The tokenizer in {location} has no vocabulary, only special tokens: its "
            "vocabulary file (tokenizer.json, vocab.txt, sentencepiece.bpe.model, ...) is "
            "missing."
        )


def check_token_ids_fit(vocabulary: dict[str, int], embedding_rows: int, what: str) -> None:
    """Refuse a tokenizer with token ids past the model's embedding table.

    Every text holding such a token would fail with an IndexError, item after item.

    Raises:
        ModelUnavailableError: An id at or past ``embedding_rows``; names ``what``.
    """
    highest = max(vocabulary.values(), default=-1)
    if highest >= embedding_rows:
        raise ModelUnavailableError(
            f"The tokenizer of {what} has token ids up to {highest}, but the model has "
            f"{embedding_rows} token embeddings: they do not belong together (config.json's "
            "vocab_size, or the tokenizer files of another model)."
        )


def position_capacity(model: torch.nn.Module) -> int:
    """How many tokens a text may have for the model's table of absolute positions.

    RoBERTa-style tables start counting after the padding index (``padding_idx + 1``),
    so 514 rows hold 512 tokens. A tokenizer limit above the table (or none, read as 512)
    failed on long texts with a size mismatch or an index error.
    """
    embeddings = getattr(model, "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    if not isinstance(positions, torch.nn.Embedding):
        return _UNBOUNDED_LENGTH
    first = 0 if positions.padding_idx is None else positions.padding_idx + 1
    return len(positions.weight) - first


def load_tokenizer(
    source: ModelSource, use_fast_tokenizer: bool, trust_remote_code: bool
) -> PreTrainedTokenizerBase:
    """The tokenizer of a model, padding on the right.

    Raises:
        ModelUnavailableError: Its files cannot be had, or cannot be read as a tokenizer.
    """
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            source.location,
            use_fast=use_fast_tokenizer,
            trust_remote_code=trust_remote_code,
            local_files_only=local_files_only(source.location),
        )
    # Its JSON files were read by check_model_files when the configuration was; what
    # fails here is a file transformers or the tokenizers library cannot use, in their
    # own words: OSError, ValueError, TypeError (transformers 4 opens a missing vocabulary
    # file's path, None), or the bare Exception of the tokenizers library
    # ("data did not match any variant of untagged enum ModelWrapper").
    except Exception as error:
        raise model_unavailable(source, error) from error
    # Every engine reads a text's tokens as the first positions of its row; decoder
    # embedding models (Qwen3-Embedding, ...) ship tokenizers that pad on the left.
    tokenizer.padding_side = "right"
    return tokenizer


def token_limit(tokenizer: Any, model: torch.nn.Module) -> int:
    """Most tokens a text may have, special tokens included: the tokenizer's limit (or
    :data:`FALLBACK_MAX_LENGTH` where it has none), at most the model's position table."""
    max_length = tokenizer.model_max_length
    if max_length is None or max_length > _UNBOUNDED_LENGTH:
        max_length = FALLBACK_MAX_LENGTH
    return int(min(max_length, position_capacity(model)))
