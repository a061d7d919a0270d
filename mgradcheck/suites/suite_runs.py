"""Run a suite's tests, each in its own child (or ``per_child`` at a time), into verdict-free results.

The suite's adapter to :class:`~mgradcheck.run.batches.BatchRunner`: a batch of
tests is code whose child runs them through :mod:`mgradcheck.child.suite`; the
engine runs the batches through the ordinary runner (same isolation, timeouts
and crash handling as corpus entries) and re-runs a dead batch's culprit alone.
A test that ran alone keeps its child's whole observation (exit status,
streams; a crash or a timeout after its ``done`` line still counts as its
own); a test finished inside a batch gets its status, message, traceback and
duration from its ``done`` line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.on_release import Execute, installed_build
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import StoredRuns
from mgradcheck.run.batches import BatchRunner, Finished
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Progress, Silent
from mgradcheck.run.observation import Environment, Observation, not_run
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.run.runner import Runner
from mgradcheck.run.stages import Reporter, Snapshots
from mgradcheck.suites.collect import SuiteTest

DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class SuiteOptions:
    jobs: int = 1
    per_child: int = 1  # tests per child; a child that dies has its culprit re-run alone
    timeout: float = DEFAULT_TIMEOUT  # seconds per test, in a batch too (see BatchRunner)


def batch_code(tests: Sequence[SuiteTest]) -> str:
    """The code of a child that runs ``tests`` through the unittest or pytest machinery."""
    spec = {
        "root": str(tests[0].root),
        "cwd": os.getcwd(),  # where the tests run: the directory mgradcheck was run from
        "tests": [t.child_spec() for t in tests],
    }
    return (
        "from mgradcheck.child.suite import run_tests\n"
        f"run_tests({{**{spec!r}, 'log': __mgradcheck_log__}})\n"
    )


def observation(finished: Finished) -> Observation:
    """One test's run, from its ``done`` line and (when it ran alone) its child's observation."""
    run, line = finished.run, finished.line
    if line is None and run.outcome is Outcome.PASS:  # its log was unreadable (not a file...)
        return Observation(
            Outcome.ERROR,
            run.duration,
            exit_status=run.exit_status,
            exc_type="NoReport",
            message="its child ended cleanly without reporting the test",
            stdout=run.stdout,
            stderr=run.stderr,
        )
    if line is None or (finished.alone and run.outcome in (Outcome.CRASH, Outcome.TIMEOUT)):
        return run  # it never finished, or its child died after it did: that is its outcome
    outcome = Outcome.from_child(str(line.get("status")))
    message = str(line.get("message", ""))
    if finished.note and outcome is not Outcome.FAIL and outcome is not Outcome.ERROR:
        message = f"{message}; {finished.note}" if message else finished.note
    common: dict[str, Any] = {
        "exc_type": line.get("exc_type"),
        "message": message,
        "traceback": str(line.get("traceback", "")),
        "result_written": True,
    }
    if finished.alone:
        return Observation(
            outcome,
            run.duration,
            exit_status=run.exit_status,
            stdout=run.stdout,
            stderr=run.stderr,
            **common,
        )
    return Observation(outcome, float(line.get("duration", 0.0)), **common)


def result_of(test: SuiteTest, runs: Sequence[Observation], env: Environment) -> EntryResult:
    """A test's result: its runs, no judgement (its outcome is what it means)."""
    return EntryResult(
        id=test.id,
        title=test.title,
        path=f"{test.file}:{test.line}",
        runs=tuple(runs),
        judgement=None,
        environment=env,
    )


def run_tests(
    tests: Sequence[SuiteTest],
    command: ChildCommand,
    env: Environment,
    options: SuiteOptions,
    progress: Progress,
    on_result: Callable[[EntryResult], None] | None = None,
    on_runner: Callable[[Runner | None], None] | None = None,
) -> tuple[list[EntryResult], Interrupted | None]:
    """Every test's result, in order (those the run did not reach: not run), and any interrupt."""
    ordered = sorted(range(len(tests)), key=lambda i: str(tests[i].root))  # a child, one root

    def code(items: Sequence[int]) -> str:
        return batch_code([tests[ordered[i]] for i in items])

    results: dict[int, EntryResult] = {}
    progress.start(f"mgradcheck tests: {len(tests)} tests on {env.label}", total=len(tests))

    def finished(item: Finished) -> None:
        index = ordered[item.index]
        result = result_of(tests[index], [observation(item)], env)
        results[index] = result
        reason = f" ({result.reason})" if result.reason and result.standing.is_failure else ""
        progress.result(
            f"{result.id}: {result.outcome_text}{reason}",
            result.standing.colour,
            result.standing.mark,
        )
        progress.advance()
        if on_result is not None:
            on_result(result)

    roots = [str(tests[i].root) for i in ordered]
    batches = BatchRunner(
        command, env, code, options.timeout, options.jobs, options.per_child, group=roots,
        name=lambda i: tests[ordered[i]].id, progress=progress,
    )  # fmt: skip
    try:
        interrupted = batches.run(len(tests), finished, on_runner)
    finally:
        progress.stop()
    return [
        results.get(i) or result_of(t, [not_run()], env) for i, t in enumerate(tests)
    ], interrupted


def execute_for_release(options: SuiteOptions) -> Execute[SuiteTest]:
    """How ``run_release`` runs tests on a release (see :data:`mgradcheck.releases.on_release.Execute`)."""

    def execute(
        command: ChildCommand,
        env: Environment,
        tests: Sequence[SuiteTest],
        on_runner: Callable[[Runner | None], None] | None,
    ) -> tuple[list[tuple[Observation, ...]], Interrupted | None]:
        results, interrupted = run_tests(tests, command, env, options, Silent(), None, on_runner)
        return [r.runs for r in results], interrupted

    return execute


def report_of(
    tests: Sequence[SuiteTest],
    command: ChildCommand,
    env: Environment,
    options: SuiteOptions,
    progress: Progress,
    meta: Mapping[str, Any] | None = None,
    snapshots: Snapshots | None = None,
) -> tuple[Report, Interrupted | None]:
    """Run the tests into a report (partial ones handed to ``snapshots`` as they finish)."""
    info = {"kind": "tests", "per_child": options.per_child, **(meta or {})}
    reporter = Reporter(len(tests), env, info, snapshots)
    results, interrupted = run_tests(tests, command, env, options, progress, reporter.add)
    return reporter.final(results, interrupted), interrupted


def store_runs(
    settings: Settings,
    version: Version,
    tests: Sequence[SuiteTest],
    results: Sequence[EntryResult],
    options: SuiteOptions,
) -> None:
    """Keep a release's runs of the tests for a later ``--matrix``: only runs of one test per
    child, since a test's outcome among others in one interpreter is not its own alone."""
    build = installed_build(version, settings)
    if options.per_child != 1 or build is None:
        return
    for test, result in zip(tests, results, strict=True):
        key = settings.key(test, version, build)
        settings.store.put(StoredRuns(key, test.id, result.runs, result.environment))
