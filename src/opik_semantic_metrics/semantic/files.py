"""Scoring a folder of answer files, in the layered semantic score recipe's format.

The folder holds one ``*.json`` file per question type (true/false, multiple choice,
list, short answer, ...). Each is an object with two aligned lists::

    {"inputs": ["Cardiomegaly", ["fever", "cough"], ...],
     "responses": ["An enlarged heart", "Fever and a cough", ...]}

``inputs[i]`` is the ground truth of item ``i``: a string, or a list of strings that
together form one answer (joined with ``", "``); ``responses[i]`` is the model's output,
a string. Other keys are ignored. :func:`score_answer_folder` fits the engine on every
reference of every file (idf and paragraph baseline), scores every file, and reports
each file's mean score.

Example:
    >>> import json, tempfile
    >>> from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "short.json").write_text(json.dumps({
    ...     "inputs": ["Heart attack", "Pulmonary embolism"],
    ...     "responses": ["Heart attack", "A broken leg"]}))
    >>> _ = (folder / "list.json").write_text(json.dumps({
    ...     "inputs": [["fever", "cough"]], "responses": ["Fever, cough"]}))
    >>> engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    >>> scores = score_answer_folder(engine, folder)
    >>> [(file.name, file.count, round(file.mean, 1)) for file in scores]
    [('list', 1, 1.0), ('short', 2, 0.5)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.input_files import read_json
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
from opik_semantic_metrics.semantic.references import Reference, reference_text
from opik_semantic_metrics.semantic.results import SemanticMatchResult


@dataclass(frozen=True)
class AnswerFile:
    """One answer file, checked.

    Attributes:
        name: The file name without ``.json``.
        references: Ground-truth answers (strings, or lists of strings).
        responses: Model outputs, aligned with ``references``.
    """

    name: str
    references: tuple[Reference, ...]
    responses: tuple[str, ...]


@dataclass(frozen=True)
class FileScore:
    """The scores of one answer file.

    Attributes:
        name: The file name without ``.json``.
        count: Number of items.
        mean: Mean score of the items; ``None`` for a file without items.
        results: Each item's result, in order.
    """

    name: str
    count: int
    mean: float | None
    results: tuple[SemanticMatchResult, ...]


def read_answer_file(path: str | Path) -> AnswerFile:
    """Read and check one answer file.

    Raises:
        InputError: Not JSON, not an object with ``inputs`` and ``responses`` lists of
            equal length, or an item of the wrong type; the message names the file and
            the item.
    """
    path = Path(path)
    try:
        document = read_json(path, object)
    except ValueError as error:
        raise InputError(f"{path.name}: cannot read it as JSON ({error})") from error
    if not isinstance(document, dict):
        raise InputError(f"{path.name}: expected a JSON object, got {type(document).__name__}.")
    inputs, responses = document.get("inputs"), document.get("responses")
    if not isinstance(inputs, list) or not isinstance(responses, list):
        raise InputError(f"{path.name}: expected `inputs` and `responses` to be lists.")
    if len(inputs) != len(responses):
        raise InputError(
            f"{path.name}: {len(inputs)} inputs but {len(responses)} responses; they must align."
        )
    for index, response in enumerate(responses):
        if not isinstance(response, str):
            raise InputError(
                f"{path.name}: response {index} is {type(response).__name__}, not a string."
            )
    for index, reference in enumerate(inputs):
        try:
            reference_text(reference, f"reference {index}")
        except InputError as error:
            raise InputError(f"{path.name}: {error}") from error
    references = tuple(item if isinstance(item, str) else tuple(item) for item in inputs)
    return AnswerFile(name=path.stem, references=references, responses=tuple(responses))


def read_answer_folder(folder: str | Path) -> list[AnswerFile]:
    """Every ``*.json`` answer file of a folder, by name.

    Raises:
        InputError: The folder does not exist or holds no ``.json`` file, or a file is
            malformed (see :func:`read_answer_file`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{str(folder)!r} is not a folder.")
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise InputError(f"{str(folder)!r} holds no .json answer file.")
    return [read_answer_file(path) for path in paths]


def score_answer_files(engine: SemanticMatchEngine, files: Sequence[AnswerFile]) -> list[FileScore]:
    """Fit the engine on every reference of the files, then score each file."""
    engine.fit([reference for file in files for reference in file.references])
    scores = []
    for file in files:
        results = tuple(engine.score(file.responses, file.references))
        mean = sum(result.score for result in results) / len(results) if results else None
        scores.append(FileScore(file.name, len(results), mean, results))
    return scores


def score_answer_folder(engine: SemanticMatchEngine, folder: str | Path) -> list[FileScore]:
    """Read a folder of answer files, fit on all their references, score each file."""
    return score_answer_files(engine, read_answer_folder(folder))
