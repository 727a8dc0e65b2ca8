"""Tiny local models for tests: built on the fly, no download.

Each helper writes a model directory that ``transformers.AutoTokenizer`` and
``transformers.AutoModel`` (and so bert_score) load like a Hub checkpoint, and returns
its path. The tokenizers are trained with the ``tokenizers`` library on :data:`CORPUS`;
the models are randomly initialised from a fixed seed. A trained vocabulary can differ
from one build to the next (the WordPiece trainer breaks ties in no fixed order), so a
test compares implementations on one build, and a recorded fixture keeps the build it was
recorded on (``tests/fixtures/tiny_models/``). Building one takes well under a second.

- :func:`build_tiny_roberta`: byte-level BPE (RoBERTa's ``<s> ... </s>``), which reads
  a leading space as part of the first word; ``add_prefix_space=True`` builds the variant
  whose tokenizer adds that space itself.
- :func:`build_tiny_gpt2`: the same byte-level BPE as a GPT-2 tokenizer (no special
  tokens added around a text) and a tiny GPT-2.
- :func:`build_tiny_bert`: a lower-casing WordPiece tokenizer (``[CLS] ... [SEP]``) and
  a tiny BERT.
- :func:`build_tiny_albert`, :func:`build_tiny_xlm`: that tokenizer and a tiny ALBERT or
  XLM, the two layouts whose layer count is a setting rather than a list of layers.
- :func:`build_tiny_t5`: that tokenizer and a tiny T5, read on its encoder (whose
  feed-forward reads its linear layer's ``weight``).
- :func:`build_tiny_byt5`: ByT5's tokenizer, which like every T5 tokenizer adds one
  special token (``</s>``) after a text, and a tiny T5.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers as tokenizer_trainers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

#: Token limit of every tiny tokenizer, special tokens included.
MAX_LENGTH = 512
#: Seed of the random model weights.
SEED = 0

#: Training text of the tiny tokenizers: plain English, with "OK" and "Okay".
CORPUS = (
    "OK, that works for me.",
    "Okay, let us meet at noon.",
    "It is OK to be late sometimes.",
    "Okay then, see you tomorrow.",
    "OK OK, I heard you the first time.",
    "The cat sits on the mat.",
    "A cat sat on the mat in the sun.",
    "The dog runs in the snow.",
    "A man is playing a guitar on the street.",
    "A woman is slicing an onion in the kitchen.",
    "Two children are playing football in the park.",
    "The weather is nice today, isn't it?",
    "I like walking in the park with my dog.",
    "Hello, world! How are you doing?",
    "She reads a book every evening before bed.",
    "The train leaves the station at seven o'clock.",
    "We bought apples, oranges and bananas at the market.",
    "He said the answer was correct.",
    "The answer is approximately three point one four.",
    "Please close the door when you leave the room.",
    "My brother works at a hospital in the city.",
    "They are watching a movie at home tonight.",
    "The quick brown fox jumps over the lazy dog.",
    "A bird is singing in the tree near the window.",
    "The students are listening to the teacher.",
    "Coffee or tea? Tea, please, with milk.",
    "The meeting was moved to Thursday afternoon.",
    "Leading and trailing spaces should not matter.",
    "Multiple spaces inside a sentence are still spaces.",
    "This is a short sentence.",
    "This is a much longer sentence about words and more words.",
    "Scores are computed between a candidate and a reference.",
    "The model reads every token of the text.",
    "Is it okay if I open the window?",
    "Everything is OK now, thank you.",
    "Thank you very much for your help.",
    "The children laughed and ran down the hill.",
    "A red car is parked outside the house.",
    "The sun rises in the east and sets in the west.",
    "Good morning, everyone!",
)

#: The size of every tiny T5.
_TINY_T5 = {"d_model": 32, "d_kv": 16, "d_ff": 64, "num_layers": 2, "num_heads": 2}

_ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>", "<|endoftext|>"]
_BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _train_byte_level_bpe(vocab_size: int = 400) -> Tokenizer:
    """A byte-level BPE trained on :data:`CORPUS`, without a prefix space of its own."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = tokenizer_trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=_ROBERTA_SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    return tokenizer


def _copy(tokenizer: Tokenizer) -> Tokenizer:
    return Tokenizer.from_str(tokenizer.to_str())


def _save_tokenizer(
    tokenizer: PreTrainedTokenizerFast, backend: Tokenizer, directory: Path
) -> None:
    """Write the fast tokenizer, and the vocabulary files of the slow (Python) class.

    BPE merges are written as ``"a b"`` strings: tokenizers before 0.20 (transformers
    4.40-4.44) read only that form, later versions read it as well as their own pairs.
    """
    tokenizer.save_pretrained(directory)
    backend.model.save(str(directory))
    path = directory / "tokenizer.json"
    content = json.loads(path.read_text(encoding="utf-8"))
    merges = content["model"].get("merges")
    if merges and not isinstance(merges[0], str):
        content["model"]["merges"] = [" ".join(pair) for pair in merges]
        path.write_text(json.dumps(content, ensure_ascii=False, indent=2), encoding="utf-8")


def _save_model(model: torch.nn.Module, directory: Path) -> None:
    model.eval()
    model.save_pretrained(directory)


