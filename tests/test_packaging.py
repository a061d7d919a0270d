"""What pip, PyPI, pre-commit and a bare virtual environment see of mgradcheck."""

from __future__ import annotations

import shlex
import subprocess
import sys
import zipfile
from importlib.metadata import PackageMetadata, metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from mgradcheck import __version__
from mgradcheck.envs.venvs import find_uv
from tests.conftest import BEHAVIOURS, MINIMAL, write_entry

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def project() -> PackageMetadata:
    """The installed distribution's metadata: what pip and the index read."""
    return metadata("mgradcheck")


def requirements(project: PackageMetadata, extra: str | None = None) -> list[Requirement]:
    """The requirements of one extra (None: the base dependencies), markers resolved for it."""
    found = []
    for text in project.get_all("Requires-Dist") or []:
        req = Requirement(text)
        in_extra = req.marker is not None and "extra ==" in str(req.marker)
        if (extra is None and not in_extra) or (
            extra is not None
            and in_extra
            and req.marker is not None
            and req.marker.evaluate({"extra": extra})
        ):
            found.append(req)
    return found


def _marker_env(system: str, machine: str) -> dict[str, str]:
    return {"sys_platform": system, "platform_machine": machine, "platform_system": system}


@pytest.mark.parametrize(
    ("system", "machine", "needs_mlx"),
    [("darwin", "arm64", True), ("darwin", "x86_64", False), ("linux", "x86_64", False)],
)
def test_mlx_is_required_only_where_it_has_wheels(
    project: PackageMetadata, system: str, machine: str, needs_mlx: bool
) -> None:
    """MLX ships macOS wheels for Apple silicon only: an Intel Mac must still install mgradcheck."""
    mlx = [r for r in requirements(project) if r.name == "mlx"]
    assert len(mlx) == 1 and mlx[0].marker is not None
    assert mlx[0].marker.evaluate(_marker_env(system, machine)) is needs_mlx


def test_extras_and_what_no_longer_is_a_dependency(project: PackageMetadata) -> None:
    for cuda in ("cuda12", "cuda13"):
        (req,) = requirements(project, cuda)
        assert (req.name, req.extras, str(req.specifier)) == ("mlx", {cuda}, ">=0.30.1")
    assert [r.name for r in requirements(project, "uv")] == ["uv"]
    # `pytest --mgradcheck` needs pytest, which a plain install does not bring.
    assert {r.name for r in requirements(project, "pytest")} == {"pytest", "pytest-xdist"}
    assert "pytest" not in {r.name for r in requirements(project)}
    assert "uv" not in {r.name for r in requirements(project)}


def test_metadata_for_the_index(project: PackageMetadata) -> None:
    classifiers = set(project.get_all("Classifier") or [])
    assert {"Framework :: Pytest", "Topic :: Software Development :: Testing"} <= classifiers
    assert {
        f"Programming Language :: Python :: 3.{minor}" for minor in range(10, 14)
    } <= classifiers
    assert project["License-Expression"] == "MIT" and project.get_all("License-File") == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {__version__}" in changelog


# --- pre-commit ----------------------------------------------------------------------------------


def test_the_pre_commit_hook_is_a_valid_manifest_that_validates_a_corpus(tmp_path: Path) -> None:
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "mgradcheck-validate" and hook["language"] == "python"
    assert hook["pass_filenames"] is False
    words = shlex.split(hook["entry"])
    assert words[0] == "mgradcheck"
    # As pre-commit runs it: the entry, then the args, in the repository's root.
    argv = [sys.executable, "-m", "mgradcheck", *words[1:], *hook["args"]]
    corpus = tmp_path / hook["args"][0]
    corpus.mkdir()
    write_entry(corpus, "fine", MINIMAL.format(id="fine"))
    good = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert good.returncode == 0 and good.stdout == "1 entry valid\n"
    write_entry(corpus, "broken", "id: broken\ntitle: t\n")
    bad = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert f"mgradcheck: error: {Path(hook['args'][0]) / 'broken.yaml'}:1:" in bad.stderr


# --- the wheel, in a bare virtual environment ----------------------------------------------------


@pytest.mark.network
@pytest.mark.slow
def test_a_wheel_in_a_bare_venv_runs_the_bundled_corpus_from_anywhere(tmp_path: Path) -> None:
    """Build the wheel, install it (with MLX's CPU backend) where nothing else is, run from elsewhere."""
    uv = find_uv()
    if uv is None:
        pytest.skip("needs uv (the [uv] extra, installed by 'make install')")
    dist = tmp_path / "dist"
    subprocess.run([uv, "build", "--wheel", "--out-dir", str(dist), str(ROOT)], check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    (wheel,) = dist.glob("mgradcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mgradcheck/bundled_corpus/where-jvp-zero-tangent.yaml" in names
    assert "mgradcheck/schemas/corpus-entry.schema.json" in names
    assert "mgradcheck/sweep/data/mlx-primitives.json" in names  # report upstream's index of MLX
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), f"{wheel}[cpu]"],
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def mgradcheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "mgradcheck"), *args], cwd=elsewhere,
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip

    validated = mgradcheck("validate")
    assert validated.returncode == 0 and validated.stdout.endswith("entries valid\n")
    ran = mgradcheck("run", "where-jvp-zero-tangent", "stop-gradient-aliasing", "-q", "--json", "-")
    assert ran.returncode == 0, ran.stderr
    assert "2 entries: 2 as expected" in ran.stderr
    assert mgradcheck("run", "--corpus", str(BEHAVIOURS), "passes", "-q").returncode == 0
