r"""Oracle for the COMET engine: tiny checkpoints scored by unbabel-comet itself.

Runs in its own environment, never in the project's (unbabel-comet 2.2.7 pins
transformers<5 and numpy<2, and its import needs setuptools<82). Set it up with exactly:

    python3 -m venv /tmp/comet-oracle
    /tmp/comet-oracle/bin/pip install torch==2.13.0
    /tmp/comet-oracle/bin/pip install unbabel-comet==2.2.7 "transformers<5" "numpy<2" \
        "setuptools<82"

(torch first, so that pip keeps the local CPU build instead of pulling CUDA wheels.)

Commands, from the repository root:

    /tmp/comet-oracle/bin/python scripts/comet_oracle.py fixtures
        Build the tiny encoders and one checkpoint per COMET model class under
        tests/fixtures/comet/, score tests/fixtures/comet/segments.json with each
        through unbabel-comet's own ``load_from_checkpoint`` and ``predict``, and write
        the scores (and XCOMET's error spans) to tests/fixtures/comet/oracle.json.

    /tmp/comet-oracle/bin/python scripts/comet_oracle.py benchmark-model DIR [ENCODER_DIR]
        Build the larger checkpoint of benchmarks/comet_throughput.py (6 layers, 256
        wide) in DIR. With ENCODER_DIR, a BERT model directory with trained weights
        (all-MiniLM-L6-v2's, for one), the checkpoint's encoder is that model instead,
        weights and all (copied into DIR); the head is still random.

    /tmp/comet-oracle/bin/python scripts/comet_oracle.py predict MODEL_DIR IN.json OUT.json [N]
        Score the samples of IN.json (a list of {"src", "mt", "ref"}) with unbabel-comet
        in one ``predict`` call; write the scores and the seconds the call took. With N,
        the samples are N systems' translations of the same segments, one system after
        the other, and are scored as ``comet-score`` scores several systems: embedding
        cache on, one ``predict`` call per system.

How the checkpoints are made offline: every COMET model class takes an encoder name
(``pretrained_model``) and ``load_pretrained_weights=False``, with which it reads only the
encoder's config and tokenizer and initialises the weights randomly. Each tiny encoder
here is a directory with a config and a tokenizer trained on the fly with the
``tokenizers`` library; the checkpoints name it by a path relative to the model
directory, and every COMET call runs with that directory as the working directory.
The layer-mixing weights, gamma and the word-tagging head are then set to fixed random
values (so that sparsemax drops layers and every error severity occurs), and the model is
saved as unbabel-comet publishes its models: ``checkpoints/model.ckpt`` (a torch
checkpoint with ``state_dict`` and ``hyper_parameters``) beside ``hparams.yaml``.
"""

# The segments are multilingual on purpose: Greek letters that look Latin are meant.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

# Everything is local: never wait on the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "comet"
SEED = 1234
BATCH_SIZE = 8

#: Training text of the tiny tokenizers, in several scripts, besides the segments.
TOKENIZER_CORPUS = (
    "The committee will publish its report next week.",
    "A small boat crossed the river before sunrise.",
    "Please send me the document by Friday afternoon.",
    "Der Zug nach Berlin hat zwanzig Minuten Verspätung.",
    "Wir haben gestern Abend einen langen Spaziergang gemacht.",
    "O mercado abre às oito horas da manhã.",
    "As crianças brincam no jardim depois da escola.",
    "Le musée est fermé le lundi pendant l'hiver.",
    "El perro duerme junto a la chimenea.",
    "我们明天早上九点在车站见面。",
    "这本书讲述了一个关于友谊的故事。",
    "東京の天気は今日とても良いです。",
    "私は毎朝コーヒーを一杯飲みます。",
    "Сегодня вечером в театре будет концерт.",
    "Мой брат работает инженером в большой компании.",
    "القطار يغادر المحطة في الساعة السابعة.",
    "أحب قراءة الكتب في المساء.",
    "मैं हर दिन सुबह पार्क में टहलता हूँ।",
    "यह शहर अपने पुराने मंदिरों के लिए प्रसिद्ध है।",
    "오늘 저녁에 친구들과 영화를 봅니다.",
    "Το πλοίο φτάνει στο λιμάνι το μεσημέρι.",
    "הספרייה פתוחה עד שמונה בערב.",
    "ร้านอาหารนี้มีชื่อเสียงเรื่องก๋วยเตี๋ยว",
    "Numbers like 3.14, 2026 and 1,000,000 appear in text.",
    "Emoji also happen: 🙂 👍 🚆.",
)


