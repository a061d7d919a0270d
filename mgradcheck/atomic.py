"""Write files so that a reader sees the old content or the new, never half of either.

A report path of ``-`` is standard output, as for every Unix tool: every
writer goes through :func:`write_text`, so every report option takes it.

A path that is not a file is written through, as a shell's ``>`` writes, never
replaced by one (which, as root, would put a file where ``/dev/null`` was): a
character device or a FIFO is opened for writing, and a name of one of this
process's descriptors (``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``) is
that descriptor, as bash takes it. A link to a file has the file it leads to
replaced, the link kept.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

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
    return _descriptor_problem(fd)


def _descriptor_problem(fd: int) -> str | None:
    """Why descriptor ``fd`` cannot take a report (closed, or open only for reading), or None."""
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        return "it is closed"
    if flags & os.O_ACCMODE == os.O_RDONLY:
        return "it is open for reading only"
    return None


def send_nowhere(stream: IO[str] | None = None) -> None:
    """Send what is still to come on ``stream`` (standard output) nowhere: its reader went
    away (EPIPE). Later writes and flushes, the one at exit too, then succeed instead of
    raising again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fd = (stream or sys.stdout).fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def _descriptor(path: Path) -> int | None:
    """The descriptor of this process that ``path`` names through ``/proc/PID/fd``, or None.

    The links are followed one at a time: the last one, ``/proc/PID/fd/N``, leads
    to what the descriptor has open (``pipe:[123]``, a file), not to a name.
    """
    own = re.compile(rf"/proc/{os.getpid()}/fd/(\d+)")
    name = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links in a row
        head, tail = os.path.split(name)
        name = os.path.join(os.path.realpath(head), tail)
        found = own.fullmatch(name)
        if found is not None:
            return int(found.group(1))
        try:
            name = os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name)))
        except OSError:
            return None
    return None


def _is_stream(path: Path) -> bool:
    """Whether ``path``, links followed, is a character device or a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def written_through(path: Path) -> bool:
    """Whether a report to ``path`` is written through rather than replaced: a device, a
    FIFO, one of our descriptors (standard output too). It takes one report, at the end."""
    path = Path(path)
    return path == STDOUT or _descriptor(path) is not None or _is_stream(path)


def _not_a_file(path: Path) -> str | None:
    """Why ``path``, which exists and is no regular file or directory, takes no report, or None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return None
    return "it is not a file, a character device or a FIFO"


def _write_through(path: Path, data: bytes) -> None:
    """Write ``data`` to the device, FIFO or descriptor ``path`` names, as a shell would.

    A FIFO is opened without waiting: with no process reading it, the write fails
    at once, where a shell would wait for a reader for ever.
    """
    descriptor = _descriptor(path)
    try:
        if descriptor is not None:
            problem = _descriptor_problem(descriptor)
            if problem is not None:
                raise WriteError(f"cannot write {path}: {problem}")
            for stream in (sys.stdout, sys.stderr):  # what they hold comes first, as written
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    stream.flush()
            fd = os.dup(descriptor)
        else:
            flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
            fd = os.open(path, flags)
            os.set_blocking(fd, True)  # a reader is there: wait for it as a shell does
    except OSError as exc:
        why = "no process is reading it" if exc.errno == errno.ENXIO else exc.strerror or exc
        raise WriteError(f"cannot write {path}: {why}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write_stdout(text: str) -> None:
    problem = _stdout_problem()
    if problem is not None:
        raise WriteError(f"cannot write to standard output: {problem}")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        send_nowhere()
        raise WriteError(f"cannot write to standard output: {exc.strerror or exc}") from None


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory (``-``: stdout)."""
    path = Path(path)
    if path == STDOUT:
        _write_stdout(text)
        return
    data = text.encode("utf-8")
    if written_through(path):
        _write_through(path, data)
        return
    problem = _not_a_file(path)
    if problem is not None:
        raise WriteError(f"cannot write {path}: {problem}")
    if path.is_symlink():
        path = Path(os.path.realpath(path))
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
    descriptor = _descriptor(path)
    if descriptor is not None:
        problem = _descriptor_problem(descriptor)
    elif _is_stream(path):  # a FIFO is not opened: its reader would take that as the end
        problem = None if os.access(path, os.W_OK) else "permission denied"
    else:
        problem = _not_a_file(path) or _probe(
            Path(os.path.realpath(path)) if path.is_symlink() else path
        )
    if problem is not None:
        raise WriteError(f"cannot write {path}: {problem}")


def _probe(path: Path) -> str | None:
    """Why no file can be made at ``path`` (a directory, none to make it in...), or None."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        return "it is a directory"
    if not parent.is_dir():
        return f"directory {parent} does not exist"
    _sweep(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        return str(exc.strerror or exc)
    os.close(fd)
    os.unlink(tmp)
    return None
