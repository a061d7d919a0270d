"""A thread per task, each handing back what its task returned or raised, collected one by one.

What the runner's children need of a pool, without ``concurrent.futures``: it imports
``logging``, 5 ms of every run's start, for a pool that never holds more tasks than
children run at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Generic, TypeVar

from mgradcheck.run import resources

R = TypeVar("R")


class Workers(Generic[R]):
    """Tasks by key (each key once at a time); :meth:`collect` returns them as they end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._ended: SimpleQueue[tuple[int, R | BaseException]] = SimpleQueue()
        self._running: dict[int, threading.Thread] = {}

    def __len__(self) -> int:
        """How many tasks have not been collected."""
        return len(self._running)

    def start(self, key: int, task: Callable[[], R]) -> None:
        def work() -> None:
            try:
                self._ended.put((key, task()))
            except BaseException as exc:  # noqa: BLE001 - raised again by collect
                self._ended.put((key, exc))

        thread = threading.Thread(target=work, name=f"{self.name}_{key}")
        resources.start(thread)
        self._running[key] = thread

    def collect(self, timeout: float) -> tuple[int, R] | None:
        """The key and result of a task that ended, waiting up to ``timeout`` seconds for one
        (None if none did); what a task raised is raised here."""
        try:
            key, result = self._ended.get(timeout=timeout)
        except Empty:
            return None
        self._running.pop(key).join()
        if isinstance(result, BaseException):
            raise result
        return key, result

    def wait(self) -> dict[int, R]:
        """Wait for every task not collected; what those that returned returned, by key."""
        for thread in self._running.values():
            thread.join()
        self._running.clear()
        ended = dict(self._ended.get_nowait() for _ in range(self._ended.qsize()))
        return {
            key: result
            for key, result in sorted(ended.items())
            if not isinstance(result, BaseException)
        }


__all__ = ["Workers"]
