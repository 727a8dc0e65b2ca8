"""BERTScore's token embedder: the model and its bert_score-faithful tokenization, turning
texts into L2-normalised token embeddings (at one layer, or at every layer for baselines)
and token weights.

:class:`TokenEmbedder` is what a
:class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine` holds (the encoder
engines' skeleton, ``batching/engine.py``, reads its cache namespace and uncached
encoding); the engine owns the cache, the batching and the idf table.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.batching.lengths import padded_batch
from opik_semantic_metrics.bertscore.idf import IdfTable, uniform_weights
from opik_semantic_metrics.bertscore.tokenize import EncodedText, TextEncoder
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.layers import hidden_size
from opik_semantic_metrics.models.loading import load_encoder

Reference = str | Sequence[str]


@dataclass(frozen=True)
class TextEmbedding:
    """A text's token ids, L2-normalised token embeddings ``(length, dim)`` and weights."""

    encoded: EncodedText
    embeddings: torch.Tensor
    weights: torch.Tensor


class TokenEmbedder:
    """A model at one layer and its bert_score-faithful tokenization.

    Build it with :meth:`load`. What it computes depends on the model and the layer only:
    the forward batches it runs in and the idf table its weights come from are the
    caller's.

    Attributes:
        encoder: The shared model and tokenizer (one copy per process).
        text_encoder: bert_score-faithful tokenization for this model.

    Example:
        >>> from opik_semantic_metrics.batching.forward import ForwardBatches
        >>> embedder = TokenEmbedder.load("all-MiniLM-L6-v2", 6, device=torch.device("cpu"))
        >>> [(encoded, embeddings)] = embedder.encode_uncached(
        ...     ["A cat."], ForwardBatches(8, torch.device("cpu"))
        ... )
        >>> encoded.ids, tuple(embeddings.shape)
        ((101, 1037, 4937, 1012, 102), (5, 384))
    """

    def __init__(self, encoder: LoadedEncoder) -> None:
        self.encoder = encoder
        self.text_encoder = TextEncoder(
            encoder.tokenizer, encoder.max_length, encoder.tokenizer_lock
        )

    @classmethod
    def load(
        cls,
        model: str,
        layer: int,
        *,
        device: torch.device,
        dtype: torch.dtype | None = None,
        use_fast_tokenizer: bool = False,
        trust_remote_code: bool = False,
    ) -> TokenEmbedder:
        """The embedder of ``model`` at ``layer`` (its weights loaded once per process).

        Raises:
            ModelUnavailableError: The model cannot be had.
            ValueError: As :func:`~opik_semantic_metrics.models.loading.load_encoder`.
        """
        return cls(
            load_encoder(
                model,
                layer,
                device=device,
                dtype=dtype,
                use_fast_tokenizer=use_fast_tokenizer,
                trust_remote_code=trust_remote_code,
            )
        )

    @property
    def cache_namespace(self) -> tuple[object, str]:
        """What a cached text's ids and embeddings depend on besides the text."""
        return (self.encoder.cache_key, "bertscore-token-embeddings")

    def encode_uncached(
        self, texts: list[str], batches: ForwardBatches
    ) -> list[tuple[EncodedText, torch.Tensor]]:
        """Token ids and token embeddings ``(length, dim)`` of each text, in order."""
        encoded = self.text_encoder.encode_many(texts)
        embeddings = self.forward([item.ids for item in encoded], batches)
        return list(zip(encoded, embeddings, strict=True))

    def weights(
        self, encoded: Sequence[EncodedText], idf_table: IdfTable | None
    ) -> list[torch.Tensor]:
        """Token weights of each text, looked up for all their tokens at once: from
        ``idf_table``, or uniform (bert_score's weights without idf) where it is ``None``."""
        if not encoded:
            return []
        ids = torch.tensor(list(itertools.chain.from_iterable(item.ids for item in encoded)))
        if idf_table is not None:
            weights = idf_table.weigh(ids)
        else:
            tokenizer = self.encoder.tokenizer
            # bert_score zeroes exactly these two ids when idf is off (GPT-2 has neither).
            special = [tokenizer.cls_token_id, tokenizer.sep_token_id]
            weights = uniform_weights(ids, [token for token in special if token is not None])
        return list(weights.split([len(item.ids) for item in encoded]))

    def unknown_tokens(self, encoded: EncodedText) -> int:
        """How many of a text's tokens are the tokenizer's unknown token."""
        unknown = self.encoder.tokenizer.unk_token_id  # None for byte-level BPE: no unknowns
        return 0 if unknown is None else encoded.ids.count(unknown)

    def forward(
        self,
        id_lists: Sequence[Sequence[int]],
        batches: ForwardBatches,
        all_layers: bool = False,
    ) -> list[torch.Tensor]:
        """L2-normalised float32 token embeddings of each id list, in order.

        Each is ``(length, dim)``, or ``(layers, length, dim)`` with ``all_layers``. Texts
        run in ``batches`` of similar length, longest first, so that each batch pads little
        (``batching/lengths.py``); on the CPU the batches run side by side on
        single-threaded workers (``batching/cpu_parallel.py``). An id list with no ids
        (an empty text, with a tokenizer that adds no special tokens, as GPT-2's) gets no
        embeddings: a model cannot run on it.
        """
        present = [ids for ids in id_lists if ids]
        embeddings = batches.map(
            lambda batch: self.forward_batch(batch, all_layers=all_layers), present, len
        )
        if len(present) == len(id_lists):
            return embeddings
        width = hidden_size(self.encoder.model)
        shape = (self.encoder.layer + 1, 0, width) if all_layers else (0, width)
        none = torch.empty(shape, device=self.encoder.device)
        computed = iter(embeddings)
        return [next(computed) if ids else none for ids in id_lists]

    def forward_batch(
        self, id_lists: Sequence[Sequence[int]], all_layers: bool
    ) -> list[torch.Tensor]:
        """One forward pass of :meth:`forward`."""
        encoder = self.encoder
        pad_id = encoder.tokenizer.pad_token_id or 0
        input_ids, mask = padded_batch(id_lists, pad_id, encoder.device)
        with torch.inference_mode():
            if all_layers:
                hidden = torch.stack(encoder.all_hidden_states(input_ids, mask), dim=1)
            else:
                hidden = encoder.hidden_states(input_ids, mask)
            hidden = hidden.float()
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            # Copies, so that a cached text does not keep its whole batch alive.
            return [hidden[row, ..., : len(ids), :].clone() for row, ids in enumerate(id_lists)]
