"""The log a batch child appends a line to before and after each of its items.

The parent reads it once the child is dead (see :mod:`mgradcheck.run.batches`): a
``start`` line without its ``done`` line names the item the child died in. Under
``mgradcheck`` the log is a file with no name that the parent passed down as
``/dev/fd/N`` (the child code gets that path as ``__mgradcheck_log__``), so no
other child can open or rewrite it; a plain path (a test of this module) is a
file opened by its name.

Each line is written whole, by a descriptor opened for it alone: an item may close
every descriptor it did not open (``os.closerange(3, 256)``) or reuse their numbers.
When descriptor N is no longer the log, the parent's own copy is opened again
through ``/proc/<parent>/fd/N`` (Linux), as the bootstrap does for the result.

Standard library only, and nothing of ours but :mod:`mgradcheck.child.descriptors`:
this runs under whatever Python the user points mgradcheck at.
"""

from __future__ import annotations

import os

from mgradcheck.child.descriptors import identity, passed_fd, reopen

_APPEND = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class BatchLog:
    """Appends lines to the log at ``path``."""

    def __init__(self, path: str) -> None:
        self.fd = passed_fd(path)
        self.path = path if self.fd is not None else os.path.abspath(path)
        # What the descriptor is now, before an item can close or replace it.
        self.seen = identity(self.fd) if self.fd is not None else None

    def _open(self) -> int:
        if self.fd is None:
            flags = _APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            return os.open(self.path, flags, 0o600)
        return reopen(self.fd, self.seen, _APPEND)

    def write(self, line: str) -> None:
        """Append ``line`` (one JSON object, no newline) and a newline."""
        data = (line + "\n").encode("utf-8", "replace")
        fd = self._open()
        try:
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)


__all__ = ["BatchLog"]
