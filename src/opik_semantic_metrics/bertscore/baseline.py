"""Baseline rescaling of BERTScore.

Raw BERTScores of a model live in a narrow band (roberta-large: mostly 0.85 to 0.95).
Rescaling with the mean score ``b`` of unrelated sentence pairs spreads them out::

    rescaled = (raw - b) / (1 - b)

with one ``b`` each for P, R and F, per layer. Rescaled scores can be negative.

Baseline files are bert_score's format: comma-separated (despite the ``.tsv`` name), a
header ``LAYER,P,R,F`` and one row per layer from 0, the row at position ``layer`` being
used. bert_score 0.3.13's 72 files (``rescale_baseline/<lang>/<model>.tsv``, 12
languages) ship unchanged with this package, beside this module, with their MIT licence
(``rescale_baseline/SOURCE.md``). :func:`compute_baseline` makes such a file for any
model, the way bert_score's authors made theirs
(``get_rescale_baseline/get_rescale_baseline.py``): lines of fewer than 32
space-separated words, split at random into two halves that are paired, BERTScore
without idf at every layer (:func:`score_all_layers`), averaged.
"""

from __future__ import annotations

import csv
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.bertscore.embedding import TextEmbedding, TokenEmbedder
from opik_semantic_metrics.bertscore.idf import IdfTable
from opik_semantic_metrics.bertscore.matching import match_pairs
from opik_semantic_metrics.input_files import plain_name, read_csv_rows
from opik_semantic_metrics.inputs import check_pairs, is_finite_number

logger = logging.getLogger(__name__)

#: Lines with this many space-separated words or more are left out of a baseline corpus.
BASELINE_MAX_WORDS = 32


@dataclass(frozen=True)
class Baseline:
    """Baseline values of one layer for P, R and F1.

    The engine rescales each score ``s`` with its baseline ``b`` as ``(s - b) / (1 - b)``.

    Example:
        >>> Baseline(precision=0.8, recall=0.75, f1=0.77).as_tensor()
        tensor([0.8000, 0.7500, 0.7700])
    """

    precision: float
    recall: float
    f1: float

    def as_tensor(self) -> torch.Tensor:
        """``tensor([b_P, b_R, b_F])`` in float32, as bert_score applies it."""
        return torch.tensor([self.precision, self.recall, self.f1], dtype=torch.float32)


#: bert_score 0.3.13's baseline files, shipped with this package.
PACKAGED_BASELINES = Path(__file__).parent / "rescale_baseline"


def packaged_baseline_path(lang: str, model: str) -> Path:
    """Path of bert_score's baseline file for a language and model, as packaged here.

    The file may not exist (no baseline for that pair); :func:`read_baseline` says so.
    A model given as a local directory has no packaged baseline: as in bert_score, its
    baseline is the file ``<directory>.tsv`` beside it, and a warning names that file
    (pass ``baseline_path`` to choose one and silence it).

    Raises:
        ValueError: ``lang`` is not a plain language code (``"../.."`` would read
            outside the packaged folder), or ``model`` names no file inside it.

    Example:
        >>> path = packaged_baseline_path("EN", "roberta-large")
        >>> path.relative_to(PACKAGED_BASELINES).as_posix(), path.is_file()
        ('en/roberta-large.tsv', True)
    """
    # Lower case, as bert_score reads `lang` ("EN" finds en/roberta-large.tsv).
    folder = PACKAGED_BASELINES / plain_name(lang, "`lang`", ValueError).lower()
    directory = Path(model).expanduser()
    if directory.is_dir():
        beside = directory.parent / f"{directory.name}.tsv"
        logger.warning(
            "Rescaling %s with the baseline file beside it, %s (a local model has no "
            "packaged baseline); pass `baseline_path` to choose the file.",
            model,
            beside,
        )
        return beside
    # A Hub id "owner/name" is a file in a folder of its owner ("en/microsoft/...").
    for part in model.split("/"):
        plain_name(part, f"each part of the model name {model!r}", ValueError)
    return folder / f"{model}.tsv"


def read_baseline(path: str | Path, layer: int) -> Baseline:
    """Read the baseline of one layer from a file in bert_score's format.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not UTF-8 text or not CSV (see
            :func:`~opik_semantic_metrics.input_files.read_csv_rows`), is malformed, has no
            row for ``layer``, or a baseline that is not a finite number, or is 1
            (rescaling divides by 1 - b; above 1, it reverses the order of scores, as
            bert_score's does).
    """
    path = Path(path)
    if path.is_dir():
        raise FileNotFoundError(f"Baseline file not found: {path} is a folder")
    if not path.is_file():
        raise FileNotFoundError(f"Baseline file not found: {path}")
    rows = read_csv_rows(path)
    if not rows:
        raise ValueError(f"{path} is empty: expected a header LAYER,P,R,F and a row a layer.")
    header, body = rows[0], [row for row in rows[1:] if row]
    if [name.strip() for name in header[1:4]] != ["P", "R", "F"]:
        raise ValueError(f"{path}: expected a header LAYER,P,R,F, got {','.join(header)}")
    if not 0 <= layer < len(body):
        raise ValueError(f"{path} has baselines for layers 0 to {len(body) - 1}, not {layer}.")
    try:
        precision, recall, f1 = (float(value) for value in body[layer][1:4])
    except ValueError as error:
        raise ValueError(
            f"{path}: expected the row of layer {layer} to be LAYER,P,R,F with three numbers, "
            f"got {','.join(body[layer])}"
        ) from error
    if not all(is_finite_number(value) and value != 1.0 for value in (precision, recall, f1)):
        # 1 would divide every score by 0; NaN or inf would make every score undefined.
        raise ValueError(
            f"{path}: expected the baselines of layer {layer} to be finite numbers other "
            f"than 1, got {','.join(body[layer])}"
        )
    return Baseline(precision=precision, recall=recall, f1=f1)


