"""Tell a bug signature that would take any failure for its bug, for ``mgradcheck validate`` to warn about.

A verdict of "as expected" should mean that this bug reproduced, not that the
entry failed somehow: an open bug that starts failing for another reason (an
API that changed, a broken compiler, a control check that fails) must read as
unexpected. So an entry whose outcomes hold a failure (``fail``, ``error`` or
``crash``) needs a ``match``, and the rule for it is testable: it must match
none of the texts below, which a child's evidence holds whatever went wrong,
nor the empty text, nor the crash texts of every fatal signal (a crash
signature names its signals: SIGSEGV, or SIGSEGV and SIGABRT for a heap
corrupted one run and caught by malloc's checks the next).

A bug that reads out of bounds dies of whatever the memory it reads gives,
which differs from machine to machine: a segfault here, an abort where a
garbage size throws, a bus error elsewhere. So an entry tagged
``out-of-bounds`` whose match takes a segfault takes all three.
"""

from __future__ import annotations

import re

from mgradcheck.outcomes import Outcome

FAILURES = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH})

_HARNESS = "/site-packages/mgradcheck/child"
_EXCEPTIONS = ("Exception", "RuntimeError", "ValueError", "IndexError", "TypeError",
               "AttributeError", "KeyError", "NotImplementedError", "MemoryError")  # fmt: skip
# What any failed run's evidence (exception type, message, traceback, stderr)
# may hold: Python's and faulthandler's framing, the child's own frames, the
# check helpers' frames and the exception types a reproducer commonly meets.
GENERIC = (
    "Traceback (most recent call last):\n"
    f'  File "{_HARNESS}/bootstrap.py", line 293, in main\n    _run_code(spec, env_globals)\n'
    f'  File "{_HARNESS}/bootstrap.py", line 257, in _run_code\n    exec(compiled, scope)\n'
    '  File "corpus/some-entry.yaml", line 40, in <module>\n',
    f'  File "{_HARNESS}/checks.py", line 107, in assert_close\n'
    '    raise CheckFailed(f"{what}: observed {_fmt(obs)}, expected {_fmt(exp)}{where}")\n'
    "mgradcheck.child.checks.CheckFailed: value: observed 1.0, expected 2.0",
    f'  File "{_HARNESS}/checks.py", line 124, in assert_true\n    raise CheckFailed(message)\n',
    "CheckFailed",
    "AssertionError",
    *(f"{name}: something else went wrong" for name in _EXCEPTIONS),
    "exited with status 1 without a result",
    "no result after 60s",
)


def _crash(signal: str, fatal: str) -> str:
    return (
        f"killed by {signal}\nFatal Python error: {fatal}\n\n"
        "Current thread 0x00007f0000000000 (most recent call first):\n"
        f'  File "{_HARNESS}/bootstrap.py", line 257 in _run_code\n'
        f'  File "{_HARNESS}/launch.py", line 40 in <module>\n'
    )


# A match that takes all of these names no signal: it takes any crash.
CRASHES = (
    _crash("SIGSEGV", "Segmentation fault"),
    _crash("SIGABRT", "Aborted"),
    _crash("SIGBUS", "Bus error"),
    _crash("SIGILL", "Illegal instruction"),
    _crash("SIGFPE", "Floating-point exception"),
)


def too_broad(match: str | None, outcomes: tuple[Outcome, ...]) -> str | None:
    """Why ``match`` would take a failure of another cause for the bug, or None when it names its bug."""
    if not FAILURES.intersection(outcomes):
        return None
    if match is None:
        return "none is given, so any failure reads as this bug: give the error text or check that names it"
    pattern = re.compile(match)
    if pattern.search(""):
        return f"{match!r} matches any text"
    generic = next((text for text in GENERIC if pattern.search(text)), None)
    if generic is not None:
        first = generic.strip().splitlines()[0]
        return f"{match!r} matches what any failure shows ({first!r}): name this bug's own error text or check"
    if all(pattern.search(text) for text in CRASHES):
        return (
            f"{match!r} matches a crash by any signal: name the signals the bug dies of (SIGSEGV)"
        )
    return None


# What an out-of-bounds read may die of, by the memory it happens to read.
MEMORY_FAULTS = CRASHES[:3]


def one_fault(match: str | None, tags: tuple[str, ...]) -> str | None:
    """Why an out-of-bounds bug's ``match`` would miss its own crash on another machine, or None."""
    if match is None or "out-of-bounds" not in tags:
        return None
    pattern = re.compile(match)
    taken = [pattern.search(text) is not None for text in MEMORY_FAULTS]
    if taken[0] and not all(taken):
        return (
            f"{match!r} takes a segfault but not every signal an out-of-bounds read dies of, "
            "which depends on the memory it reads: name SIG(SEGV|ABRT|BUS)"
        )
    return None
