"""Report objects built directly, for the report writers' unit tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.run.verdict import Judgement
from tests.conftest import environment

# A verdict and the outcome that typically produces it.
TYPICAL: dict[Verdict, Outcome] = {
    Verdict.REGRESSED: Outcome.CRASH,
    Verdict.UNEXPECTED: Outcome.TIMEOUT,
    Verdict.FIXED: Outcome.PASS,
    Verdict.AS_EXPECTED: Outcome.FAIL,
    Verdict.SKIPPED: Outcome.SKIP,
    Verdict.NOT_RUN: Outcome.NOT_RUN,
}


def result(
    id: str,
    verdict: Verdict = Verdict.AS_EXPECTED,
    outcome: Outcome | None = None,
    env: Environment | None = None,
    *,
    reason: str = "",
    flaky: bool = False,
    bug_expected: bool = False,
    **run: Any,
) -> EntryResult:
    outcome = outcome or TYPICAL[verdict]
    observation = Observation(outcome, run.pop("duration", 0.5), **run)
    return EntryResult(
        id=id,
        title=f"Entry {id}",
        path=f"corpus/{id}.yaml",
        runs=(observation,),
        judgement=Judgement(verdict, reason or f"{verdict.label} because", bug_expected, flaky),
        environment=env or environment(),
        tags=("test",),
        signature="crash",
    )


def suite_result(
    id: str, outcome: Outcome, env: Environment | None = None, **run: Any
) -> EntryResult:
    """A result of a suite's test: its outcome, no verdict."""
    observation = Observation(outcome, run.pop("duration", 0.5), **run)
    return EntryResult(
        id=id,
        title=id.rsplit("::", 1)[-1],
        path=f"tests/{id.split('::')[0]}:1",
        runs=(observation,),
        judgement=None,
        environment=env or environment(),
    )


def every_outcome() -> Report:
    """One test per outcome, in enum order: a report of a suite's tests."""
    return report(
        *(
            suite_result(f"test_x.py::TestX::test_{o.name.lower()}", o, message=o.label)
            for o in Outcome
        )
    )


def report(*results: EntryResult, interrupted: bool = False, **meta: Any) -> Report:
    envs: list[Environment] = []
    for r in results:
        if r.environment not in envs:
            envs.append(r.environment)
    return Report(
        results=tuple(results),
        environments=tuple(envs) or (environment(),),
        started="2026-01-01T00:00:00+00:00",
        finished="2026-01-01T00:01:00+00:00",
        interrupted=interrupted,
        mgradcheck="0.1.0",
        meta=dict(meta),
    )


def every_verdict(env: Environment | None = None) -> Report:
    """One entry per verdict, in enum order."""
    return report(*(result(v.name.lower().replace("_", "-"), v, env=env) for v in Verdict))


class RecordingProgress:
    """A :class:`~mgradcheck.run.display.Progress` that remembers every call, for assertions."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.lines: list[str] = []
        self.total: int | None = -1
        self.done = 0
        self.stopped = False
        self.running: set[str] = set()  # started and not finished
        self.started: list[str] = []
        self.marks: list[str] = []  # each result's mark, in order

    def start(self, title: str, total: int | None = None) -> None:
        self.total = total
        self.calls.append(f"start {total}")

    def status(self, text: str) -> None:
        self.calls.append(f"status {text}")

    def item_started(self, item: str) -> None:
        self.running.add(item)
        self.started.append(item)

    def item_finished(self, item: str) -> None:
        self.running.discard(item)

    def line(self, text: str, style: str = "") -> None:
        self.lines.append(text)
        self.calls.append(text.split(":")[0])

    def result(self, text: str, style: str = "", mark: str = "") -> None:
        self.line(text, style)
        self.marks.append(mark)

    def advance(self, count: int = 1) -> None:
        self.done += count

    def stop(self) -> None:
        self.stopped = True
        self.calls.append("stop")


def mgradcheck(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m mgradcheck ARGS`` as a user runs it: its output captured, its status kept."""
    return subprocess.run(
        [sys.executable, "-m", "mgradcheck", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
