"""Run corpus entries, each in its own child, in parallel; survive anything they do.

The runner skips entries whose requirements the target cannot meet, runs
every (entry, repeat) as its own child on a thread pool, classifies each entry
when its last run finishes, and reports each result to the progress display
and to whoever listens (the incremental report writer). An interrupt (Ctrl-C,
SIGTERM) kills every child's process group and returns what finished, the rest
marked as not run.

The same pool runs plain jobs (:class:`Job`), which nobody judges: the children of
:mod:`mgradcheck.run.batches`, each running several sweep cases or suite tests
and logging them. Jobs are drawn one at a time as a child slot frees, so that
what a finished job says (a batch's culprit, to be run alone) decides what runs next.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import EnvironmentFailure, Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.paths import run_scratch
from mgradcheck.run import resources
from mgradcheck.run.child_log import ChildLog
from mgradcheck.run.child_process import ChildCommand, LiveChild, run_child
from mgradcheck.run.child_result import harness_error
from mgradcheck.run.display import Progress
from mgradcheck.run.observation import Environment, Observation, not_run
from mgradcheck.run.results import EntryResult
from mgradcheck.run.signal_watch import SignalWatch
from mgradcheck.run.verdict import classify, unmet_requirement
from mgradcheck.wording import count

PROBE_TIMEOUT = 120.0


class ProbeError(EnvironmentFailure):
    """The target interpreter could not even report what it runs."""


@dataclass(frozen=True)
class RunOptions:
    jobs: int = 1
    timeout: float | None = None  # overrides every entry's own
    repeat: int | None = None  # overrides every entry's own
    memory_limit: int | None = None


@dataclass
class RunOutcome:
    results: list[EntryResult]
    interrupted: Interrupted | None = None


@dataclass(frozen=True)
class Job:
    """One child that runs ``code`` (with the helpers an entry's code has, and its log's
    path as ``__mgradcheck_log__``), with no expectation to judge it by.

    ``timeout`` is the whole child's; ``idle`` ends it sooner once its log has not grown
    for that long (one item's timeout). ``label`` is how the progress shows it running.
    """

    id: str  # unique in a run: it names the child's scratch directory
    code: str
    timeout: float
    idle: float | None = None
    label: str = ""


@dataclass(frozen=True)
class JobRun:
    """What a job's child did, and what it wrote to its log (see :mod:`mgradcheck.run.child_log`)."""

    job: Job
    run: Observation
    log: bytes


@dataclass(frozen=True)
class _Unit:
    """One child for the pool: an entry's run, or a job."""

    key: int  # its place among the units of one run
    name: str  # how the progress shows it running
    workdir: str  # its scratch directory's name
    spec: Mapping[str, Any]
    timeout: float
    log: ChildLog | None = None


def probe(command: ChildCommand, scratch: Path) -> Environment:
    """Ask the target interpreter what it runs: MLX version, backend, device, Python (which
    interpreter it is, and this mgradcheck's version, are stamped by the stage that asks).

    ``scratch`` must be private to this run: the child's spec and result live there.
    """
    observation, result = run_child(command, {"probe_only": True}, scratch / "probe", PROBE_TIMEOUT)
    if result is None or "environment" not in result:
        detail = observation.reason or observation.stderr.strip().splitlines()[-1:] or ""
        raise ProbeError(f"{command.python} could not start the mgradcheck child ({detail})")
    return Environment.from_json(dict(result["environment"]))


class Runner:
    def __init__(
        self,
        command: ChildCommand,
        environment: Environment,
        options: RunOptions,
        progress: Progress,
        scratch: Path | None = None,
        on_result: Callable[[EntryResult], None] | None = None,
        title: str = "mgradcheck run",
        on_start: Callable[[str, LiveChild], None] | None = None,
    ) -> None:
        """``on_start`` is told of each child as it starts, with the name progress shows it by."""
        self.command = command
        self.environment = environment
        self.options = options
        self.progress = progress
        self.scratch = scratch
        self.on_result = on_result
        self.title = title
        self.on_start = on_start
        self._live: set[LiveChild] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def _track(self, child: LiveChild) -> None:
        with self._lock:
            self._live.add(child)
            if self._stopping.is_set():
                child.stop()

    def _culprit(self, pid: int, signum: int) -> bool:
        """A signal to the runner from ``pid``: if a running child sent it, stop that child."""
        with self._lock:
            child = next((c for c in self._live if c.owns(pid)), None)
        if child is None:
            return False
        child.offended(pid, signum)
        self.progress.line(f"a child signalled the runner: {child.offence}", "red")
        return True

    def _stop_all(self) -> None:
        self._stopping.set()
        with self._lock:
            for child in self._live:
                child.stop()

    def stop(self) -> None:
        """Kill every child of a run going on in another thread; what is left is not run."""
        self._stop_all()

    def _run_one(self, unit: _Unit, scratch: Path) -> Observation:
        if self._stopping.is_set():
            return not_run()
        spec = {**unit.spec, "memory_limit": self.options.memory_limit}
        started: list[LiveChild] = []

        def track(child: LiveChild) -> None:
            started.append(child)
            self._track(child)
            if self.on_start is not None:
                self.on_start(unit.name, child)

        self.progress.item_started(unit.name)
        try:
            observation, _ = run_child(
                self.command, spec, scratch / unit.workdir, unit.timeout, track, unit.log
            )
        except EnvironmentFailure:
            raise  # a full disk: no entry can be judged, and the run stops (see run)
        except Exception as exc:  # noqa: BLE001 - our own bug, reported as ours
            import traceback  # only for a bug of ours: not at every run's start

            return harness_error(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        finally:
            with self._lock:
                self._live.difference_update(started)
            self.progress.item_finished(unit.name)
        return observation

    def _skip(self, entry: Entry) -> EntryResult | None:
        reason = unmet_requirement(entry.requires, self.environment)
        if reason is None:
            return None
        run = Observation(Outcome.SKIP, 0.0, message=reason)
        return self._result(entry, [run])

    def _result(self, entry: Entry, runs: Sequence[Observation]) -> EntryResult:
        return EntryResult(
            id=entry.id,
            title=entry.title,
            path=entry.path,
            runs=tuple(runs),
            judgement=classify(entry, runs, self.environment),
            environment=self.environment,
            tags=entry.tags,
            signature=entry.bug.signature_label(),
        )

    def _finished(self, result: EntryResult) -> None:
        verdict = result.verdict
        self.progress.result(
            f"{result.id}: {result.outcome_text} -> {verdict.label} ({result.duration:.1f}s)",
            verdict.colour,
            verdict.mark,
        )
        self.progress.advance()
        if self.on_result is not None:
            self.on_result(result)

    def run(self, entries: Sequence[Entry]) -> RunOutcome:
        """Run every entry; on an interrupt, stop the children and return what finished."""
        done: dict[str, EntryResult] = {}
        pending: dict[str, list[Observation | None]] = {}
        runs: list[tuple[Entry, int]] = []  # each unit's entry and repeat
        units: list[_Unit] = []
        title = f"{self.title}: {count(len(entries), 'entry')} on {self.environment.label}"
        self.progress.start(title, total=len(entries))
        try:
            for entry in entries:
                skipped = self._skip(entry)
                if skipped is not None:
                    done[entry.id] = skipped
                    self._finished(skipped)
                    continue
                repeat = self.options.repeat or entry.repeat
                pending[entry.id] = [None] * repeat
                timeout = self.options.timeout or entry.timeout
                spec = entry.child_spec()
                for i in range(repeat):
                    name = entry.id if repeat == 1 else f"{entry.id} ({i + 1}/{repeat})"
                    units.append(_Unit(len(units), name, f"{entry.id}.{i}", spec, timeout))
                    runs.append((entry, i))

            def finished(unit: _Unit, run: Observation) -> None:
                entry, i = runs[unit.key]
                repeats = pending[entry.id]
                repeats[i] = run
                if all(r is not None for r in repeats):
                    result = self._result(entry, [r for r in repeats if r is not None])
                    done[entry.id] = result
                    self._finished(result)

            drawn = iter(units)
            interrupted = self._pool(lambda: next(drawn, None), finished)
        finally:
            self.progress.stop()
        results = [done.get(e.id) or self._result(e, [not_run()]) for e in entries]
        return RunOutcome(results, interrupted)

    def run_jobs(
        self, take: Callable[[], Job | None], on_done: Callable[[JobRun], None]
    ) -> Interrupted | None:
        """Run the jobs ``take`` gives, ``jobs`` at a time, telling ``on_done`` of each as it ends
        (in this thread). ``take`` is asked again whenever a child slot is free, or a job has
        ended: None means none for now, and the run ends when none runs either. Shows each job
        running under its label; the rest of the display is the caller's. Returns an interrupt,
        if any; the jobs running then are told of too, stopped (their runs: not run), so that
        what their logs hold is not lost.
        """
        jobs: list[Job] = []

        def next_unit() -> _Unit | None:
            job = take()
            if job is None:
                return None
            jobs.append(job)
            spec = {"id": job.id, "path": f"<{job.id}>", "code": job.code}
            log = ChildLog(job.idle)
            return _Unit(len(jobs) - 1, job.label or job.id, job.id, spec, job.timeout, log)

        def finished(unit: _Unit, run: Observation) -> None:
            assert unit.log is not None  # every job's unit has one
            on_done(JobRun(jobs[unit.key], run, unit.log.data))

        return self._pool(next_unit, finished, and_stopped=True)

    def _pool(
        self,
        take: Callable[[], _Unit | None],
        on_done: Callable[[_Unit, Observation], None],
        and_stopped: bool = False,
    ) -> Interrupted | None:
        """Run units as ``take`` gives them, ``jobs`` children at a time, until it gives none and
        none runs; tell ``on_done`` of each as it ends (``and_stopped``: of those an interrupt
        stopped too). Returns an interrupt, if any."""
        stack = contextlib.ExitStack()
        if self.scratch is None:
            scratch = stack.enter_context(run_scratch())
        else:
            scratch = Path(tempfile.mkdtemp(prefix="mgradcheck-run-", dir=self.scratch))
            stack.callback(shutil.rmtree, scratch, ignore_errors=True)
        interrupted: Interrupted | None = None
        watch = SignalWatch.start(self._culprit)  # before the pool's threads: they inherit its mask
        jobs = max(1, self.options.jobs)
        pool = ThreadPoolExecutor(jobs, thread_name_prefix="mgc")
        running: dict[Future[Observation], _Unit] = {}
        try:
            while True:
                while len(running) < jobs and not self._stopping.is_set():
                    unit = take()
                    if unit is None:
                        break
                    running[resources.submit(pool, partial(self._run_one, unit, scratch))] = unit
                if not running:
                    break
                # No ``continue`` here: CPython 3.11 lets a signal handler's raise escape the try.
                ended, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in ended:
                    on_done(running.pop(future), future.result())
        except Interrupted as exc:
            interrupted = exc
        except KeyboardInterrupt:
            interrupted = Interrupted(signal.SIGINT)
        except EnvironmentFailure:
            self._stop_all()  # the reports written as entries finished keep what did
            raise
        finally:
            if interrupted is not None:
                self._stop_all()
            pool.shutdown()
            if watch is not None:
                watch.close()
            stack.close()
        if interrupted is not None and and_stopped:
            for future, unit in running.items():
                if future.exception() is None:
                    on_done(unit, future.result())
        return interrupted


@contextlib.contextmanager
def watched(
    runner: Runner, watch: Callable[[Runner | None], None] | None = None
) -> Iterator[Runner]:
    """Shows ``runner`` to ``watch`` while it runs (then None), so that whoever runs it from
    another thread (a matrix of releases) can stop it."""
    if watch is not None:
        watch(runner)
    try:
        yield runner
    finally:
        if watch is not None:
            watch(None)


def run_watched(
    runner: Runner,
    entries: Sequence[Entry],
    watch: Callable[[Runner | None], None] | None = None,
) -> RunOutcome:
    """``runner.run(entries)``, shown to ``watch`` while it runs (see :func:`watched`)."""
    with watched(runner, watch):
        return runner.run(entries)


__all__ = [
    "Job",
    "JobRun",
    "ProbeError",
    "RunOptions",
    "RunOutcome",
    "Runner",
    "probe",
    "run_watched",
    "watched",
]
