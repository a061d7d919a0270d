"""Tell an interrupting signal (SIGINT, SIGTERM, SIGHUP...) from a child apart from one from
the user, while children run.

A child can signal its parent (``os.kill(os.getppid(), SIGTERM)``); taken for the
user's, that stopped the run with every entry "not run" and nothing pointing at
the culprit. While a run goes on in the main thread of a process with no other
thread, the interrupting signals are blocked and taken by one thread with ``sigtimedwait``,
which says who sent each. One sent from a child's process tree stops that child
alone (its entry is an error saying so) and the run goes on; any other is
handed to the main thread as if it had arrived there. Children unblock them
first thing (``child/contain.py``). Elsewhere (a run in a worker
thread, a platform without ``sigtimedwait``) signals arrive as they always did.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import threading
from collections.abc import Callable

from mgradcheck.errors import INTERRUPTING
from mgradcheck.run import resources

WATCHED = set(INTERRUPTING)
# Sent by close() to the watching thread alone, so that it ends at once instead of at its
# next timeout (a run's last step waited for it); Linux's first real-time signal.
WAKE = getattr(signal, "SIGRTMIN", None)
JOIN = 5.0  # seconds: a watcher not woken by then is left behind (a daemon thread)


class SignalWatch:
    """Blocks the interrupting signals in this thread (and the threads it starts) until :meth:`close`."""

    def __init__(self, culprit: Callable[[int, int], bool]) -> None:
        """``culprit(pid, signum)`` stops the child that ``pid`` belongs to and says whether there was one."""
        self.culprit = culprit
        self.done = threading.Event()
        self.waited = WATCHED | ({WAKE} if WAKE is not None else set())
        signal.pthread_sigmask(signal.SIG_BLOCK, self.waited)
        self.thread = threading.Thread(target=self._watch, name="mgc-signals", daemon=True)
        try:
            resources.start(self.thread)
        except BaseException:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, self.waited)  # or a Ctrl-C goes unheard
            raise

    @classmethod
    def start(cls, culprit: Callable[[int, int], bool]) -> SignalWatch | None:
        usable = (
            hasattr(signal, "sigtimedwait")
            and threading.current_thread() is threading.main_thread()
            and threading.active_count() == 1  # no thread that would still take the signals
        )
        return cls(culprit) if usable else None

    def _watch(self) -> None:
        while not self.done.is_set():
            # close() wakes it; without WAKE, how long close() may wait for it.
            info = (
                signal.sigwaitinfo(self.waited)
                if WAKE is not None
                else signal.sigtimedwait(self.waited, 0.05)
            )
            if info is None or info.si_signo == WAKE:
                continue
            if (
                info.si_pid
                and info.si_pid != os.getpid()
                and self.culprit(info.si_pid, info.si_signo)
            ):
                continue
            self._deliver(info.si_signo)

    def _deliver(self, signum: int) -> None:
        """What the signal would have done, in the main thread."""
        handler = signal.getsignal(signum)
        if callable(handler):
            _thread.interrupt_main(signal.Signals(signum))  # its handler runs there, as if it came
        elif handler == signal.SIG_DFL:
            self.done.set()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)  # this thread: die by it
            signal.raise_signal(signum)

    def close(self) -> None:
        self.done.set()
        if WAKE is not None and self.thread.ident is not None and self.thread.is_alive():
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                signal.pthread_kill(self.thread.ident, WAKE)
        self.thread.join(timeout=JOIN)
        if WAKE is not None:  # a wake-up it did not take is not for the main thread
            while signal.sigtimedwait({WAKE}, 0) is not None:
                pass
        # What arrived meanwhile and was not taken is delivered now, to the main thread.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, self.waited)