def build_tiny_roberta(directory: str | Path, *, add_prefix_space: bool = False) -> Path:
    """A RoBERTa-style byte-level BPE tokenizer and a random 2-layer RoBERTa.

    Args:
        directory: Where to write the model (created if missing).
        add_prefix_space: Build a tokenizer that adds the leading space itself.

    Returns:
        The model directory.
    """
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    backend = _copy(_train_byte_level_bpe())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")),
        ("<s>", backend.token_to_id("<s>")),
        trim_offsets=True,
        add_prefix_space=add_prefix_space,
    )
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        add_prefix_space=add_prefix_space,
        trim_offsets=True,
        model_max_length=MAX_LENGTH,
    )
    _save_tokenizer(tokenizer, backend, directory)

    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH + 2,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(SEED)
    _save_model(RobertaModel(config), directory)
    return directory


def build_tiny_gpt2(directory: str | Path) -> Path:
    """The same byte-level BPE as a GPT-2 tokenizer (with a pad token) and a random GPT-2.

    Returns:
        The model directory.
    """
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    backend = _copy(_train_byte_level_bpe())
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    tokenizer = GPT2TokenizerFast(
        tokenizer_object=backend,
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<pad>",
        add_prefix_space=False,
        model_max_length=MAX_LENGTH,
    )
    _save_tokenizer(tokenizer, backend, directory)

    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=MAX_LENGTH,
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_inner=64,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    _save_model(GPT2Model(config), directory)
    return directory


def wordpiece_tokenizer(
    corpus: list[str], vocab_size: int, model_max_length: int
) -> tuple[PreTrainedTokenizerFast, Tokenizer]:
    """A lower-casing WordPiece tokenizer trained on ``corpus`` (BERT's ``[CLS] ... [SEP]``),
    and its ``tokenizers`` backend (the tiny BERT's)."""
    from transformers import BertTokenizerFast

    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    trainer = tokenizer_trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=_BERT_SPECIALS, show_progress=False
    )
    backend.train_from_iterator(corpus, trainer=trainer)
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tokenizer = BertTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=True,
        model_max_length=model_max_length,
    )
    return tokenizer, backend


def build_tiny_bert(directory: str | Path) -> Path:
    """A lower-casing WordPiece tokenizer and a random 2-layer BERT.

    Returns:
        The model directory.
    """
    from transformers import BertConfig, BertModel

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer, backend = wordpiece_tokenizer(CORPUS, 400, MAX_LENGTH)
    _save_tokenizer(tokenizer, backend, directory)

    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    _save_model(BertModel(config), directory)
    return directory


def build_tiny_albert(directory: str | Path) -> Path:
    """The tiny BERT's tokenizer and a random 2-layer ALBERT (one set of layer weights,
    run once a layer).

    Returns:
        The model directory.
    """
    from transformers import AlbertConfig, AlbertModel

    return _over_tiny_bert_tokenizer(
        directory,
        AlbertModel,
        AlbertConfig,
        embedding_size=16,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH,
        pad_token_id=0,
    )


def build_tiny_xlm(directory: str | Path) -> Path:
    """The tiny BERT's tokenizer and a random 2-layer XLM.

    Returns:
        The model directory.
    """
    from transformers import XLMConfig, XLMModel

    return _over_tiny_bert_tokenizer(
        directory,
        XLMModel,
        XLMConfig,
        emb_dim=32,
        n_layers=2,
        n_heads=2,
        max_position_embeddings=MAX_LENGTH,
        pad_index=0,  # the tokenizer's [PAD]: XLM finds each text's length by it
    )


def build_tiny_t5(directory: str | Path) -> Path:
    """The tiny BERT's tokenizer and a random T5 of 2 encoder and 2 decoder layers.

    Returns:
        The model directory.
    """
    from transformers import T5Config, T5Model

    return _over_tiny_bert_tokenizer(
        directory, T5Model, T5Config, **_TINY_T5, pad_token_id=0, decoder_start_token_id=0
    )


def build_tiny_byt5(directory: str | Path) -> Path:
    """ByT5's tokenizer (one token a byte, and ``</s>`` after a text: the one special token
    T5's tokenizers add) and a random T5 of 2 layers over it. ByT5's tokenizer needs no
    vocabulary file, so its Python class loads under every transformers version.

    Returns:
        The model directory (bert_score reads a T5 on its encoder where its name holds
        "t5": put that in the directory's name).
    """
    from transformers import ByT5Tokenizer, T5Config, T5Model

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = ByT5Tokenizer(extra_ids=0, model_max_length=MAX_LENGTH)
    tokenizer.save_pretrained(directory)
    config = T5Config(
        vocab_size=len(tokenizer),
        **_TINY_T5,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    _save_model(T5Model(config), directory)
    return directory


def _over_tiny_bert_tokenizer(
    directory: str | Path, model_class: Any, config_class: Any, **settings: Any
) -> Path:
    """The tiny BERT's directory with its model replaced by a random ``model_class`` of
    ``config_class(**settings)`` over the same vocabulary."""
    directory = build_tiny_bert(directory)
    config = config_class(vocab_size=_vocab_size(directory), **settings)
    torch.manual_seed(SEED)
    _save_model(model_class(config), directory)
    return directory


def _vocab_size(directory: Path) -> int:
    """The vocabulary size in a model directory's config."""
    return int(json.loads((directory / "config.json").read_text(encoding="utf-8"))["vocab_size"])
