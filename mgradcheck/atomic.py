"""Write files so that a reader sees the old content or the new, never half of either.

A report path of ``-`` is standard output, as for every Unix tool: every
writer goes through :func:`write_text`, so every report option takes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import tempfile
import threading
from pathlib import Path

from mgradcheck.errors import WriteError


def _read_umask() -> int:
    # The only way to read the umask is to set it; do it once, at import, before threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _mode_for(path: Path) -> int:
    """Keep an existing file's mode; a new file gets 0644 less the process umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o644 & ~_UMASK


STDOUT = Path("-")

_swept: set[str] = set()
_swept_lock = threading.Lock()


def _sweep(path: Path) -> None:
    """Remove the temporary files a killed writer of ``path`` left, once per path and process.

    Only names of our own making (``.NAME.XXXXXXXX.tmp`` or ``.probe``), and only
    when unlocked: a writer holds an flock on its temporary file while it writes.
    """
    key = os.path.abspath(path)
    with _swept_lock:
        if key in _swept:
            return
        _swept.add(key)
    ours = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.(tmp|probe)")
    try:
        names = os.listdir(path.parent if str(path.parent) else ".")
    except OSError:
        return
    for name in names:
        if not ours.fullmatch(name):
            continue
        stale = path.parent / name
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(stale)
        except OSError:
            pass  # being written right now, or already gone
        finally:
            os.close(fd)


def _locked_temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path``, flocked, and still ours once locked.

    Between creating the file and locking it, another process's sweep may see it
    unlocked and remove it: then the name no longer leads to our file, and we
    start again.
    """
    for _ in range(8):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
        fcntl.flock(fd, fcntl.LOCK_EX)  # ours while we write: no sweep removes it
        with contextlib.suppress(FileNotFoundError):
            if os.stat(tmp).st_ino == os.fstat(fd).st_ino:
                return fd, tmp
        os.close(fd)
    raise OSError(f"its temporary files kept disappearing in {path.parent or '.'}")


def _stdout_problem() -> str | None:
    """Why standard output cannot take a report (closed, or open only for reading), or None."""
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):  # None: started with fd 1 closed
        return "it is closed"
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return None  # not a file descriptor (a test's capture): it takes text
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        return "it is closed"
    if flags & os.O_ACCMODE == os.O_RDONLY:
        return "it is open for reading only"
    return None


def _write_stdout(text: str) -> None:
    problem = _stdout_problem()
    if problem is not None:
        raise WriteError(f"cannot write to standard output: {problem}")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        # A reader that went away (EPIPE): later flushes, at exit too, go nowhere instead
        # of raising again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        raise WriteError(f"cannot write to standard output: {exc.strerror or exc}") from None


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory (``-``: stdout)."""
    path = Path(path)
    if path == STDOUT:
        _write_stdout(text)
        return
    data = text.encode("utf-8")
    _sweep(path)
    try:
        fd, tmp = _locked_temporary(path)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        # mkstemp makes the file 0600; a report is for others to read too.
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            # Renamed while still locked: closing first would let a sweep remove it.
            os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        # The run's SIGINT/SIGTERM handler raises wherever the main thread is,
        # mid-write included; leave no temporary file behind.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_writable(path: Path) -> None:
    """Fail now, before a long run, if ``path`` could not be written later."""
    path = Path(path)
    if path == STDOUT:
        problem = _stdout_problem()
        if problem is not None:
            raise WriteError(f"cannot write to standard output: {problem}")
        return
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise WriteError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        raise WriteError(f"cannot write {path}: directory {parent} does not exist")
    _sweep(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)