def segments() -> list[dict[str, str]]:
    """The fixed evaluation set: hand-written triples and generated edge cases.

    Every text was written for this project. The set covers empty and whitespace-only
    segments, segments far over 512 tokens (alone and together), literal special tokens,
    tabs and newlines, and ten scripts.
    """
    triples = [
        (
            "The cat sat on the mat.",
            "Die Katze saß auf der Matte.",
            "Die Katze sitzt auf der Matte.",
        ),
        (
            "The meeting starts at noon.",
            "Das Treffen beginnt mittags.",
            "Die Sitzung beginnt um zwölf Uhr.",
        ),
        ("I have two brothers.", "Ich habe zwei Brüder.", "Ich habe zwei Brüder."),
        ("It is raining again.", "Es regnet schon wieder.", "Es regnet wieder."),
        ("She bought fresh bread.", "Sie kaufte frisches Brot.", "Sie hat frisches Brot gekauft."),
        ("The museum is closed today.", "O museu está fechado hoje.", "Hoje o museu está fechado."),
        ("We will travel by train.", "Vamos viajar de comboio.", "Nós vamos viajar de trem."),
        ("My phone is broken.", "Meu telefone está quebrado.", "O meu telemóvel está avariado."),
        ("Where is the station?", "Où est la gare ?", "Où se trouve la gare ?"),
        ("The soup is too hot.", "La sopa está demasiado caliente.", "La sopa quema."),
        ("I like green tea.", "我喜欢绿茶。", "我爱喝绿茶。"),
        ("The library opens at nine.", "图书馆九点开门。", "图书馆早上九点开放。"),
        ("He forgot his umbrella.", "彼は傘を忘れた。", "彼は傘を忘れてしまった。"),
        ("The river is very wide.", "川はとても広い。", "その川は非常に広いです。"),
        ("The concert was wonderful.", "Концерт был чудесным.", "Концерт был замечательный."),
        ("Close the window, please.", "Закройте окно, пожалуйста.", "Пожалуйста, закрой окно."),
        (
            "The market is busy on Saturday.",
            "السوق مزدحم يوم السبت.",
            "يكون السوق مزدحما يوم السبت.",
        ),
        ("I read every evening.", "मैं हर शाम पढ़ता हूँ।", "मैं रोज़ शाम को पढ़ता हूँ।"),
        ("We watched a film.", "우리는 영화를 봤다.", "우리는 영화를 한 편 봤습니다."),
        (
            "The ship arrived at noon.",
            "Το πλοίο έφτασε το μεσημέρι.",
            "Το καράβι ήρθε το μεσημέρι.",
        ),
        ("The library is open late.", "הספרייה פתוחה עד מאוחר.", "הספרייה פתוחה בשעות הערב."),
        ("This restaurant is famous.", "ร้านอาหารนี้มีชื่อเสียง", "ร้านนี้มีชื่อเสียงมาก"),
        ("Der Hund schläft.", "The dog is sleeping.", "The dog sleeps."),
        ("Ich komme morgen.", "I come tomorrow.", "I will come tomorrow."),
        ("我们明天见。", "See you tomorrow.", "We will meet tomorrow."),
        ("東京は大きい都市です。", "Tokyo is a big city.", "Tokyo is a large city."),
        ("Мой брат инженер.", "My brother is an engineer.", "My brother works as an engineer."),
        ("القطار متأخر.", "The train is late.", "The train is delayed."),
        ("यह शहर पुराना है।", "This city is old.", "This is an old city."),
        ("오늘은 날씨가 좋다.", "The weather is nice today.", "It is a nice day today."),
        ("Το λιμάνι είναι κοντά.", "The port is near.", "The harbour is close by."),
        ("The price is 3.14 euros.", "Der Preis beträgt 3,14 Euro.", "Es kostet 3,14 Euro."),
        ("Great job! 👍", "Tolle Arbeit! 👍", "Gut gemacht! 👍"),
        (
            "Visit https://example.org/a?b=1 now.",
            "Besuche jetzt https://example.org/a?b=1.",
            "Jetzt https://example.org/a?b=1 besuchen.",
        ),
        (
            "The cat sat on the mat.",
            "Eine Katze saß auf einer Matte.",
            "Die Katze sitzt auf der Matte.",
        ),
        (
            "The cat sat on the mat.",
            "Der Hund lag auf dem Teppich.",
            "Die Katze sitzt auf der Matte.",
        ),
        ("It is raining again.", "Es schneit.", "Es regnet wieder."),
        ("Where is the station?", "Where is the station?", "Où se trouve la gare ?"),
        ("Line one.\nLine two.", "Zeile eins.\nZeile zwei.", "Erste Zeile.\nZweite Zeile."),
        ("Tab\tseparated\twords", "Durch\tTabs\tgetrennte Wörter", "Wörter\tmit\tTabs"),
        (
            "  Leading and trailing spaces.  ",
            "  Führende und folgende Leerzeichen.  ",
            "Leerzeichen am Rand.",
        ),
        ("Many     inner     spaces.", "Viele     innere     Leerzeichen.", "Viele Leerzeichen."),
        ("A literal <pad> token.", "Ein wörtliches <pad> Token.", "Ein <pad> im Text."),
        (
            "Tags </s> and <s> in text.",
            "Markierungen </s> und <s> im Text.",
            "Text mit </s> und <s>.",
        ),
        ("UPPER CASE TEXT", "TEXT IN GROSSBUCHSTABEN", "GROSSBUCHSTABEN"),
        ("x", "y", "z"),
        ("Repeat repeat repeat repeat.", "Wiederholen wiederholen wiederholen.", "Wiederholung."),
    ]
    edge = [
        ("", "", ""),
        ("The empty translation.", "", "Die leere Übersetzung."),
        ("", "Eine Übersetzung ohne Quelle.", "Eine Übersetzung."),
        ("A reference that is empty.", "Eine Referenz, die leer ist.", ""),
        ("   ", "   ", "   "),
        ("\n", "\t", " \n "),
    ]
    english = " ".join(TOKENIZER_CORPUS[:3])
    german = " ".join(TOKENIZER_CORPUS[3:5])
    chinese = TOKENIZER_CORPUS[9] + TOKENIZER_CORPUS[10]
    long_en, long_de, long_zh = english * 12, german * 18, chinese * 30
    long = [
        (long_en, "Kurz.", "Kurz und knapp."),
        ("Short.", long_de, "Kurz."),
        ("Short.", "Kurz.", long_de),
        (long_en, long_de, long_de),
        (long_zh, long_zh, long_zh),
        ("The same sentence, once.", long_de, long_de + " Ende."),
    ]
    return [{"src": s, "mt": m, "ref": r} for s, m, r in triples + edge + long]


