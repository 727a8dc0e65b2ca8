"""What the wheel ships: every data file under the package is declared as package data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "opik_semantic_metrics"


def test_every_data_file_in_the_package_is_declared_package_data():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["opik_semantic_metrics"]
    declared = {path for pattern in patterns for path in PACKAGE.glob(pattern)}
    data_files = {
        path for path in PACKAGE.rglob("*") if path.is_file() and path.suffix not in {".py", ".pyc"}
    }
    # The baseline files, their licence and source note, py.typed: at least these.
    assert len(data_files) >= 75
    assert sorted(data_files - declared) == []
