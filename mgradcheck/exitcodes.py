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
    TERMINATED = 128 + signal.SIGTERM

    @classmethod
    def for_signal(cls, signum: int) -> int:
        """The shell's convention: a command stopped by signal N exits 128 + N."""
        return 128 + int(signum)


def for_verdicts(verdicts: Iterable[Standing]) -> ExitCode:
    """0 when every verdict is as expected (or skipped), or every test passed (or skipped); else 1."""
    return ExitCode.UNEXPECTED if any(v.is_failure for v in verdicts) else ExitCode.OK