# -- tiny encoders ---------------------------------------------------------------------


def _training_text() -> list[str]:
    texts = list(TOKENIZER_CORPUS)
    for sample in segments()[:47]:
        texts.extend(sample.values())
    return texts


def build_xlmr_tokenizer(directory: Path, vocab_size: int = 1200) -> None:
    """A SentencePiece-style Unigram tokenizer saved as XLM-R's (``<s> A </s></s> B </s>``)."""
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import XLMRobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    backend = Tokenizer(models.Unigram())
    backend.normalizer = normalizers.Sequence(
        [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>", show_progress=False
    )
    backend.train_from_iterator(_training_text(), trainer=trainer)
    backend.add_special_tokens(["<mask>"])
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", backend.token_to_id("<s>")), ("</s>", backend.token_to_id("</s>"))],
    )
    tokenizer = XLMRobertaTokenizerFast(tokenizer_object=backend, model_max_length=512)
    tokenizer.save_pretrained(directory)


def build_bert_tokenizer(directory: Path, vocab_size: int = 1200) -> None:
    """A cased multilingual WordPiece tokenizer saved as BERT's (``[CLS] A [SEP] B [SEP]``)."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import BertTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=specials, show_progress=False
    )
    backend.train_from_iterator(_training_text(), trainer=trainer)
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tokenizer = BertTokenizerFast(
        tokenizer_object=backend, do_lower_case=False, model_max_length=512
    )
    tokenizer.save_pretrained(directory)


def _encoder_size(layers: int, width: int) -> dict[str, int]:
    return {
        "hidden_size": width,
        "num_hidden_layers": layers,
        "num_attention_heads": max(2, width // 64),
        "intermediate_size": 2 * width,
        # Wider than the usual 0.02, so that random encoders tell segments apart.
        "initializer_range": 0.3,
    }


def build_encoders(directory: Path, layers: int = 2, width: int = 32) -> dict[str, Path]:
    """Config-and-tokenizer directories of the encoders COMET's classes can use."""
    from transformers import BertConfig, XLMRobertaConfig, XLMRobertaXLConfig

    paths = {name: directory / name for name in ("xlmr", "xlmr-xl", "bert", "minilm")}
    for path in paths.values():
        path.mkdir(parents=True, exist_ok=True)
    build_xlmr_tokenizer(paths["xlmr"])
    build_bert_tokenizer(paths["bert"])
    shutil.copytree(paths["xlmr"], paths["xlmr-xl"], dirs_exist_ok=True)
    from transformers import AutoTokenizer

    xlmr_vocab = len(AutoTokenizer.from_pretrained(paths["xlmr"]))
    bert_vocab = len(AutoTokenizer.from_pretrained(paths["bert"]))
    size = _encoder_size(layers, width)
    # XLM-R: 2 positions reserved for padding, as in xlm-roberta-large (514).
    xlmr = {"vocab_size": xlmr_vocab, "max_position_embeddings": 514, "type_vocab_size": 1}
    xlmr.update(pad_token_id=1, bos_token_id=0, eos_token_id=2)
    XLMRobertaConfig(**xlmr, **size).save_pretrained(paths["xlmr"])
    XLMRobertaXLConfig(**xlmr, **size).save_pretrained(paths["xlmr-xl"])
    bert = {"vocab_size": bert_vocab, "max_position_embeddings": 512, "type_vocab_size": 2}
    BertConfig(**bert, pad_token_id=0, **size).save_pretrained(paths["bert"])
    # MiniLM: a BERT body read with XLM-R's tokenizer (COMET's MiniLMEncoder).
    minilm = {"vocab_size": xlmr_vocab, "max_position_embeddings": 512, "type_vocab_size": 2}
    BertConfig(**minilm, pad_token_id=1, **size).save_pretrained(paths["minilm"])
    return paths


