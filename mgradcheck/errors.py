"""Every error that stops a command, and the exit status each one means.

What a child does is data (an outcome, judged into a verdict); these are the
failures of the command itself. Each class knows its exit status and the lines
it prints, so the command line reports all of them the same way (one
``mgradcheck: error: ...`` line each, never a traceback) from one place
(:func:`mgradcheck.cli.common.handle_errors`). An install failure is an
environment error, not bad usage; our own bug is a harness error, never an MLX
bug.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import ClassVar

from mgradcheck.exitcodes import ExitCode


class MgradcheckError(Exception):
    """A failure a command reports in plain lines, with its own exit status."""

    exit_code: ClassVar[int] = ExitCode.USAGE

    def lines(self) -> list[str]:
        return [str(self)]


class UsageError(MgradcheckError):
    """Bad input from the user: an option, an entry id, a report path, a release that does not exist."""


class CorpusError(MgradcheckError):
    """One or more problems in corpus files, each printed as ``file:line: field: message``."""

    def __init__(self, problems: Sequence[Exception]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class WriteError(UsageError):
    """A report could not be written; the previous file, if any, is untouched."""


class ReleaseError(UsageError):
    """A release that cannot be had as asked: bad version text, a bad index URL, not listed."""


class EnvironmentFailure(MgradcheckError):
    """Something outside mgradcheck failed: an install, the package index, the target interpreter."""

    exit_code = ExitCode.ENVIRONMENT


class HarnessError(MgradcheckError):
    """mgradcheck's own bug, reported as ours."""

    exit_code = ExitCode.HARNESS


class Interrupted(MgradcheckError):
    """The user (SIGINT) or the system (SIGTERM) asked the command to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return ExitCode.for_signal(self.signum)

    def lines(self) -> list[str]:
        return [f"interrupted by {self}"]


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Turn SIGTERM and SIGINT into :class:`Interrupted` in the main thread for a while."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
