"""Several items per child without giving up crash isolation: a batch whose child dies is split.

The one engine under ``mgradcheck sweep`` (gradcheck cases) and ``mgradcheck
tests`` (a suite's tests); each is an adapter that says what one item is (the
code a child runs for a batch of them, their names, one item's timeout) and
what a :class:`Finished` item means to it.

A child runs a batch of items and appends two JSON lines per item to its log,
a file with no name that no other child can reach (:mod:`mgradcheck.run.child_log`):
``{"event": "start", "item": K}`` before it and ``{"event": "done", "item": K, ...}``
after it, K being the item's position in the batch. When the child dies (a
signal, an exit, a timeout, or its log standing still for one item's timeout),
the item that started without finishing runs again alone (the first unfinished
one, when none had started: a child that dies before its first line) and the
items after it are batched again; an item that runs alone is finished by its
own child's observation, so a crash is named by the item that crashes alone.
Each dead batch finishes or isolates at least one item, so the run ends, and a
hang costs one item's timeout before its item is isolated, not the batch's.

Batches are drawn as child slots free (:meth:`Runner.run_jobs`), a dead batch's
suspect first; none is started once the deadline, if any, has passed, and the
items never finished are the caller's to call not run.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.run.child_log import LOG_BYTES
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.child_result import read_untrusted
from mgradcheck.run.display import Progress, Silent
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.runner import Job, JobRun, Runner, RunOptions, watched


@dataclass(frozen=True)
class Finished:
    """One item's end: its own "done" line when its child wrote one, and its child's observation."""

    index: int  # which item, 0..count-1 as given to run
    line: Mapping[str, Any] | None
    run: Observation  # the child's: the item's own when it ran alone, else its batch's
    alone: bool
    note: str = ""  # why it ran alone: its batch's child died in it
    # Its part of its child's time outside every item's "done" line (start-up, imports), so
    # that items' times add up to what their children took.
    share: float = 0.0


# The code a child runs for these items (their positions), logging each to the path it
# finds as ``__mgradcheck_log__`` (see mgradcheck.child.batch_log).
BatchCode = Callable[[Sequence[int]], str]


def read_log(
    log: Path | bytes | None, key: str = "item", limit: int = LOG_BYTES
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The "done" lines by position (``line[key]``), and the positions that started.

    ``log`` is what a child's log held (:attr:`ChildLog.data`), or a log file, read as a
    child's result is (no link, no FIFO). A line cut short is skipped, and a log of more
    than ``limit`` bytes is none.
    """
    done: dict[int, dict[str, Any]] = {}
    started: set[int] = set()
    data = read_untrusted(log, limit)[0] if isinstance(log, Path) else log
    if data is None or len(data) > limit:
        return done, started
    for raw in data.decode("utf-8", "replace").splitlines():
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
    items: list[int]
    note: str = ""


class BatchRunner:
    """Runs items ``size`` at a time per child, ``jobs`` children at a time, until each has finished."""

    def __init__(
        self,
        command: ChildCommand,
        environment: Environment,
        code: BatchCode,
        timeout: float,
        jobs: int = 1,
        size: int = 1,
        *,
        scratch: Path | None = None,
        group: Sequence[str] | None = None,
        name: Callable[[int], str] | None = None,
        progress: Progress | None = None,
        deadline: float | None = None,
    ) -> None:
        """``timeout``: one item's (a batch's child gets it per item, and is ended sooner when
        its log stands still that long). ``group``: each item's group, when items of different
        groups must not share a child. ``deadline`` (monotonic): no batch starts after it.

        ``progress`` is shown each batch's child while it runs, named by its first item's
        ``name``; the caller tells it of the items as they finish.
        """
        self.command = command
        self.environment = environment
        self.code = code
        self.timeout = timeout
        self.jobs = max(1, jobs)
        self.size = max(1, size)
        self.scratch = scratch
        self.group = group
        self.name = name
        self.progress = progress or Silent()
        self.deadline = deadline

    def run(
        self,
        count: int,
        on_finished: Callable[[Finished], None],
        on_runner: Callable[[Runner | None], None] | None = None,
    ) -> Interrupted | None:
        """Run items ``0..count-1``; tell ``on_finished`` of each as it ends. Returns an interrupt,
        if any. ``on_runner`` is shown the runner while it runs, so that another thread can stop it."""
        queue = deque(_Batch(items) for items in self._first_batches(count))
        numbers = itertools.count(1)
        running: dict[str, _Batch] = {}

        def take() -> Job | None:
            if not queue or (self.deadline is not None and time.monotonic() >= self.deadline):
                return None
            batch = queue.popleft()
            job = self._job(f"batch-{next(numbers)}", batch.items)
            running[job.id] = batch
            return job

        def ended(done: JobRun) -> None:
            following = self._settle(running.pop(done.job.id), done, on_finished)
            queue.extendleft(reversed(following))  # the suspect next, while its batch is fresh

        runner = Runner(
            self.command, self.environment, RunOptions(jobs=self.jobs), self.progress, self.scratch
        )
        with watched(runner, on_runner):
            return runner.run_jobs(take, ended)

    def _job(self, id: str, items: Sequence[int]) -> Job:
        label = ""
        if self.name is not None:  # a batch's child runs its items in turn: shown by its first
            label = self.name(items[0]) + (f" +{len(items) - 1}" if len(items) > 1 else "")
        # Alone, an item has its whole timeout; in a batch, each has its own through the log.
        idle = self.timeout if len(items) > 1 else None
        return Job(id, self.code(items), self.timeout * len(items), idle, label)

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

    def _settle(
        self, batch: _Batch, done: JobRun, on_finished: Callable[[Finished], None]
    ) -> list[_Batch]:
        """Finish what the batch's child finished; return the batches to run next."""
        run = done.run
        lines, started = read_log(done.log)
        if run.outcome is Outcome.NOT_RUN:  # the whole run is being stopped: what finished stands
            for position, index in enumerate(batch.items):
                if position in lines:
                    on_finished(Finished(index, lines[position], run, False, batch.note))
            return []
        alone = len(batch.items) == 1
        share = _share(run.duration, [lines[p] for p in range(len(batch.items)) if p in lines])
        left: list[int] = []
        for position, index in enumerate(batch.items):
            if position in lines or alone:
                line = lines.get(position)
                part = share if line is not None else 0.0
                on_finished(Finished(index, line, run, alone, batch.note, part))
            else:
                left.append(index)
        if not left:
            return []
        positions = {index: position for position, index in enumerate(batch.items)}
        suspect = next((i for i in left if positions[i] in started), left[0])
        when = "while it ran" if positions[suspect] in started else "before it started"
        note = (
            f"its batch child died: the child ended ({run.reason or run.outcome.label}) "
            f"{when}; this is its run alone"
        )
        rest = [i for i in left if i != suspect]
        return [
            _Batch([suspect], note),
            *(_Batch(rest[i : i + self.size]) for i in range(0, len(rest), self.size)),
        ]


__all__ = ["BatchCode", "BatchRunner", "Finished", "read_log"]


def _share(duration: float, lines: Sequence[Mapping[str, Any]]) -> float:
    """Each finished item's even part of a child's time outside their "done" lines."""
    spent = [line.get("duration") for line in lines]
    inside = sum(float(d) for d in spent if isinstance(d, (int, float)))
    return max(duration - inside, 0.0) / len(lines) if lines else 0.0
