"""Progress displays: Rich for terminals, one plain line per entry for CI logs and pipes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any, TypeVar

from mgradcheck.results import EntryResult


class QuietDisplay:
    """One line per finished entry (or nothing at all with ``silent``)."""

    def __init__(self, stream: IO[str] | None = None, silent: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.silent = silent
        self.total = 0
        self.count = 0

    def start(self, total: int) -> None:
        self.total = total

    def entry_finished(self, result: EntryResult) -> None:
        self.count += 1
        if not self.silent:
            width = len(str(self.total))
            print(
                f"[{self.count:>{width}}/{self.total}] {result.id}: {result.outcome_text} -> {result.verdict.label}",
                file=self.stream,
                flush=True,
            )

    def stop(self) -> None:
        pass


class RichDisplay:
    """A live progress bar with the entries still running, on a terminal."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = console
        self.progress = Progress(
            TextColumn("[bold]mgradcheck run"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        )
        self.task: Any = None

    def start(self, total: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task("", total=total)

    def entry_finished(self, result: EntryResult) -> None:
        colour = result.verdict.colour
        self.progress.console.print(
            f"  {result.id}: {result.outcome_text} -> [{colour}]{result.verdict.label}[/]",
            highlight=False,
        )
        self.progress.update(self.task, advance=1, description=result.id)

    def stop(self) -> None:
        self.progress.stop()


P = TypeVar("P")
R = TypeVar("R")


def pick(
    quiet: bool,
    stream: IO[str] | None,
    plain: Callable[[IO[str], bool], P],
    rich: Callable[[Any], R],
) -> P | R:
    """Rich on an interactive terminal, plain lines otherwise, nothing when ``quiet``."""
    out = stream or sys.stderr
    if quiet:
        return plain(out, True)
    if out.isatty():
        from rich.console import Console

        return rich(Console(file=out))
    return plain(out, False)


def choose(quiet: bool, stream: IO[str] | None = None) -> QuietDisplay | RichDisplay:
    """The display of ``mgradcheck run``."""
    return pick(quiet, stream, QuietDisplay, RichDisplay)
