"""The parent's side of a batch child's log (the child's: :mod:`mgradcheck.child.batch_log`).

A child that runs several items appends a ``start`` and a ``done`` line per item to
a file with no name that :func:`~mgradcheck.run.child_process.run_child` makes and
passes down as ``/dev/fd/N``: no sibling child can name it, let alone rewrite it.
The parent reads it once the child is dead, and meanwhile watches it grow: a child
whose log has stopped growing for one item's timeout is stuck in that item.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

LOG_BYTES = 16 << 20  # a done line holds capped texts (see mgradcheck.child.suite): far below
STALL_CHECKS = 4  # looks at a log per idle period: a stall is seen at most a quarter late


@dataclass
class ChildLog:
    """Asks ``run_child`` for a log; once the child is dead, ``data`` holds what it wrote
    (at most :data:`LOG_BYTES` + 1 bytes, so that one over the cap is seen to be).

    With ``idle``, a child whose log has not grown for that long is ended as on its
    timeout: a hang in a batch costs one item's timeout, not the whole batch's.
    """

    idle: float | None = None
    data: bytes = b""


class Stall:
    """Whether a child's log (descriptor ``fd``) has not grown for ``seconds``."""

    def __init__(self, fd: int, seconds: float) -> None:
        self.fd = fd
        self.seconds = seconds
        self.size = 0
        self.since = time.monotonic()

    def stalled(self, now: float) -> bool:
        size = os.fstat(self.fd).st_size
        if size != self.size:
            self.size, self.since = size, now
        return now - self.since >= self.seconds

    def wake(self, now: float) -> float:
        """When to look again: growth is seen only when looked for."""
        return min(self.since + self.seconds, now + self.seconds / STALL_CHECKS)


__all__ = ["LOG_BYTES", "ChildLog", "Stall"]
