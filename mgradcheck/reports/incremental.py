"""Rewrite the report files as entries finish, so a killed run still leaves them valid.

:class:`SnapshotWriter` receives the partial reports of a running run (see
:func:`mgradcheck.run.stages.execute`) and rewrites each report file from
them, atomically. A SIGKILL of the parent, which no handler can catch,
therefore leaves files that parse and hold every entry that finished before it.
"""

from __future__ import annotations

from collections.abc import Callable

from mgradcheck.errors import WriteError
from mgradcheck.reports.outputs import Outputs, write
from mgradcheck.run.results import Report


class SnapshotWriter:
    """Writes each partial report to the outputs; after a failed write, waits for the final one."""

    def __init__(
        self,
        outputs: Outputs,
        warn: Callable[[str], None],
        write: Callable[[Report, Outputs], None] = write,
    ) -> None:
        self.outputs = outputs
        self.warn = warn
        self.write = write
        self.failed = False

    def __call__(self, partial: Report) -> None:
        if self.failed:
            return
        try:
            self.write(partial, self.outputs)
        except WriteError as exc:
            # A full disk should not end a long run; the final write will try (and report) again.
            self.failed = True
            self.warn(f"{exc}; not updating the report files again until the run ends")
