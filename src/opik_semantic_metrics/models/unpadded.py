"""BERT-family encoders run on their real tokens only, without padding.

A batch of texts of different lengths is padded to its longest text, and transformers'
``BertModel`` runs every layer on every padded position. Nearly all of an encoder's
work is in its linear layers, which act on each token by itself, so the padded rows are
pure waste: 21% more rows than real tokens in the 8-item micro-batches that
BERTScore's batcher forms from Opik's per-item calls on
``benchmarks/bertscore_throughput.py``'s captions (lengths 8 to 21 tokens, in the order
they arrive).

:func:`unpadded_hidden_states` runs the model's own modules in the model's own order
on a ``(tokens, width)`` matrix of the real tokens; only the attention product, which
mixes the tokens of one text, puts the rows back into a padded ``(batch, heads, length,
head size)`` layout and takes them out again. With ``x`` the real tokens' hidden states
and ``mask`` the padding mask, each layer computes (transformers' BERT, in eval mode)::

    q, k, v = query(x), key(x), value(x)                  # per head: x W + b
    a = softmax(q k^T / sqrt(head size) + mask) v           # per text, padded keys masked
    h = LayerNorm(dense(a) + x)                              # attention output
    x = LayerNorm(output.dense(intermediate(h)) + h)         # feed-forward (GELU inside)

The embeddings are the model's own module on the padded ids (so RoBERTa's position ids,
counted from its padding index, are its own). The real tokens' hidden states are those
of the model itself, not an approximation (the same operations on the same rows; on
MiniLM they came out identical to the last bit); padded positions come back as zeros
instead of the values transformers computes there, which nobody reads. Taking the rows
out and putting them back costs about 4% of a pass, so a batch with less padding than
:data:`MIN_PADDED_SHARE` runs through the model as it is (:func:`pays_to_unpad`).

Used only where it is known to hold (:func:`supports_unpadded`): an exact ``BertModel``,
``RobertaModel`` or ``XLMRobertaModel`` (the families of bert_score's default models and
of all-MiniLM-L6-v2) with absolute positions and no decoder, whose output on a probe
batch of two texts of different lengths equals the model's own. Anything else runs
through transformers as before.

Measured on the 2-core machine of the benchmark (MiniLM, float32): one thread, batches of
16 texts of random lengths 8 to 21 tokens, 4.7 instead of 5.9 ms of CPU a text; the
benchmark's case (c), 2,000 items through Opik with 16 threads, alternated runs: 12.5 and
13.0 s against 13.5 and 15.1 s, its encoder's CPU time 16.5 s against 18.5 s. Whole
lists (case d), sorted by length before batching, hardly pad and run as before.
"""

from __future__ import annotations

import torch

#: The model classes (by name) whose layers :func:`unpadded_hidden_states` knows.
UNPADDED_MODEL_CLASSES = frozenset({"BertModel", "RobertaModel", "XLMRobertaModel"})
#: Least share of padded positions in a batch for which running without padding pays:
#: taking the rows out and putting them back (a concatenation, zero fills, index copies)
#: cost about 4% of a pass's CPU time, profiled on MiniLM with 64 texts of 15 tokens.
MIN_PADDED_SHARE = 0.05


