"""Every exit status mgradcheck returns, in one place."""

from __future__ import annotations

import enum
import signal
from collections.abc import Iterable

from mgradcheck.outcomes import Standing


class ExitCode(enum.IntEnum):
    OK = 0
    UNEXPECTED = 1  # a verdict that needs a person (or, for sweep, a finding)
    USAGE = 2  # bad options, a bad corpus file, a report that cannot be written
    ENVIRONMENT = (
        3  # a release that cannot be installed, an index out of reach, an unusable interpreter
    )
    HARNESS = 4  # mgradcheck's own bug, never an MLX one
    INTERRUPTED = 128 + signal.SIGINT

    @classmethod
    def for_signal(cls, signum: int) -> int:
        """The shell's convention: a command stopped by signal N exits 128 + N."""
        return 128 + int(signum)


def for_verdicts(verdicts: Iterable[Standing]) -> ExitCode:
    """0 when every verdict is as expected (or skipped), or every test passed (or skipped); else 1."""
    return ExitCode.UNEXPECTED if any(v.is_failure for v in verdicts) else ExitCode.OK


_MEANINGS = {
    ExitCode.USAGE: "bad usage or corpus",
    ExitCode.ENVIRONMENT: "an environment that cannot be made or used",
    ExitCode.HARNESS: "an mgradcheck bug",
    ExitCode.INTERRUPTED: "interrupted (143 on SIGTERM)",
}


def describe(ok: str, unexpected: str | None = None, *, environment: bool = True) -> str:
    """A command's ``Exit status:`` paragraph for its help, in one form for every command.

    Only 0 and 1 mean something of the command's own (``ok``, ``unexpected``: omit
    it for a command that never exits 1); the rest mean the same everywhere, 3 left
    out where the command makes and uses no environment.
    """
    codes = [(ExitCode.OK, ok)]
    if unexpected is not None:
        codes.append((ExitCode.UNEXPECTED, unexpected))
    codes += [(c, m) for c, m in _MEANINGS.items() if environment or c is not ExitCode.ENVIRONMENT]
    return "Exit status: " + ", ".join(f"{int(c)} {m}" for c, m in codes) + "."
