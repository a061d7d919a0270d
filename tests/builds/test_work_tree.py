"""``--mlx PATH``: an MLX work tree built as it stands, its uncommitted changes in its identity.

The identity is tested on a small real git repository; the build end to end on the fake
MLX history of tests/fake_commits.py (real git, a real PEP 517 build, real runs), where a
change not yet committed fixes the fake bug and ``report compare`` says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.builds import wheels
from mgradcheck.errors import UsageError
from mgradcheck.index.installable import Target
from tests import fake_mlx
from tests.fake_commits import git, make_history

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    path = tmp_path / "mlx"
    path.mkdir()
    git(path, "init", "--quiet")
    for key, value in (("user.name", "T"), ("user.email", "t@example.invalid")):
        git(path, "config", key, value)
    (path / "kernel.cpp").write_text("int f() { return 1; }\n")
    (path / "blob.bin").write_bytes(bytes(range(256)))
    (path / ".gitignore").write_text("build/\n")
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def test_a_clean_tree_is_its_commit(tree: Path) -> None:
    from mgradcheck.builds.work_tree import snapshot

    found = snapshot(tree)
    assert found.clean and found.key == git(tree, "rev-parse", "HEAD") == found.head
    (tree / "build").mkdir()
    (tree / "build" / "object.o").write_text("ignored output")  # ignored: still clean
    assert snapshot(tree).key == found.head


def test_two_patches_have_two_keys_and_one_patch_one(tree: Path) -> None:
    from mgradcheck.builds.work_tree import KEY_DIGITS, snapshot

    head = git(tree, "rev-parse", "HEAD")
    (tree / "kernel.cpp").write_text("int f() { return 2; }\n")
    first = snapshot(tree)
    assert first.key.startswith(head + "-") and len(first.key) == len(head) + 1 + KEY_DIGITS
    assert snapshot(tree).key == first.key  # the same diff, read again
    git(tree, "add", "kernel.cpp")
    assert snapshot(tree).key == first.key  # staged or not, the same change
    (tree / "kernel.cpp").write_text("int f() { return 3; }\n")
    second = snapshot(tree)
    assert second.key != first.key and second.key.startswith(head + "-")
    (tree / "blob.bin").write_bytes(bytes(range(255, -1, -1)))  # a binary change counts too
    assert snapshot(tree).key not in (first.key, second.key)
    git(tree, "checkout", "--quiet", "HEAD", "--", ".")
    assert snapshot(tree).key == head


def test_untracked_files_are_in_the_key_by_content(tree: Path) -> None:
    from mgradcheck.builds.work_tree import snapshot

    (tree / "new.cpp").write_text("a\n")
    one = snapshot(tree)
    (tree / "new.cpp").write_text("b\n")
    other = snapshot(tree)
    assert not one.clean and one.key != other.key
    assert [name for name, _ in other.untracked] == ["new.cpp"]


def test_a_directory_that_is_no_work_tree_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [*MGRADCHECK, "run", "--mlx", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "not the top of a git work tree" in done.stderr
    assert "Traceback" not in done.stderr
    from mgradcheck.builds.work_tree import snapshot

    with pytest.raises(UsageError, match="not the top of a git work tree"):
        snapshot(tmp_path)


def _run(tree: Path, wheels_dir: Path, out: Path) -> subprocess.CompletedProcess[str]:
    args = ["run", "fixed-in-commit", "--corpus", str(fake_mlx.FIXTURES), "--mlx", str(tree)]
    args += ["--no-index", "--find-links", str(wheels_dir), "--backend", "cpu"]
    return subprocess.run(
        [*MGRADCHECK, *args, "--json", str(out), "-q"], capture_output=True, text=True, timeout=300
    )


def test_uncommitted_changes_are_built_and_compared(fake_wheels: Path, tmp_path: Path) -> None:
    history = make_history(tmp_path / "mlx")
    git(history.path, "checkout", "--quiet", history.shas[2])  # before the fix
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    ran = _run(history.path, fake_wheels, base)  # a 1.3.0 build: the bug should be gone
    assert ran.returncode == 1, ran.stdout + ran.stderr
    (history.path / "FIXED").write_text("yes\n")  # the patch, not committed
    ran = _run(history.path, fake_wheels, head)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (before,), (after,) = (json.loads(p.read_text())["results"] for p in (base, head))
    assert (before["verdict"], after["verdict"]) == ("REGRESSED", "as expected")
    from mgradcheck.builds.work_tree import snapshot

    built = wheels.builds_root() / "wheels" / wheels.target_key(Target.current("cpu"))
    keys = sorted(p.name for p in built.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert keys == sorted([history.shas[2], snapshot(history.path).key])
    compared = subprocess.run(
        [*MGRADCHECK, "report", "compare", str(base), str(head)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "FIXED (1)" in compared.stdout and "fixed-in-commit" in compared.stdout
    record = built / history.shas[2] / wheels.BUILT
    stamp = record.stat().st_mtime_ns
    git(history.path, "checkout", "--quiet", "--", "FIXED")  # clean again: its commit's wheel
    again = _run(history.path, fake_wheels, base)
    assert again.returncode == 1, again.stdout + again.stderr
    assert record.stat().st_mtime_ns == stamp and len(list(built.iterdir())) == len(keys)
