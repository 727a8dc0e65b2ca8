"""Reading the files the package is given: every way a file can be damaged, one named error.

Model files (configurations, tokenizer files, COMET's ``hparams.yaml``) and data files
(baselines, fitted states, the command line's inputs) are read here. A file that is
missing, unreadable, not UTF-8, cut short (an interrupted download or copy), nested
deeper than a parser can follow, or valid but of the wrong shape (a list where an object
belongs), or a table whose field passes the ``csv`` module's limit, raises one error
that names the file and what is wrong with it: the ``error`` type the caller gives,
:class:`~opik_semantic_metrics.errors.ModelUnavailableError` for a model's files and
``ValueError`` (or a subclass) for a user's data. A parser's own exception (a bare
``RecursionError``, ``UnicodeDecodeError`` or ``_csv.Error``) never reaches the caller.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "config.json"
    >>> _ = path.write_text('{"hidden_size": 3')
    >>> try:
    ...     read_json(path)
    ... except ValueError as error:
    ...     print(str(error).replace(str(path), "config.json"))
    config.json is cut short: its JSON ends inside a value (an interrupted download or copy?).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from opik_semantic_metrics.errors import ModelUnavailableError

ErrorT = TypeVar("ErrorT", bound=Exception)

#: What each JSON or YAML type is called in a message.
_TYPE_NAMES: Final = {
    dict: "an object (mapping)",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}
#: Words that name a plain file or folder: letters, digits, ``.``, ``_`` and ``-``,
#: not starting with a dot.
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _fail(error: type[Exception], message: str, path: Path) -> Exception:
    """``error(message)``, with the advice to fetch a model's file again."""
    if issubclass(error, ModelUnavailableError):
        message += f" Download or copy the model again ({path.parent})."
    return error(message)


def _kind(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def read_text(path: str | Path, *, error: type[Exception] = ValueError) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped).

    Raises:
        error: The file cannot be read (missing, a folder, no permission) or is not
            UTF-8 text (a binary file, another encoding): names the file, and the line of
            the first bad byte.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as cause:
        raise _fail(error, f"cannot read {path}: {cause.strerror or cause}", path) from cause
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as cause:
        line = data[: cause.start].count(b"\n") + 1
        raise _fail(
            error,
            f"{path} is not a UTF-8 text file: byte 0x{data[cause.start]:02x} at line {line} "
            "(a binary file, or text in another encoding: convert it, e.g. with iconv -t UTF-8).",
            path,
        ) from cause


def read_json(
    path: str | Path,
    expected: type | tuple[type, ...] = dict,
    *,
    error: type[Exception] = ValueError,
) -> Any:
    """A JSON file's document, checked to be of the ``expected`` type.

    Raises:
        error: The file cannot be read as text (see :func:`read_text`), is empty, cut
            short, not JSON, nested past Python's recursion limit, or holds a document of
            another type; names the file.
    """
    path = Path(path)
    text = read_text(path, error=error)
    if not text.strip():
        raise _fail(error, f"{path} is empty: expected a JSON document.", path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as cause:
        # Cut inside a string, the parser points at where the string began.
        if cause.pos >= len(text.rstrip()) or cause.msg.startswith("Unterminated string"):
            message = (
                f"{path} is cut short: its JSON ends inside a value (an interrupted download "
                "or copy?)."
            )
        else:
            message = f"{path} is not valid JSON: {cause}."
        raise _fail(error, message, path) from None
    except RecursionError:
        raise _fail(
            error, f"{path} nests its JSON deeper than Python's parser can follow.", path
        ) from None
    except ValueError as cause:  # an integer past Python's limit on digits read as text
        raise _fail(error, f"{path} is not readable JSON: {cause}.", path) from None
    return checked_type(document, expected, path, error=error)


def read_yaml(
    path: str | Path,
    loader: Any,
    expected: type | tuple[type, ...] = dict,
    *,
    error: type[Exception] = ValueError,
) -> Any:
    """A YAML file's document, read with ``loader`` (a PyYAML loader class) and checked
    to be of the ``expected`` type.

    Raises:
        error: The file cannot be read as text, is empty, cut short, not YAML, nested
            past Python's recursion limit, or holds a document of another type; names
            the file.
    """
    import yaml

    path = Path(path)
    text = read_text(path, error=error)
    try:
        document = yaml.load(text, loader)
    except yaml.YAMLError as cause:
        detail = " ".join(str(cause).split())
        if "end of stream" in detail:
            message = (
                f"{path} is not readable YAML: it is cut short, ending inside a value (an "
                f"interrupted download or copy?): {detail}."
            )
        else:
            message = f"{path} is not readable YAML: {detail}."
        raise _fail(error, message, path) from None
    except RecursionError:
        raise _fail(
            error,
            f"{path} is not readable YAML: it nests deeper than Python's parser can follow.",
            path,
        ) from None
    except ValueError as cause:  # a value no Python object can hold (an int past 4,300 digits)
        raise _fail(error, f"{path} is not readable YAML: {cause}.", path) from None
    if document is None:
        raise _fail(error, f"{path} is empty: expected a YAML document.", path)
    return checked_type(document, expected, path, error=error)


def read_csv_rows(path: str | Path, *, error: type[Exception] = ValueError) -> list[list[str]]:
    """The rows of a comma-separated UTF-8 file, each a list of its fields.

    Raises:
        error: The file cannot be read as text, or a row is not CSV the ``csv`` module
            reads (a field past its size limit, a NUL byte); names the file and the line.
    """
    path = Path(path)
    text = read_text(path, error=error)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return list(reader)
    except csv.Error as cause:
        raise _fail(
            error, f"{path} line {reader.line_num} is not readable CSV: {cause}.", path
        ) from None


def checked_type(
    document: Any,
    expected: type | tuple[type, ...],
    path: str | Path,
    *,
    what: str = "",
    error: type[Exception] = ValueError,
) -> Any:
    """``document`` itself where it is of the ``expected`` type.

    Raises:
        error: Another type; names the file and, given ``what``, the field.
    """
    if isinstance(document, expected) and not (
        isinstance(document, bool) and bool not in _types(expected)
    ):
        return document
    wanted = " or ".join(_TYPE_NAMES.get(kind, kind.__name__) for kind in _types(expected))
    raise _fail(
        error,
        f"{path}: expected {what or 'its document'} to be {wanted}, got {_kind(document)}.",
        Path(path),
    )


def _types(expected: type | tuple[type, ...]) -> tuple[type, ...]:
    return expected if isinstance(expected, tuple) else (expected,)


def plain_name(value: str, what: str, error: Callable[[str], ErrorT]) -> str:
    """``value`` where it names one file or folder inside another: no separator, no
    ``..``, no leading dot, nothing but letters, digits, ``.``, ``_`` and ``-``.

    Raises:
        error: Anything else (``"../.."``, ``"en/../../x"``), which would reach outside.

    Example:
        >>> plain_name("en-sci", "lang", ValueError)
        'en-sci'
    """
    if not _PLAIN_NAME.fullmatch(value) or ".." in value:
        raise error(
            f"Expected {what} to be a plain name (letters, digits, '.', '_', '-'), got {value!r}."
        )
    return value
