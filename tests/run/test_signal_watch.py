"""The thread that takes interrupting signals while children run: it ends when the run does."""

from __future__ import annotations

import signal
import threading

import pytest

from mgradcheck.run import signal_watch
from mgradcheck.run.signal_watch import SignalWatch


@pytest.mark.skipif(signal_watch.WAKE is None, reason="no real-time signals here")
def test_close_wakes_the_watcher_and_leaves_nothing_pending() -> None:
    """The watcher waits with no timeout: were it not woken, it would still be there."""
    done = threading.Event()

    def close_it() -> None:
        watch = SignalWatch(lambda pid, signum: False)
        watch.close()
        assert not watch.thread.is_alive()
        assert signal_watch.WAKE not in signal.sigpending()
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) & watch.waited == set()
        done.set()

    # In a thread of its own, as the run's main thread would: the mask is per thread.
    thread = threading.Thread(target=close_it)
    thread.start()
    thread.join(timeout=30)
    assert done.is_set()
