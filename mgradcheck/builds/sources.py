"""MLX's git history, for what needs MLX's sources: builds of single commits, MLX's own tests.

A repository is the clone the user names (``--mlx-repo PATH``: a work tree or a
bare repository), or the one kept in the cache (``sources/mlx.git``, a bare
clone of upstream made on first use and fetched when a revision is missing).
Git runs as a plain subprocess with an argument list; nothing here needs a
work tree: files come out of the history with ``git archive``.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from mgradcheck.errors import EnvironmentFailure, UsageError
from mgradcheck.paths import cache_root
from mgradcheck.upstream import REPOSITORY_URL, is_commit

UPSTREAM = f"{REPOSITORY_URL}.git"
GIT_TIMEOUT = 1800.0


class GitError(EnvironmentFailure):
    """Git is missing, or a git command failed for a reason other than the user's input."""


def git(repo: Path, *args: str, timeout: float = GIT_TIMEOUT, work_tree: Path | None = None) -> str:
    """Run ``git`` on ``repo`` (its git directory; in ``work_tree`` for commands that need
    one) and return its output; raise GitError."""
    return git_bytes(repo, *args, timeout=timeout, work_tree=work_tree).decode("utf-8", "replace")


def git_bytes(
    repo: Path, *args: str, timeout: float = GIT_TIMEOUT, work_tree: Path | None = None
) -> bytes:
    """:func:`git`'s output as git wrote it: a binary diff is not text."""
    binary = shutil.which("git")
    if binary is None:
        raise GitError(
            "git is not installed (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install)"
        )
    tree = [f"--work-tree={work_tree}"] if work_tree is not None else []
    try:
        done = subprocess.run(
            [binary, f"--git-dir={repo}", *tree, *args],
            cwd=work_tree,
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} in {repo} took more than {timeout:g}s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {' '.join(args[:2])} in {repo} failed: {lines[-1] if lines else done.returncode}"
        )
    return done.stdout


def git_dir(path: Path) -> Path:
    """The git directory of a clone given as a work tree or as a bare repository."""
    path = path.expanduser().resolve()
    if (path / ".git").exists():
        dotgit = path / ".git"
        if dotgit.is_file():  # a worktree or submodule: "gitdir: ..."
            text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                return (path / text.split(":", 1)[1].strip()).resolve()
        return dotgit
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path
    raise UsageError(f"--mlx-repo {path}: not a git repository (a clone of {UPSTREAM})")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def cached_clone() -> Path:
    """The bare clone of upstream MLX kept in the cache, made on first use."""
    root = cache_root() / "sources"
    root.mkdir(parents=True, exist_ok=True)
    repo = root / "mlx.git"
    with _locked(root / ".mlx.lock"):
        if not (repo / "HEAD").is_file():
            partial = root / "mlx.git.partial"
            shutil.rmtree(partial, ignore_errors=True)
            binary = shutil.which("git")
            if binary is None:
                raise GitError(
                    "git is not installed (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install)"
                )
            done = subprocess.run(
                [binary, "clone", "--bare", "--quiet", UPSTREAM, str(partial)],
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            if done.returncode != 0:
                shutil.rmtree(partial, ignore_errors=True)
                raise GitError(
                    f"cannot clone {UPSTREAM} (offline?); give a local clone with --mlx-repo PATH"
                )
            partial.rename(repo)  # a half-made clone is never taken for a whole one
    return repo


def repository(path: Path | None = None) -> Path:
    """The git directory of MLX's history: ``path`` (``--mlx-repo``), else the cached clone."""
    return git_dir(path) if path is not None else cached_clone()


def resolve(repo: Path, revision: str, fetch: bool = True) -> str:
    """The full hash of a tag, branch or (abbreviated) commit; fetched from upstream if missing."""
    if revision.startswith("-") or not revision.strip():
        raise UsageError(f"{revision!r} is not a git revision")
    cached = repo == cache_root() / "sources" / "mlx.git"
    if fetch and cached and not is_commit(revision) and _is_branch(repo, revision):
        # A branch of the cached clone means its tip upstream now (offline: as last fetched).
        with contextlib.suppress(GitError):
            git(repo, "fetch", "--quiet", UPSTREAM, f"+refs/heads/{revision}:refs/heads/{revision}")
    for attempt in range(2):
        try:
            return git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").strip()
        except GitError:
            if attempt or not fetch or not cached:
                break
            git(repo, "fetch", "--quiet", "--tags", UPSTREAM, "+refs/heads/*:refs/heads/*")
    raise UsageError(f"no commit {revision!r} in {repo}")


def _is_branch(repo: Path, name: str) -> bool:
    try:
        git(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}")
    except GitError:
        return False
    return True


def export(repo: Path, revision: str, paths: Sequence[str], dest: Path) -> Path:
    """Write the files under ``paths`` at ``revision`` into ``dest`` (as in the tree); return ``dest``."""
    binary = shutil.which("git")
    if binary is None:
        raise GitError("git is not installed")
    commit = resolve(repo, revision)
    done = subprocess.run(
        [binary, f"--git-dir={repo}", "archive", "--format=tar", commit, "--", *paths],
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"cannot take {', '.join(paths)} at {revision}: {lines[-1] if lines else ''}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+: no links out of dest
            archive.extractall(dest, filter="data")
        else:  # pragma: no cover - older interpreters
            archive.extractall(dest)
    return dest


__all__ = [
    "UPSTREAM",
    "GitError",
    "cached_clone",
    "export",
    "git",
    "git_bytes",
    "git_dir",
    "repository",
    "resolve",
]
