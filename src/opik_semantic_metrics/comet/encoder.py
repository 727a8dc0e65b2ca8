"""The pretrained encoder inside a COMET model: its tokenizer and its transformer body.

COMET names its encoder by a family (``encoder_model``) and a Hub id or directory
(``pretrained_model``) from which it reads only the config and the tokenizer; the weights
come from the COMET checkpoint (keys ``encoder.model.*``). The families are data here
(:data:`ENCODER_FAMILIES`), with the facts of unbabel-comet 2.2.7's ``comet/encoders``:
the transformers classes, how many separator tokens join two segments, whether the model
is fed token type ids, and where the tokenizer comes from.

Tokenization is COMET's (transformers 4 fast tokenizers): the ``tokenizer.json`` of the
encoder is run by the ``tokenizers`` library directly, so ids and offsets do not depend
on how transformers 5 rebuilds tokenizer classes. Each segment is truncated to the
model's position table minus 4 tokens (510 for XLM-R, special tokens included).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import torch
import transformers
from tokenizers import Tokenizer

from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.input_files import read_json
from opik_semantic_metrics.models.long_texts import leading_part, reads_leading_parts
from opik_semantic_metrics.models.sources import ModelSource, hub_offline, model_unavailable
from opik_semantic_metrics.models.tokenizer import check_token_ids_fit, check_tokenizer_has_words

logger = logging.getLogger(__name__)

#: The files of an encoder COMET reads (config and tokenizer, never the weights).
ENCODER_FILES: Final = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentencepiece.bpe.model",
    "vocab.txt",
)


@dataclass(frozen=True)
class EncoderFamily:
    """How COMET uses one family of encoders.

    Attributes:
        config_class, model_class: The transformers classes.
        separator_size: Separator tokens between two joined segments (BERT's ``[SEP]``: 1;
            XLM-R's ``</s></s>``: 2).
        token_types: The model is fed token type ids (COMET's BERT encoder only).
        tokenizer_source: A fixed tokenizer name, where COMET uses one whatever the
            ``pretrained_model``.
        special_tokens: Default (cls, sep, pad) token strings.
    """

    config_class: str
    model_class: str
    separator_size: int
    token_types: bool
    tokenizer_source: str | None
    special_tokens: tuple[str, str, str]


_XLMR_TOKENS = ("<s>", "</s>", "<pad>")
_BERT_TOKENS = ("[CLS]", "[SEP]", "[PAD]")

#: unbabel-comet 2.2.7's encoders (``comet/encoders/__init__.py`` ``str2encoder``).
ENCODER_FAMILIES: Final[dict[str, EncoderFamily]] = {
    "XLM-RoBERTa": EncoderFamily(
        "XLMRobertaConfig", "XLMRobertaModel", 2, False, None, _XLMR_TOKENS
    ),
    "XLM-RoBERTa-XL": EncoderFamily(
        "XLMRobertaXLConfig", "XLMRobertaXLModel", 2, False, None, _XLMR_TOKENS
    ),
    # A BERT body read with the tokenizer of xlm-roberta-base.
    "MiniLM": EncoderFamily("BertConfig", "BertModel", 2, False, "xlm-roberta-base", _XLMR_TOKENS),
    "BERT": EncoderFamily("BertConfig", "BertModel", 1, True, None, _BERT_TOKENS),
    "RemBERT": EncoderFamily("RemBertConfig", "RemBertModel", 1, False, None, _BERT_TOKENS),
}


def encoder_family(name: str) -> EncoderFamily:
    """The family of COMET's ``encoder_model`` name.

    Raises:
        ValueError: An encoder COMET does not know.
    """
    try:
        return ENCODER_FAMILIES[name]
    except (KeyError, TypeError):  # TypeError: a list or a mapping, from a damaged file
        raise ValueError(
            f"Expected the encoder to be one of {sorted(ENCODER_FAMILIES)}, got {name!r}."
        ) from None


def fetch_encoder_files(name: str) -> Path:
    """A local directory with the encoder's config and tokenizer files.

    A directory is used as it is; a Hub id is downloaded (config and tokenizer only)
    through the Hugging Face cache, honouring ``HF_HUB_OFFLINE``.

    Raises:
        ModelUnavailableError: The files cannot be had.
    """
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                repo_id=name, allow_patterns=list(ENCODER_FILES), local_files_only=hub_offline()
            )
        )
    except (OSError, ValueError) as error:
        raise model_unavailable(
            ModelSource(name=name, location=name), error, encoder=False
        ) from error


@dataclass(frozen=True)
class TokenizedText:
    """One segment as COMET tokenizes it.

    Attributes:
        ids: Token ids, special tokens included.
        offsets: Per token, its (start, end) character span in the text.
        truncated: The segment was longer than the limit and was cut.
    """

    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    truncated: bool


def _read_tokenizer(path: Path) -> Tokenizer:
    """The fast tokenizer serialised in ``path`` (a ``tokenizer.json``).

    Raises:
        ModelUnavailableError: The file is damaged (see
            :func:`~opik_semantic_metrics.input_files.read_json`) or is JSON the
            ``tokenizers`` library cannot build a tokenizer from; names the file.
    """
    read_json(path, error=ModelUnavailableError)
    try:
        return Tokenizer.from_file(str(path))
    # The library raises a bare Exception ("missing field `model`"), whatever is wrong.
    except Exception as error:
        raise ModelUnavailableError(
            f"{path} is not a tokenizer the tokenizers library can read ({error}). Download or "
            f"copy the model again ({path.parent})."
        ) from error


def _token_string(value: Any) -> str | None:
    """A special token from tokenizer_config.json: a string or ``{"content": ...}``."""
    if isinstance(value, Mapping):
        value = value.get("content")
    return value if isinstance(value, str) else None


class CometTokenizer:
    """COMET's segment tokenization with one encoder's tokenizer.

    Args:
        directory: Local directory with ``tokenizer.json`` (else a tokenizer transformers
            can build, e.g. from ``sentencepiece.bpe.model``).
        max_length: Most tokens per segment, special tokens included.
        default_special_tokens: (cls, sep, pad) strings when the configs name none.

    Raises:
        ModelUnavailableError: No tokenizer can be built from the directory, it has no
            vocabulary (its vocabulary file is missing), or it lacks one of the special
            tokens.
    """

    def __init__(
        self, directory: Path, max_length: int, default_special_tokens: tuple[str, str, str]
    ) -> None:
        config: dict[str, Any] = {}
        for name in ("special_tokens_map.json", "tokenizer_config.json"):
            if (directory / name).is_file():
                config.update(read_json(directory / name, error=ModelUnavailableError))
        if (directory / "tokenizer.json").is_file():
            backend = _read_tokenizer(directory / "tokenizer.json")
        else:
            # No serialised fast tokenizer: let transformers build one from the
            # vocabulary files (its construction may differ from transformers 4's on
            # rare whitespace and Unicode cases).
            try:
                built = transformers.AutoTokenizer.from_pretrained(str(directory))
            # The vocabulary files are parsed by transformers, sentencepiece or tokenizers,
            # each failing in its own words (a damaged sentencepiece.bpe.model: RuntimeError).
            except Exception as error:
                raise ModelUnavailableError(f"No tokenizer in {directory}: {error}") from error
            backend = Tokenizer.from_str(built.backend_tokenizer.to_str())
        check_tokenizer_has_words(
            backend.get_vocab(with_added_tokens=True),
            [token.content for token in backend.get_added_tokens_decoder().values()],
            directory,
        )
        # Fixed once here and never changed: a tokenizer whose settings change while
        # another thread encodes raises "Already borrowed".
        backend.no_padding()
        backend.enable_truncation(max_length=max_length)
        self.backend = backend
        self.max_length = max_length
        # The backend truncates on the right, as it was told to above.
        self._cuts_long_texts = reads_leading_parts(
            lambda text: backend.encode(text, add_special_tokens=False).ids,
            added_tokens=[token.content for token in backend.get_added_tokens_decoder().values()],
        )
        ids = []
        for key, default in zip(
            ("cls_token", "sep_token", "pad_token"), default_special_tokens, strict=True
        ):
            token = _token_string(config.get(key)) or default
            token_id = backend.token_to_id(token)
            if token_id is None:
                raise ModelUnavailableError(f"The tokenizer in {directory} has no {key} {token!r}.")
            ids.append(token_id)
        self.cls_id, self.sep_id, self.pad_id = ids
        # transformers 4 reads this from tokenizer_config.json, default False.
        self.clean_up_spaces = bool(config.get("clean_up_tokenization_spaces", False))

    def encode(self, texts: Sequence[str]) -> list[TokenizedText]:
        """Tokenize each text with special tokens, truncated to :attr:`max_length`.

        An over-long text is tokenized only as far as its kept tokens reach: the same
        ids and offsets (:mod:`~opik_semantic_metrics.models.long_texts`).
        """
        kept = [self._kept_part(text) for text in texts]
        return [
            TokenizedText(tuple(item.ids), tuple(item.offsets), bool(item.overflowing))
            for item in self.backend.encode_batch(kept, add_special_tokens=True)
        ]

    def _kept_part(self, text: str) -> str:
        """The leading part of an over-long text that yields the ids the limit keeps."""
        if not self._cuts_long_texts:
            return text
        return leading_part(text, self._token_count, self.max_length)

    def _token_count(self, text: str) -> int:
        """The text's tokens, special ones included, or ``max_length + 1`` where it is over
        the limit (the backend truncates, and lists what it cut as ``overflowing``)."""
        encoding = self.backend.encode(text, add_special_tokens=True)
        return self.max_length + 1 if encoding.overflowing else len(encoding.ids)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids, special tokens kept, as transformers 4's fast ``decode``."""
        text = self.backend.decode(list(ids), skip_special_tokens=False)
        return clean_up_tokenization(text) if self.clean_up_spaces else text


def clean_up_tokenization(text: str) -> str:
    """transformers' clean-up of spaces before punctuation and English contractions.

    Example:
        >>> clean_up_tokenization("It 's here , is n't it ?")
        "It's here, isn't it?"
    """
    for before, after in (
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ):
        text = text.replace(before, after)
    return text


@dataclass(frozen=True, eq=False)
class CometEncoder:
    """A COMET model's tokenizer and transformer body, weights from the COMET checkpoint.

    Attributes:
        family: The encoder family.
        tokenizer: COMET's segment tokenization.
        model: The transformer (no pooler), in eval mode.
        max_positions: COMET's ``max_positions``: the position table minus 2.
        num_hidden_states: Hidden states returned (embeddings + every layer).
    """

    family: EncoderFamily
    tokenizer: CometTokenizer
    model: torch.nn.Module
    max_positions: int
    num_hidden_states: int

    def hidden_states(
        self, ids: torch.Tensor, mask: torch.Tensor, token_types: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, ...]:
        """Every hidden state, each ``(batch, length, width)``, in float32.

        Whatever the encoder's own type (bfloat16 in the fast mode), what reads these states
        (layer mixing, pooling, the estimator, the word tagger) runs in float32.
        """
        inputs = {"input_ids": ids, "attention_mask": mask}
        if self.family.token_types and token_types is not None:
            inputs["token_type_ids"] = token_types
        states = self.model(**inputs, output_hidden_states=True).hidden_states
        return tuple(state.float() for state in states)


def load_comet_encoder(
    encoder_model: str,
    pretrained_model: str,
    tokenizer_source: str,
    state_dict: Mapping[str, torch.Tensor],
    device: torch.device,
    dtype: torch.dtype,
) -> CometEncoder:
    """Build the encoder from its config and tokenizer and load the checkpoint's weights.

    Args:
        encoder_model: COMET's family name.
        pretrained_model: Hub id or directory of the config (and tokenizer).
        tokenizer_source: Hub id or directory of the tokenizer.
        state_dict: The COMET checkpoint's weights.
        device: Where to put the model.
        dtype: The type of the transformer's weights.

    Raises:
        ModelUnavailableError: Files cannot be had (config.json included), the checkpoint
            lacks encoder weights or has weights of another shape, or the tokenizer has
            token ids past the encoder's embeddings.
        ValueError: An unknown encoder family.
    """
    family = encoder_family(encoder_model)
    config_directory = fetch_encoder_files(pretrained_model)
    tokenizer_directory = (
        config_directory
        if tokenizer_source == pretrained_model
        else fetch_encoder_files(tokenizer_source)
    )
    if not (config_directory / "config.json").is_file():
        # transformers would build the family's default config instead, and the weights
        # would then fail to load with a bare size mismatch.
        raise ModelUnavailableError(
            f"The encoder's config.json is missing from {config_directory}."
        )
    read_json(config_directory / "config.json", error=ModelUnavailableError)
    try:
        config = getattr(transformers, family.config_class).from_pretrained(str(config_directory))
    # A field of the wrong type fails in the configuration class's own code.
    except (OSError, ValueError, TypeError, AttributeError) as error:
        raise ModelUnavailableError(
            f"{config_directory / 'config.json'} is not a usable configuration: {error}"
        ) from error
    model = getattr(transformers, family.model_class)(config, add_pooling_layer=False)
    prefix = "encoder.model."
    weights = {
        key[len(prefix) :]: value
        for key, value in state_dict.items()
        if key.startswith(prefix) and not key.startswith(prefix + "pooler.")
    }
    try:
        missing, unexpected = model.load_state_dict(weights, strict=False)
    except RuntimeError as error:
        raise ModelUnavailableError(
            f"The COMET checkpoint's encoder weights do not fit the encoder {pretrained_model!r} "
            f"(is it the one the checkpoint was trained on?): {error}"
        ) from error
    if missing:
        raise ModelUnavailableError(
            f"The COMET checkpoint lacks encoder weights {missing[:5]} (of {len(missing)})."
        )
    if unexpected:
        logger.debug("Ignoring unused encoder entries of the checkpoint: %s", unexpected)
    max_positions = config.max_position_embeddings - 2
    tokenizer = CometTokenizer(tokenizer_directory, max_positions - 2, family.special_tokens)
    check_token_ids_fit(
        tokenizer.backend.get_vocab(with_added_tokens=True),
        config.vocab_size,
        repr(tokenizer_source),
    )
    return CometEncoder(
        family=family,
        tokenizer=tokenizer,
        model=model.to(device=device, dtype=dtype).eval(),
        max_positions=max_positions,
        num_hidden_states=config.num_hidden_layers + 1,
    )