def write_baseline(path: str | Path, per_layer: Sequence[Baseline]) -> Path:
    """Write per-layer baselines in bert_score's format (row ``i`` is layer ``i``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["LAYER", "P", "R", "F"])
        for layer, baseline in enumerate(per_layer):
            writer.writerow([layer, baseline.precision, baseline.recall, baseline.f1])
    return path


def baseline_pairs(
    lines: Sequence[str], seed: int = 0, max_words: int = BASELINE_MAX_WORDS
) -> tuple[list[str], list[str]]:
    """Unrelated sentence pairs for a baseline, as bert_score's authors drew them.

    Keeps stripped, non-empty lines of fewer than ``max_words`` space-separated words,
    shuffles them with ``seed`` and pairs the first half with the second.

    Example:
        >>> left, right = baseline_pairs(["a b", "c d", "e f", "g h", "x " * 40], seed=1)
        >>> len(left), len(right), set(left).isdisjoint(right)
        (2, 2, True)
    """
    kept = [line.strip() for line in lines]
    kept = [line for line in kept if line and len(line.split(" ")) < max_words]
    if len(kept) < 2:
        raise ValueError("A baseline needs at least two usable lines of text.")
    order = list(range(len(kept)))
    random.Random(seed).shuffle(order)
    half = len(kept) // 2
    return [kept[i] for i in order[:half]], [kept[i] for i in order[half : 2 * half]]


def score_all_layers(
    embedder: TokenEmbedder,
    candidates: list[str],
    references: list[str],
    *,
    idf_table: IdfTable | None,
    batches: ForwardBatches,
    match_batch_size: HalvingBatchSize,
) -> torch.Tensor:
    """P, R, F of each pair at every layer from 0 to the embedder's: ``(layers, 3, pairs)``.

    Raw scores, with token weights from ``idf_table`` (uniform where it is ``None``);
    forward passes in ``batches``, matches in length-sorted batches of
    ``match_batch_size`` pairs that halve on out of memory, as every score's. Layers above
    the embedder's were dropped at loading: load it at the last layer to score them all.
    """
    check_pairs(candidates, references)
    unique = list(dict.fromkeys(candidates + references))
    encoded = embedder.text_encoder.encode_many(unique)
    layered = embedder.forward([item.ids for item in encoded], batches, all_layers=True)
    weights = embedder.weights(encoded, idf_table)
    pairs = list(zip(candidates, references, strict=True))
    scores = []
    for layer in range(embedder.encoder.layer + 1):
        at_layer = {
            text: TextEmbedding(item, embeddings[layer], text_weights)
            for text, item, embeddings, text_weights in zip(
                unique, encoded, layered, weights, strict=True
            )
        }
        layer_scores, _, _ = match_pairs(pairs, at_layer, match_batch_size)
        scores.append(layer_scores.T)
    return torch.stack(scores)


def compute_baseline(
    score_all_layers: Callable[[list[str], list[str]], torch.Tensor],
    lines: Sequence[str],
    *,
    seed: int = 0,
    chunk_size: int = 1000,
) -> list[Baseline]:
    """Per-layer baselines: the mean BERTScore of unrelated pairs drawn from ``lines``.

    Args:
        score_all_layers: ``f(candidates, references) -> tensor (layers, 3, pairs)`` of
            P, R, F without idf at every layer; :meth:`BERTScoreEngine.score_all_layers`.
        lines: A monolingual corpus, one sentence per line (bert_score used 1M lines).
        seed: Seed of the random pairing.
        chunk_size: Pairs scored per call.

    Returns:
        One :class:`Baseline` per layer, from layer 0; save it with :func:`write_baseline`.
    """
    candidates, references = baseline_pairs(lines, seed=seed)
    total = torch.zeros(0)
    for start in range(0, len(candidates), chunk_size):
        scores = score_all_layers(
            candidates[start : start + chunk_size], references[start : start + chunk_size]
        )
        chunk_sum = scores.double().sum(dim=-1)
        total = chunk_sum if total.numel() == 0 else total + chunk_sum
    means = (total / len(candidates)).tolist()
    return [Baseline(precision=p, recall=r, f1=f) for p, r, f in means]
