"""Several items per child without giving up crash isolation: a batch whose child dies is split.

A child runs a batch of items and appends two JSON lines per item to a log
the parent names: ``{"event": "start", "item": K}`` before it and
``{"event": "done", "item": K, ...}`` after it, K being the item's position in
the batch, each flushed at once. When the child dies (a signal, an exit, a
timeout), the item that started without finishing runs again alone (the
first unfinished one, when none had started) and the items after it are
batched again; an item that runs alone is finished by its own child's
observation, so a crash is named by the item that crashes alone. Each round
finishes or isolates at least one item of every dead batch, so the rounds end.
The batches of a round run in parallel through the :class:`Runner`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.paths import run_scratch
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.child_result import read_untrusted
from mgradcheck.run.display import Labelled, Progress, Silent
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.results import EntryResult
from mgradcheck.run.runner import Runner, RunOptions, run_watched

LOG_BYTES = 16 << 20  # a done line holds capped texts (see mgradcheck.child.suite): far below


@dataclass(frozen=True)
class Finished:
    """One item's end: its own "done" line when its child wrote one, and its child's observation."""

    index: int  # the item's position in the sequence given to run_batches
    line: Mapping[str, Any] | None
    run: Observation  # the child's: the item's own when it ran alone, else its batch's
    alone: bool
    note: str = ""  # why it ran alone: its batch's child died in it


# (batch number, the items' indices, the log it writes) -> the entry whose child runs them
MakeEntry = Callable[[int, Sequence[int], Path], Entry]


def read_log(
    path: Path, key: str = "item", limit: int = LOG_BYTES
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The "done" lines by position (``line[key]``), and the positions that started; a line cut
    short is skipped, and a log that is not a regular file of at most ``limit`` bytes is none."""
    done: dict[int, dict[str, Any]] = {}
    started: set[int] = set()
    # The child's to write, so read as its result is: no link, no FIFO, bounded.
    data, _ = read_untrusted(path, limit)
    if data is None:
        return done, started
    for raw in data[:limit].decode("utf-8", "replace").splitlines():
        try:
            line = json.loads(raw)
            position = int(line[key])
        except (ValueError, KeyError, TypeError):
            continue  # cut short by the crash, or not ours
        if line.get("event") == "done":
            done[position] = line
        else:
            started.add(position)
    return done, started


@dataclass
class _Batch:
    number: int
    items: list[int]
    log: Path
    note: str = ""


class BatchRunner:
    """Runs items ``size`` at a time per child, in rounds, until every item has finished."""

    def __init__(
        self,
        command: ChildCommand,
        environment: Environment,
        make_entry: MakeEntry,
        jobs: int = 1,
        size: int = 1,
        scratch: Path | None = None,
        group: Sequence[str] | None = None,
        progress: Progress | None = None,
        label: Callable[[Sequence[int]], str] | None = None,
    ) -> None:
        """``group``: each item's group, when items of different groups must not share a child.

        ``progress`` is told of each batch as its child starts and ends, named by ``label``
        (of the batch's items); the caller tells it of the items as they finish.
        """
        self.command = command
        self.environment = environment
        self.make_entry = make_entry
        self.jobs = max(1, jobs)
        self.size = max(1, size)
        self.scratch = scratch
        self.group = group
        self.progress = progress or Silent()
        self.label = label
        self._numbers = 0

    def _batch(self, items: list[int], directory: Path, note: str = "") -> _Batch:
        self._numbers += 1
        return _Batch(self._numbers, items, directory / f"batch-{self._numbers}.jsonl", note)

    def run(
        self,
        count: int,
        on_finished: Callable[[Finished], None],
        on_runner: Callable[[Runner | None], None] | None = None,
    ) -> Interrupted | None:
        """Run items ``0..count-1``; tell ``on_finished`` of each as it ends. Returns an interrupt, if any."""
        with contextlib.ExitStack() as stack:
            if self.scratch is None:  # private to this run, as the runner's own (see run_scratch)
                directory = stack.enter_context(run_scratch())
            else:
                directory = Path(tempfile.mkdtemp(prefix="mgradcheck-batches-", dir=self.scratch))
                stack.callback(shutil.rmtree, directory, ignore_errors=True)
            queue = deque(self._batch(items, directory) for items in self._first_batches(count))
            while queue:
                batches = list(queue)
                queue.clear()
                outcome = self._round(batches, on_finished, on_runner, directory)
                if isinstance(outcome, Interrupted):
                    return outcome
                queue.extend(outcome)
        return None

    def _first_batches(self, count: int) -> list[list[int]]:
        batches: list[list[int]] = []
        for index in range(count):
            last = batches[-1] if batches else None
            same = last is not None and (
                self.group is None or self.group[last[0]] == self.group[index]
            )
            if last is not None and same and len(last) < self.size:
                last.append(index)
            else:
                batches.append([index])
        return batches

    def _round(
        self,
        batches: Sequence[_Batch],
        on_finished: Callable[[Finished], None],
        on_runner: Callable[[Runner | None], None] | None,
        directory: Path,
    ) -> list[_Batch] | Interrupted:
        """Run one round of batches in parallel; the batches of the next round, or the interrupt."""
        by_id: dict[str, _Batch] = {}
        labels: dict[str, str] = {}
        entries = []
        for batch in batches:
            entry = self.make_entry(batch.number, batch.items, batch.log)
            by_id[entry.id] = batch
            if self.label is not None:
                labels[entry.id] = self.label(batch.items)
            entries.append(entry)
        following: list[_Batch] = []

        def finished(result: EntryResult) -> None:
            following.extend(self._settle(by_id[result.id], result.runs[0], on_finished, directory))

        runner = Runner(
            self.command,
            self.environment,
            RunOptions(jobs=self.jobs),
            Labelled(self.progress, labels),
            directory,
            on_result=finished,
        )
        outcome = run_watched(runner, entries, on_runner)
        return outcome.interrupted if outcome.interrupted is not None else following

    def _settle(
        self,
        batch: _Batch,
        run: Observation,
        on_finished: Callable[[Finished], None],
        directory: Path,
    ) -> list[_Batch]:
        """Finish what the batch's child finished; return the batches to run next round."""
        if run.outcome is Outcome.NOT_RUN:
            return []  # the whole run is being stopped: nothing here finished
        done, started = read_log(batch.log)
        alone = len(batch.items) == 1
        left: list[int] = []
        for position, index in enumerate(batch.items):
            if position in done or alone:
                on_finished(Finished(index, done.get(position), run, alone, batch.note))
            else:
                left.append(index)
        if not left:
            return []
        positions = {index: position for position, index in enumerate(batch.items)}
        suspect = next((i for i in left if positions[i] in started), left[0])
        note = f"its batch's child ended ({run.reason or run.outcome.label}) while it ran; this is its run alone"
        if positions[suspect] not in started:
            note = f"its batch's child ended ({run.reason or run.outcome.label}) before it started; this is its run alone"
        rest = [i for i in left if i != suspect]
        again = [self._batch([suspect], directory, note)]
        for i in range(0, len(rest), self.size):
            again.append(self._batch(rest[i : i + self.size], directory))
        return again


__all__ = ["BatchRunner", "Finished", "MakeEntry", "read_log"]
