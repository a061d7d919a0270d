"""Write files so that a reader sees the old content or the new, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
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


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    path = Path(path)
    data = text.encode("utf-8")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        # mkstemp makes the file 0600; a report is for others to read too.
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
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
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise WriteError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        raise WriteError(f"cannot write {path}: directory {parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)
