"""Report objects built directly, for the report writers' unit tests."""

from __future__ import annotations

from typing import Any

from mgradcheck.observation import Environment, Observation
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.results import EntryResult, Report
from mgradcheck.verdict import Judgement
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
