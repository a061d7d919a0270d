"""MLX's history from a clone: a tiny repository made by the test stands in for MLX's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mgradcheck.builds import sources
from mgradcheck.errors import UsageError


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    work = tmp_path / "mlx"
    (work / "python" / "tests").mkdir(parents=True)
    _git(work, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "t"), ("user.email", "t@example.invalid")):
        _git(work, "config", key, value)
    (work / "python" / "tests" / "test_a.py").write_text("A = 1\n")
    (work / "README.md").write_text("mlx\n")
    _git(work, "add", ".")
    _git(work, "commit", "--quiet", "-m", "first")
    _git(work, "tag", "v0.1.0")
    (work / "python" / "tests" / "test_a.py").write_text("A = 2\n")
    _git(work, "commit", "--quiet", "-am", "second (#12)")
    return work


def test_a_work_tree_or_a_bare_clone_is_accepted(clone: Path, tmp_path: Path) -> None:
    assert sources.repository(clone) == clone / ".git"
    bare = tmp_path / "bare.git"
    _git(tmp_path, "clone", "--quiet", "--bare", str(clone), str(bare))
    assert sources.repository(bare) == bare.resolve()
    with pytest.raises(UsageError, match="not a git repository"):
        sources.repository(tmp_path / "nowhere")


def test_revisions_resolve_to_full_hashes(clone: Path) -> None:
    repo = sources.repository(clone)
    head = _git(clone, "rev-parse", "HEAD")
    assert sources.resolve(repo, "main") == head
    assert sources.resolve(repo, head[:8]) == head
    assert sources.resolve(repo, "v0.1.0") == _git(clone, "rev-parse", "v0.1.0^{commit}")
    for bad in ("v9.9.9", "--output=/tmp/x", ""):
        with pytest.raises(UsageError):
            sources.resolve(repo, bad)


def test_export_takes_files_of_one_revision_only(clone: Path, tmp_path: Path) -> None:
    repo = sources.repository(clone)
    old = sources.export(repo, "v0.1.0", ["python/tests"], tmp_path / "old")
    new = sources.export(repo, "main", ["python/tests"], tmp_path / "new")
    assert (old / "python" / "tests" / "test_a.py").read_text() == "A = 1\n"
    assert (new / "python" / "tests" / "test_a.py").read_text() == "A = 2\n"
    assert not (old / "README.md").exists()
