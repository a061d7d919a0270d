"""Running out of what every child needs: disk space, file descriptors, processes.

None of them is an entry's doing, nor a bug of ours. Each is the environment's failure
(exit 3, one line naming what ran out), and the run stops there: every entry after would
meet the same want, and judged by it would turn a known bug into an error. The reports
written as entries finished keep what did.
"""

from __future__ import annotations

import contextlib
import errno
import resource
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from mgradcheck.errors import EnvironmentFailure

R = TypeVar("R")
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
# Each errno that means the machine, not the child, is short: pipe() and open() past the
# descriptor limit (EMFILE) or the system's table (ENFILE); fork() past the process limit or
# a container's pids.max (EAGAIN).
EXHAUSTED = frozenset({*_NO_SPACE, errno.EMFILE, errno.ENFILE, errno.EAGAIN})


class NoSpace(EnvironmentFailure):
    """The disk under the run's scratch directory is full: no entry can be judged there."""


class Exhausted(EnvironmentFailure):
    """The run's file descriptors or processes ran out: no child can be started."""


def no_space(directory: Path) -> NoSpace:
    return NoSpace(
        f"no space left in {directory} for a child's spec and result; "
        "free some, or move the cache with $MGRADCHECK_CACHE"
    )


def _limit(which: int) -> str:
    soft, _ = resource.getrlimit(which)
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


def _no_processes(what: str) -> Exhausted:
    return Exhausted(
        f"out of processes: cannot start {what} (ulimit -u is {_limit(resource.RLIMIT_NPROC)}; "
        "a container's or cgroup's pids.max counts too); raise the limit, or lower -j"
    )


def exhausted(exc: OSError, directory: Path) -> EnvironmentFailure | None:
    """What ``exc``, met while starting a child working in ``directory``, says ran out;
    None when it is no want of the machine's."""
    if exc.errno in _NO_SPACE:
        return no_space(directory)
    if exc.errno == errno.EMFILE:
        return Exhausted(
            "out of file descriptors: mgradcheck may hold "
            f"{_limit(resource.RLIMIT_NOFILE)} open (ulimit -n); raise the limit, or lower -j"
        )
    if exc.errno == errno.ENFILE:
        return Exhausted("out of file descriptors: the system's table of open files is full")
    if exc.errno == errno.EAGAIN:
        return _no_processes("a child")
    return None


@contextlib.contextmanager
def raised_as_exhausted(directory: Path) -> Iterator[None]:
    """Raise an :class:`OSError` that says the machine ran out as what ran out (see
    :func:`exhausted`); any other as it is."""
    try:
        yield
    except OSError as exc:
        failure = exhausted(exc, directory)
        if failure is None:
            raise
        raise failure from None


def start(thread: threading.Thread) -> None:
    """Start ``thread``; a thread is a process to the limit on them, and runs out with them."""
    try:
        thread.start()
    except RuntimeError:  # "can't start new thread": the only error start() has of its own
        raise _no_processes("a thread") from None


def submit(pool: ThreadPoolExecutor, task: Callable[[], R]) -> Future[R]:
    """``pool.submit(task)``; a thread it starts runs out with processes, as :func:`start`'s."""
    try:
        return pool.submit(task)
    except RuntimeError:  # "can't start new thread": this pool is never shut down while in use
        raise _no_processes("a thread") from None


__all__ = [
    "EXHAUSTED", "Exhausted", "NoSpace", "exhausted", "no_space", "raised_as_exhausted", "start",
    "submit",
]  # fmt: skip