# -- COMET models ----------------------------------------------------------------------

HEAD = {"hidden_sizes": [48, 24], "activations": "Tanh", "dropout": 0.1}

#: name -> (class_identifier, hparams.yaml overrides, constructor arguments).
MODELS: dict[str, tuple[str, dict, dict]] = {
    # wmt22-comet-da: XLM-R, all layers mixed with sparsemax, average pooling.
    "regression-xlmr": (
        "regression_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": "../encoders/xlmr",
            "layer": "mix",
            "layer_transformation": "sparsemax",
            "layer_norm": False,
            "pool": "avg",
            **HEAD,
        },
    ),
    # A model whose hparams.yaml says "sparsemax_patch": COMET >= 2.2.4 mixes with
    # softmax although the checkpoint says sparsemax. BERT encoder, layer norm on.
    "regression-bert": (
        "regression_metric",
        {"layer_transformation": "sparsemax_patch"},
        {
            "encoder_model": "BERT",
            "pretrained_model": "../encoders/bert",
            "layer": "mix",
            "layer_transformation": "sparsemax",
            "layer_norm": True,
            "pool": "avg",
            **HEAD,
        },
    ),
    # eamt22-cometinho-da: MiniLM (BERT body, XLM-R tokenizer from "xlm-roberta-base");
    # here with the "default" pooling (first token of the last layer).
    "regression-minilm": (
        "regression_metric",
        {},
        {
            "encoder_model": "MiniLM",
            "pretrained_model": "../encoders/minilm",
            "layer": "mix",
            "layer_transformation": "softmax",
            "layer_norm": False,
            "pool": "default",
            **HEAD,
        },
    ),
    # One layer (no mixing), max pooling.
    "regression-xlmr-max": (
        "regression_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": "../encoders/xlmr",
            "layer": 1,
            "pool": "max",
            "final_activation": "Sigmoid",
            **HEAD,
        },
    ),
    # Mixed layers, first-token pooling.
    "regression-xlmr-cls": (
        "regression_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": "../encoders/xlmr",
            "layer": "mix",
            "layer_transformation": "softmax",
            "layer_norm": True,
            "pool": "cls",
            **HEAD,
        },
    ),
    # wmt20/21-comet-qe-da: reference-free regression.
    "referenceless-xlmr": (
        "referenceless_regression_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": "../encoders/xlmr",
            "layer": "mix",
            "layer_transformation": "softmax",
            "layer_norm": True,
            "pool": "avg",
            **HEAD,
        },
    ),
    # wmt22-cometkiwi-da: unified model on [mt, src], first token of the mixed layers.
    "unified-kiwi": (
        "unified_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": "../encoders/xlmr",
            "sent_layer": "mix",
            "layer_transformation": "sparsemax",
            "layer_norm": False,
            "input_segments": ["mt", "src"],
            "word_level_training": False,
            "final_activation": "Sigmoid",
            **HEAD,
        },
    ),
    # A unified model on [mt, src, ref] with word-level tags, BERT encoder (token types),
    # one layer for the sentence score.
    "unified-bert": (
        "unified_metric",
        {},
        {
            "encoder_model": "BERT",
            "pretrained_model": "../encoders/bert",
            "sent_layer": 2,
            "word_layer": 1,
            "input_segments": ["mt", "src", "ref"],
            "word_level_training": True,
            "error_labels": ["minor", "major"],
            **HEAD,
        },
    ),
    # XCOMET-XL/XXL: XLM-R XL encoder, error spans, MQM-weighted final score.
    "xcomet": (
        "xcomet_metric",
        {},
        {
            "encoder_model": "XLM-RoBERTa-XL",
            "pretrained_model": "../encoders/xlmr-xl",
            "sent_layer": "mix",
            "layer_transformation": "sparsemax",
            "layer_norm": False,
            "word_layer": 2,
            **HEAD,
        },
    ),
}


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def _randomise_heads(model: torch.nn.Module, generator: torch.Generator) -> None:
    """Give the layer mix and the tagging head values that exercise every code path.

    The tagging head's biases are centred on its mean logits over the segments, so that
    every label (no error and each severity) wins on some tokens.
    """
    mixing = getattr(model, "layerwise_attention", None)
    if mixing is not None:
        with torch.no_grad():
            for parameter in mixing.scalar_parameters:
                parameter.copy_(torch.randn(1, generator=generator) * 0.6)
            mixing.gamma.copy_(torch.tensor([1.3]))
    tagger = getattr(model, "hidden2tag", None)
    if tagger is None:
        return
    model.eval()
    with torch.no_grad():
        tagger.weight.copy_(torch.randn(tagger.weight.shape, generator=generator) * 0.6)
        tagger.bias.zero_()
        inputs = model.prepare_sample(segments()[:32], stage="predict")[-1]
        logits = model(**inputs).logits[inputs["attention_mask"].bool()]
        tagger.bias.copy_(-logits.mean(dim=0))
        tagger.bias[0] += 0.5


