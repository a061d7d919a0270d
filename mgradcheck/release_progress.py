"""Progress for the commands that install and run releases (bisect, matrix, envs path, run --mlx).

Installs take seconds to minutes, so the current step is always on screen: a
Rich spinner with the step's text on a terminal, a plain line per step in CI
logs and pipes, nothing with ``--quiet``. Safe to call from worker threads.
"""

from __future__ import annotations

import sys
import threading
from typing import IO, Any, Protocol

from mgradcheck.display import pick


class Progress(Protocol):
    def start(self, title: str, total: int | None = None) -> None: ...
    def status(self, text: str) -> None: ...
    def line(self, text: str) -> None: ...
    def advance(self) -> None: ...
    def stop(self) -> None: ...


class PlainProgress:
    """Each step and each finished line as its own line (``silent``: finished lines only)."""

    def __init__(self, stream: IO[str] | None = None, silent: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.silent = silent
        self._lock = threading.Lock()

    def _print(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream, flush=True)

    def start(self, title: str, total: int | None = None) -> None:
        if not self.silent:
            self._print(title)

    def status(self, text: str) -> None:
        if not self.silent:
            self._print(f"  ... {text}")

    def line(self, text: str) -> None:
        if not self.silent:
            self._print(f"  {text}")

    def advance(self) -> None:
        pass

    def stop(self) -> None:
        pass


class RichProgress:
    """A spinner (and a bar when the total is known) with the current step, on a terminal."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[title]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        )
        self.task: Any = None

    def start(self, title: str, total: int | None = None) -> None:
        self.progress.start()
        self.task = self.progress.add_task("", total=total, title=title)

    def status(self, text: str) -> None:
        self.progress.update(self.task, description=text)

    def line(self, text: str) -> None:
        self.progress.console.print(f"  {text}", highlight=False)

    def advance(self) -> None:
        self.progress.update(self.task, advance=1)

    def stop(self) -> None:
        self.progress.stop()


def choose(quiet: bool, stream: IO[str] | None = None) -> PlainProgress | RichProgress:
    return pick(quiet, stream, PlainProgress, RichProgress)