def row_count(tokens: int) -> int:
    """Rows the linear layers run on for ``tokens`` real tokens: rounded up to five
    significant bits, 16 row counts an octave (at most 1/16 more rows; 232 for 230).

    oneDNN and PyTorch's ideep layer keep compiled kernels for every row count they
    see, about 0.6 MB each, up to 1,024 of them: exact token counts of micro-batches
    (hundreds of distinct values) grew a 2,000-item run by 90 MB, rounded ones do not.
    """
    step = 1 << max(0, tokens.bit_length() - 5)
    return -(-tokens // step) * step


def pays_to_unpad(attention_mask: torch.Tensor) -> bool:
    """Whether a batch has enough padding (:data:`MIN_PADDED_SHARE`) to run without it."""
    padded = attention_mask.numel() - int(attention_mask.sum())
    return padded > MIN_PADDED_SHARE * attention_mask.numel()


def unpadded_hidden_states(
    model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor
) -> torch.Tensor:
    """The last hidden states of a BERT-family ``model``, computed on real tokens only.

    Args:
        model: A model :func:`supports_unpadded` accepts, in eval mode; its layers above
            the wanted one may have been dropped.
        input_ids: ``(batch, length)`` token ids, padded with the model's padding id.
        attention_mask: ``(batch, length)``, 1 for real tokens and 0 for padding.

    Returns:
        ``(batch, length, width)``: ``res[b, t]`` = hidden state of token ``t`` of text
        ``b``; zeros at padded positions.
    """
    hidden = model.embeddings(input_ids=input_ids)
    batch, length, width = hidden.shape
    slots = batch * length
    real = attention_mask.reshape(-1).nonzero().squeeze(1)  # slots of the real tokens
    # Spare rows round the row count up (see row_count); they read slot 0 and are written
    # to a scratch slot past the end, which nothing reads.
    spare = row_count(real.numel()) - real.numel()
    gather = torch.cat((real, real.new_zeros(spare)))
    scatter = torch.cat((real, real.new_full((spare,), slots)))
    states = hidden.reshape(slots, width).index_select(0, gather)
    key_mask = attention_mask.bool()[:, None, None, :]  # (batch, 1, 1, length)
    for layer in model.encoder.layer:
        attention = layer.attention.self
        heads, head_size = attention.num_attention_heads, attention.attention_head_size
        projected = torch.cat(
            (attention.query(states), attention.key(states), attention.value(states)), dim=1
        )
        padded = projected.new_zeros(slots + 1, 3 * width).index_copy_(0, scatter, projected)
        query, key, value = (
            padded[:slots].view(batch, length, 3, heads, head_size).permute(2, 0, 3, 1, 4)
        )
        mixed = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=key_mask, scale=head_size**-0.5
        )
        mixed = mixed.transpose(1, 2).reshape(slots, width).index_select(0, gather)
        attended = layer.attention.output
        states_after_attention = attended.LayerNorm(attended.dense(mixed) + states)
        feed_forward = layer.output.dense(layer.intermediate(states_after_attention))
        states = layer.output.LayerNorm(feed_forward + states_after_attention)
    output = states.new_zeros(slots + 1, width).index_copy_(0, scatter, states)
    return output[:slots].view(batch, length, width)


def supports_unpadded(model: torch.nn.Module) -> bool:
    """Whether :func:`unpadded_hidden_states` gives ``model``'s own last hidden states.

    Checks the class and configuration, then a probe batch of two texts of different
    lengths against the model's own output (float32 within 1e-5, half types within
    5e-2).
    """
    config = getattr(model, "config", None)
    if type(model).__name__ not in UNPADDED_MODEL_CLASSES or config is None:
        return False
    if getattr(config, "is_decoder", False) or model.training:
        return False
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return False
    parameter = next(model.parameters())
    pad_id = config.pad_token_id if config.pad_token_id is not None else 0
    # Ids past the special tokens; the shorter text is padded with the model's padding id.
    ids = torch.arange(5, 12, device=parameter.device) % config.vocab_size
    input_ids = torch.stack((ids, ids.flip(0)))
    input_ids[1, 4:] = pad_id
    mask = torch.ones_like(input_ids)
    mask[1, 4:] = 0
    with torch.inference_mode():
        expected = model(input_ids=input_ids, attention_mask=mask)[0]
        try:
            got = unpadded_hidden_states(model, input_ids, mask)
        except (AttributeError, RuntimeError, TypeError):
            return False
    tolerance = 1e-5 if parameter.dtype == torch.float32 else 5e-2
    real = mask.bool()
    return torch.allclose(got[real].float(), expected[real].float(), rtol=tolerance, atol=tolerance)