def build_checkpoint(
    directory: Path,
    class_identifier: str,
    yaml_overrides: dict,
    kwargs: dict,
    pretrained_weights: bool = False,
) -> None:
    """Build, randomise and save one COMET model as unbabel-comet publishes them.

    With ``pretrained_weights``, the encoder's weights are read from its directory
    instead of drawn at random.
    """
    from comet.models import str2model

    (directory / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    with working_directory(directory):
        model = str2model[class_identifier](load_pretrained_weights=pretrained_weights, **kwargs)
        _randomise_heads(model, torch.Generator().manual_seed(SEED))
    hyper_parameters = dict(model.hparams)
    hyper_parameters.pop("load_pretrained_weights", None)
    checkpoint = {
        "epoch": 0,
        "global_step": 0,
        "pytorch-lightning_version": version("pytorch-lightning"),
        "state_dict": model.state_dict(),
        "hparams_name": "kwargs",
        "hyper_parameters": hyper_parameters,
    }
    torch.save(checkpoint, directory / "checkpoints" / "model.ckpt")
    hparams = {**hyper_parameters, **yaml_overrides}
    (directory / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True))


def predict(
    model_dir: Path,
    samples: list[dict[str, str]],
    batch_size: int = BATCH_SIZE,
    systems: int = 1,
) -> tuple[dict, dict]:
    """unbabel-comet's own scores (and metadata) for ``samples``, and the seconds taken.

    With ``systems`` above 1, ``samples`` are that many systems' translations of the same
    segments, one system after the other, scored as ``comet-score`` scores several
    systems: embedding cache on, one ``predict`` call per system.
    """
    from comet import load_from_checkpoint

    size = len(samples) // systems
    with working_directory(model_dir):
        start = time.perf_counter()
        model = load_from_checkpoint("checkpoints/model.ckpt")
        if systems > 1:
            model.set_embedding_cache()
        loaded = time.perf_counter()
        outputs = [
            model.predict(
                samples[index * size : (index + 1) * size],
                batch_size=batch_size,
                gpus=0,
                progress_bar=False,
            )
            for index in range(systems)
        ]
        done = time.perf_counter()
    scores = [score for output in outputs for score in output.scores]
    result: dict = {"scores": scores, "system_score": sum(scores) / len(scores)}
    metadata = [output.get("metadata") if hasattr(output, "get") else None for output in outputs]
    if all(metadata):
        result["metadata"] = {
            key: [value for part in metadata for value in part[key]] for key in metadata[0]
        }
    return result, {"load_seconds": loaded - start, "predict_seconds": done - loaded}


