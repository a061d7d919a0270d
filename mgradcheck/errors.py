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


# What each catchable signal does to a command (SIGKILL and SIGSTOP cannot be caught; a
# stopped run still judges timeouts by each child's own clock, see run.child_result):
# - these stop it as an interrupt, with what finished written: the user's Ctrl-C and
#   Ctrl-\\, a closed terminal, a polite kill, a CPU-time limit reached;
INTERRUPTING = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU")
    if hasattr(signal, name)
)
# - these mean nothing to mgradcheck, which sets no timer and takes no request by signal,
#   and a stray one (a child's, a monitoring tool's) must not end a run that would lose
#   its report: they are taken and dropped. A Python handler, not SIG_IGN, so that the
#   children started meanwhile get the default back when they start.
DROPPED = tuple(
    getattr(signal, name)
    for name in ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGIO", "SIGPWR")
    if hasattr(signal, name)
)
# The rest keep their defaults: SIGPIPE and SIGXFSZ are ignored by Python already (a write
# then fails as an error); SIGCHLD, SIGURG, SIGWINCH and SIGCONT are ignored by default;
# SIGTSTP, SIGTTIN and SIGTTOU stop the command as job control means; SIGSEGV, SIGBUS,
# SIGILL, SIGFPE, SIGABRT, SIGTRAP and SIGSYS mean a fault in this process, so they end it
# (the reports written as entries finished are kept).


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Turn the interrupting signals into :class:`Interrupted` in the main thread for a
    while, and drop the ones that mean nothing here."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signum)

    def drop(signum: int, frame: FrameType | None) -> None:
        pass

    previous = {s: signal.signal(s, handler) for s in INTERRUPTING}
    previous.update({s: signal.signal(s, drop) for s in DROPPED})
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
