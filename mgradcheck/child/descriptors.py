"""Files the parent passes down as descriptors (``/dev/fd/N``): knowing them again, reopening them.

The result (:mod:`mgradcheck.child.bootstrap`) and a batch's log
(:mod:`mgradcheck.child.batch_log`) both arrive this way. Standard library only:
this runs under whatever Python the user points mgradcheck at.
"""

from __future__ import annotations

import os

PASSED = "/dev/fd/"  # how the parent names a file it passed down as a descriptor


def passed_fd(path: str) -> int | None:
    """N for ``/dev/fd/N``, else None (a file named by its path: a test's)."""
    return int(path[len(PASSED) :]) if path.startswith(PASSED) else None


def identity(fd: int) -> tuple[int, int] | None:
    """Which file descriptor ``fd`` is now, to know it again later."""
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def reopen(fd: int, seen: tuple[int, int] | None, flags: int) -> int:
    """Open again, with ``flags``, the file the parent passed down as descriptor ``fd``.

    An entry may have closed (``os.closerange(3, ...)``) or reused descriptor ``fd``
    since ``seen`` was taken; the parent still holds the same file at the same number,
    which Linux lets this process open again through the parent's ``/proc`` entry."""
    if seen is not None and identity(fd) == seen:
        return os.open(f"{PASSED}{fd}", flags)  # Linux opens the file again; macOS copies fd
    return os.open(f"/proc/{os.getppid()}/fd/{fd}", flags)