def make_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for entry in FIXTURES.iterdir():
        if entry.name != "README.md":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    build_encoders(FIXTURES / "encoders")
    samples = segments()
    (FIXTURES / "segments.json").write_text(
        json.dumps(samples, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    without_reference = [{"src": s["src"], "mt": s["mt"]} for s in samples]
    oracle: dict = {
        "versions": {
            name: version(name)
            for name in ("unbabel-comet", "torch", "transformers", "tokenizers", "numpy")
        },
        "batch_size": BATCH_SIZE,
        "models": {},
    }
    for name, (class_identifier, yaml_overrides, kwargs) in MODELS.items():
        directory = FIXTURES / name
        if kwargs["encoder_model"] == "MiniLM":
            # COMET's MiniLM encoder always reads the tokenizer of "xlm-roberta-base";
            # a directory of that name beside the checkpoint stands in for the Hub.
            shutil.copytree(FIXTURES / "encoders" / "xlmr", directory / "xlm-roberta-base")
        build_checkpoint(directory, class_identifier, yaml_overrides, kwargs)
        entry: dict = {"class_identifier": class_identifier}
        if class_identifier in ("regression_metric",):
            entry["with_reference"] = predict(directory, samples)[0]
        else:
            entry["without_reference"] = predict(directory, without_reference)[0]
            if class_identifier != "referenceless_regression_metric" and (
                "ref" in kwargs.get("input_segments", ["ref"])
            ):
                entry["with_reference"] = predict(directory, samples)[0]
        oracle["models"][name] = entry
        print(f"{name}: done", file=sys.stderr)
    (FIXTURES / "oracle.json").write_text(
        json.dumps(oracle, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def make_benchmark_model(directory: Path, encoder: Path | None = None) -> None:
    """A wmt22-comet-da-style model for benchmarks/comet_throughput.py: a random XLM-R
    encoder 6 layers 256 wide, or the trained BERT model in ``encoder``."""
    if directory.exists():
        shutil.rmtree(directory)
    if encoder is not None:
        shutil.copytree(encoder, directory / "encoders" / "trained")
        kwargs = dict(MODELS["regression-xlmr"][2])
        kwargs.update(
            encoder_model="BERT", pretrained_model="../encoders/trained", hidden_sizes=[1024, 256]
        )
        build_checkpoint(directory / "model", "regression_metric", {}, kwargs, True)
        return
    encoders = build_encoders(directory / "encoders", layers=6, width=256)
    kwargs = dict(MODELS["regression-xlmr"][2])
    kwargs.update(pretrained_model="../encoders/xlmr", hidden_sizes=[1024, 256])
    build_checkpoint(directory / "model", "regression_metric", {}, kwargs)
    for name in ("xlmr-xl", "bert", "minilm"):
        shutil.rmtree(encoders[name])


def timed_predict(model_dir: Path, samples_path: Path, out_path: Path, systems: int) -> None:
    samples = json.loads(samples_path.read_text(encoding="utf-8"))
    result, timing = predict(model_dir, samples, batch_size=16, systems=systems)
    out_path.write_text(json.dumps({"scores": result["scores"], **timing}), encoding="utf-8")


def main(argv: list[str]) -> None:
    command, *args = argv or ["fixtures"]
    if command == "fixtures":
        make_fixtures()
    elif command == "benchmark-model":
        encoder = Path(args[1]).resolve() if len(args) > 1 else None
        make_benchmark_model(Path(args[0]).resolve(), encoder)
    elif command == "predict":
        systems = int(args[3]) if len(args) > 3 else 1
        paths = [Path(arg).resolve() for arg in args[:3]]
        timed_predict(*paths, systems)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
