"""Every exit status mgradcheck returns, in one place."""

from __future__ import annotations

import enum
import signal
from collections.abc import Iterable

from mgradcheck.outcomes import Verdict


class ExitCode(enum.IntEnum):
    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    INTERRUPTED = 128 + signal.SIGINT
    TERMINATED = 128 + signal.SIGTERM


def for_verdicts(verdicts: Iterable[Verdict]) -> ExitCode:
    """0 when every verdict is as expected (or skipped), 1 otherwise."""
    return ExitCode.UNEXPECTED if any(v.is_failure for v in verdicts) else ExitCode.OK
