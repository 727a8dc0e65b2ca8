"""What the release ships: every data file under the package is declared as package data,
the built sdist and wheel pass ``twine check`` and install with their data files, and the
two installs the README leads with (a clone, a built wheel) score a pair offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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


#: What the source tree holds beside the project: never copied into the release build.
_NOT_THE_PROJECT = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*_cache", "site"
)

#: Run in the fresh environment: where the package was imported from, its data files.
_INSTALLED_PROBE = """
import json, sys
from importlib import resources
import opik_semantic_metrics

def count(folder):
    return sum(count(f) if f.is_dir() else f.name.endswith(".tsv") for f in folder.iterdir())

package = resources.files("opik_semantic_metrics")
baselines = package / "bertscore" / "rescale_baseline"
print(json.dumps({
    "file": opik_semantic_metrics.__file__,
    "typed": (package / "py.typed").is_file(),
    "roberta": (baselines / "en" / "roberta-large.tsv").read_text().splitlines()[0],
    "baselines": count(baselines),
}))
"""

#: Run in the fresh environment: one pair scored with the packaged model, offline.
_SCORE_PROBE = """
import json
import opik_semantic_metrics
from opik_semantic_metrics import BERTScore
f1, precision, recall = BERTScore(model="all-MiniLM-L6-v2", track=False).score(
    output="A cat sits on the mat.", reference="A cat sat on the mat.")
print(json.dumps({"file": opik_semantic_metrics.__file__,
                  "prf": [precision.value, recall.value, f1.value]}))
"""


def _fresh_environment(folder: Path, *, own_pip: bool = True) -> tuple[str, str]:
    """A new virtual environment that sees this one's packages (the dependencies) after
    its own: its python, and its site-packages. Without ``own_pip`` it has neither pip nor
    setuptools of its own (venv's bundled setuptools is too old to build this project), and
    uses this environment's."""
    _run(sys.executable, "-m", "venv", *([] if own_pip else ["--without-pip"]), str(folder))
    python = str(folder / "bin" / "python")
    site_packages = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))")
    outer = [path for path in sys.path if path.endswith("site-packages")]
    Path(site_packages.strip(), "outer.pth").write_text("\n".join(outer) + "\n", "utf-8")
    return python, site_packages.strip()


def _scored(python: str) -> tuple[Path, list[float]]:
    """Where the environment imports the package from, and P, R, F1 of the probe pair."""
    scored = json.loads(_run(python, "-c", _SCORE_PROBE).splitlines()[-1])
    return Path(scored["file"]), scored["prf"]


def _oracle_prf() -> list[float]:
    from opik_semantic_metrics.models.sources import packaged_minilm_path
    from tests.bert_score_oracle import minilm_prf

    [row] = minilm_prf(
        packaged_minilm_path(), ["A cat sits on the mat."], ["A cat sat on the mat."]
    ).tolist()
    return row


@pytest.mark.slow
def test_the_release_builds_passes_twine_and_installs_with_its_data(tmp_path):
    pytest.importorskip("build", reason="the test extra installs build")
    pytest.importorskip("twine", reason="the test extra installs twine")
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_THE_PROJECT)
    dist = tmp_path / "dist"
    # The sdist, then the wheel built from it (build's default): the source release
    # must hold all the wheel needs. No isolation: no download of setuptools.
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source))
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    assert wheel.name.startswith("opik_semantic_metrics-") and wheel.name.endswith("-none-any.whl")
    twine = _run(sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel))
    assert twine.count("PASSED") == 2
    # The wheel's name, as the install guides write it.
    for guide in ("README.md", "docs/install.md"):
        assert f"dist/{wheel.name}[offline]" in (ROOT / guide).read_text("utf-8"), guide
    environment = tmp_path / "venv"
    python, site_packages = _fresh_environment(environment)
    _run(python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel))
    installed = json.loads(_run(python, "-c", _INSTALLED_PROBE).splitlines()[-1])
    assert Path(installed["file"]).is_relative_to(site_packages)
    assert installed["typed"]
    assert installed["roberta"].startswith("LAYER,P,R,F")
    packaged = list((PACKAGE / "bertscore" / "rescale_baseline").rglob("*.tsv"))
    assert installed["baselines"] == len(packaged) >= 70
    # The console script runs from the installed copy.
    helped = _run(str(environment / "bin" / "opik-semantic-metrics"), "--help")
    assert helped.startswith("usage: opik-semantic-metrics")
    # It scores: bert_score's P, R and F1 on the packaged MiniLM, offline.
    oracle = _oracle_prf()
    imported, prf = _scored(python)
    assert imported.is_relative_to(site_packages)
    assert prf == pytest.approx(oracle, abs=1e-5)


@pytest.mark.slow
def test_a_clone_installs_editable_and_scores_offline(tmp_path):
    # What the README leads with: `pip install -e .` in a clone (here a copy of this tree;
    # the environment's setuptools builds it, with no index).
    clone = tmp_path / "clone"
    shutil.copytree(ROOT, clone, ignore=_NOT_THE_PROJECT)
    python, _ = _fresh_environment(tmp_path / "venv", own_pip=False)
    _run(
        python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
        "--no-build-isolation", "-e", str(clone),
    )  # fmt: skip
    imported, prf = _scored(python)
    assert imported == clone / "src" / "opik_semantic_metrics" / "__init__.py"
    assert prf == pytest.approx(_oracle_prf(), abs=1e-5)


def _run(*command: str) -> str:
    """Standard output of ``command``, run outside the source tree with no PYTHONPATH."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # Offline, as a user with no network: the packaged model needs none.
    environment |= {"HF_HUB_OFFLINE": "1", "OPIK_TRACK_DISABLE": "true"}
    finished = subprocess.run(
        command, capture_output=True, text=True, env=environment, cwd="/", timeout=600
    )
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-3000:]
    return finished.stdout
