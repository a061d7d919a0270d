"""Rewrite the report files as entries finish, so a killed run still leaves them valid.

:class:`IncrementalWriter` is a display that wraps the real one: every time
the runner reports a finished entry it passes the news on, then rewrites each
report file (atomically) from a snapshot of what has finished so far. A
SIGKILL of the parent, which no handler can catch, therefore leaves files
that parse and hold every entry that finished before it.

Snapshots say ``interrupted: true`` and carry ``meta.partial`` (finished of
planned): a snapshot is only ever read as the final word when the run died,
and then that is what it was. The run's own final write replaces them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mgradcheck.atomic import WriteError
from mgradcheck.results import EntryResult, Report
from mgradcheck.runner import Display

Snapshot = Callable[[Sequence[EntryResult], int], Report]


class IncrementalWriter:
    """A :class:`~mgradcheck.runner.Display` that also rewrites the report files."""

    def __init__(
        self,
        display: Display,
        snapshot: Snapshot,
        write: Callable[[Report], None],
        warn: Callable[[str], None],
    ) -> None:
        self.display = display
        self.snapshot = snapshot
        self.write = write
        self.warn = warn
        self.finished: list[EntryResult] = []
        self.planned = 0
        self.failed = False

    def _save(self) -> None:
        if self.failed:
            return
        try:
            self.write(self.snapshot(self.finished, self.planned))
        except WriteError as exc:
            # A full disk should not end a long run; the final write will try (and report) again.
            self.failed = True
            self.warn(f"{exc}; not updating the report files again until the run ends")

    def start(self, total: int) -> None:
        self.planned = total
        self.display.start(total)
        self._save()

    def entry_finished(self, result: EntryResult) -> None:
        self.finished.append(result)
        self.display.entry_finished(result)
        self._save()

    def stop(self) -> None:
        self.display.stop()
