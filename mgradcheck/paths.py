"""Where mgradcheck keeps things between runs: one cache root, marked as a cache."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.errors import UsageError

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mgradcheck.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


class CacheError(UsageError):
    """The cache directory cannot be made or written."""


def cache_root() -> Path:
    """``$MGRADCHECK_CACHE``, else the user cache directory (XDG on Linux).

    A relative ``$MGRADCHECK_CACHE`` means the directory the command runs in (children
    run elsewhere). The root is marked with ``CACHEDIR.TAG``, which tells backup tools
    and ``tar --exclude-caches`` to skip all of it, only where that hides nothing of the
    user's: a directory mgradcheck makes, or one that is empty or already a cache;
    anything else gets a ``mgradcheck/`` directory of its own inside it.
    """
    override = os.environ.get("MGRADCHECK_CACHE")
    if override:
        root = Path(os.path.abspath(override))
        if _holds_other_things(root):
            root = root / "mgradcheck"
    else:
        root = user_cache_dir()
    make_dir(root)
    tag = root / "CACHEDIR.TAG"
    if not tag.exists():
        try:
            write_text(tag, CACHEDIR_TAG)
        except UsageError as exc:
            raise cache_error(root, str(exc)) from None
    return root


def user_cache_dir(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> Path:
    """The user cache directory as platformdirs names it, without its import on Linux and
    macOS (a tenth of a short run's start-up): ``$XDG_CACHE_HOME/mgradcheck`` where that is
    an absolute path, else ``~/.cache/mgradcheck`` (``~/Library/Caches/mgradcheck`` on macOS)."""
    if platform == "darwin" or platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        xdg = environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            return Path(xdg) / "mgradcheck"
        home = "~/Library/Caches" if platform == "darwin" else "~/.cache"
        return Path(os.path.expanduser(home)) / "mgradcheck"
    from platformdirs import user_cache_dir as platform_dir  # Windows and the rest

    return Path(platform_dir("mgradcheck", appauthor=False))


def _holds_other_things(root: Path) -> bool:
    """Whether ``root`` is a directory with things in it and no cache tag.

    Two commands started at once on a new cache must not keep their environments and
    results in two roots: the tag another mgradcheck is writing (``.CACHEDIR.TAG.XXXXXXXX.tmp``)
    is not another thing, and as it writes the tag before anything else, what is seen
    before the tag is looked for again belongs to the cache.
    """
    try:
        with os.scandir(root) as entries:
            other = any(not entry.name.startswith(".CACHEDIR.TAG.") for entry in entries)
    except OSError:
        return False  # missing (mgradcheck makes it), or not a directory (make_dir says so)
    return other and not (root / "CACHEDIR.TAG").exists()


def make_dir(path: Path) -> Path:
    """``path`` under the cache, made if missing; one clear error if it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cache_error(path, f"cannot make {path}: {exc.strerror or exc}") from None
    return path


def cache_error(path: Path, problem: str) -> CacheError:
    where = (
        "set by $MGRADCHECK_CACHE"
        if os.environ.get("MGRADCHECK_CACHE")
        else "choose another with $MGRADCHECK_CACHE"
    )
    return CacheError(f"the cache is not writable: {problem} ({where})")


def safe_name(text: str) -> str:
    """A file-name-safe rendering of a version or label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def kernel_dir(root: Path, mlx: str | None, backend: str | None, python: str, build: str) -> Path:
    """Where one build of MLX keeps its compiled CPU kernels, under ``root`` (its children's
    ``TMPDIR``s are seeded from it and merged back into it: see :mod:`mgradcheck.run.kernels`).

    Old releases name their kernel files the same way across versions, and a build of a
    branch the same way as its version's release, so each build gets its own directory;
    it persists so warm kernels are reused.
    """
    name = safe_name(f"mlx-{mlx}-{backend}-py{python}-{build}")
    return make_dir(root / name)


def last_report() -> Path:
    return cache_root() / "last-run.json"


SCRATCH_PREFIX = "run-"
_SCRATCH_LOCK = ".lock"


@contextlib.contextmanager
def run_scratch() -> Iterator[Path]:
    """A directory private to one run (its probe, specs and results), removed when it ends.

    Each lives under ``cache_root()/runs/`` and holds an flock on its own lock
    file while the run lives: a directory of ours whose lock can be taken
    belongs to a run that was killed, and is removed here, by the next run.
    """
    root = make_dir(cache_root() / "runs")
    _remove_stale(root)
    try:
        path = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=root))
    except OSError as exc:
        raise cache_error(root, f"cannot write in {root}: {exc.strerror or exc}") from None
    # Locked before it gets the name others look for, so no one sees it unlocked.
    fd = os.open(path / "lock.new", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(path / "lock.new", path / _SCRATCH_LOCK)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _remove_stale(root: Path) -> None:
    for path in root.glob(f"{SCRATCH_PREFIX}*"):
        try:
            fd = os.open(path / _SCRATCH_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # not ours, or still being made: left alone
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live run holds it
        else:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
