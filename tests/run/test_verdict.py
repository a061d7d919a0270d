from __future__ import annotations

from dataclasses import replace

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mgradcheck.corpus.entry import BACKENDS, Bug, Entry, Requirements, Upstream
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.observation import Observation
from mgradcheck.run.verdict import bug_expected, classify, unmet_requirement
from tests.conftest import environment


def entry(**bug_fields: object) -> Entry:
    defaults: dict[str, object] = {
        "outcomes": (Outcome.FAIL,),
        "fixed_in": dict.fromkeys(BACKENDS, Version("0.32.0")),
    }
    defaults.update(bug_fields)
    return Entry(
        id="e", title="t", summary="s", upstream=Upstream("https://x"), bug=Bug(**defaults),  # type: ignore[arg-type]
        path="e.yaml", line=1, code="pass",
    )  # fmt: skip


def run(outcome: Outcome, message: str = "", stderr: str = "") -> Observation:
    return Observation(
        outcome,
        0.1,
        message=message,
        stderr=stderr,
        signal="SIGSEGV" if outcome is Outcome.CRASH else None,
    )


OLD = environment("0.31.2")
NEW = environment("0.32.4")

# (bug expected here?, outcome) -> verdict, for an entry whose signature is `fail`.
TABLE = {
    (True, Outcome.FAIL): Verdict.AS_EXPECTED,
    (True, Outcome.PASS): Verdict.FIXED,
    (True, Outcome.CRASH): Verdict.UNEXPECTED,
    (True, Outcome.ERROR): Verdict.UNEXPECTED,
    (True, Outcome.TIMEOUT): Verdict.UNEXPECTED,
    (True, Outcome.SKIP): Verdict.SKIPPED,
    (True, Outcome.NOT_RUN): Verdict.NOT_RUN,
    (False, Outcome.FAIL): Verdict.REGRESSED,
    (False, Outcome.PASS): Verdict.AS_EXPECTED,
    (False, Outcome.CRASH): Verdict.UNEXPECTED,
    (False, Outcome.ERROR): Verdict.UNEXPECTED,
    (False, Outcome.TIMEOUT): Verdict.UNEXPECTED,
    (False, Outcome.SKIP): Verdict.SKIPPED,
    (False, Outcome.NOT_RUN): Verdict.NOT_RUN,
}


def test_table_covers_every_pair() -> None:
    assert set(TABLE) == {(e, o) for e in (True, False) for o in Outcome}


@pytest.mark.parametrize(("key", "verdict"), list(TABLE.items()), ids=lambda v: str(v))
def test_every_expectation_outcome_pair(key: tuple[bool, Outcome], verdict: Verdict) -> None:
    expected, outcome = key
    env = OLD if expected else NEW
    judgement = classify(entry(), [run(outcome, "tangent: observed 0.0")], env)
    assert judgement.verdict is verdict
    assert judgement.bug_expected is expected


@pytest.mark.parametrize("signature", [o for o in Outcome.bug_outcomes()])
def test_signature_outcome_is_what_counts(signature: Outcome) -> None:
    e = entry(outcomes=(signature,))
    assert classify(e, [run(signature)], OLD).verdict is Verdict.AS_EXPECTED
    assert classify(e, [run(signature)], NEW).verdict is Verdict.REGRESSED
    other = Outcome.ERROR if signature is not Outcome.ERROR else Outcome.CRASH
    assert classify(e, [run(other)], OLD).verdict is Verdict.UNEXPECTED


def test_match_regex_separates_the_bug_from_other_failures() -> None:
    e = entry(outcomes=(Outcome.ERROR,), match=r"Failed to compile|nan")
    assert (
        classify(
            e, [run(Outcome.ERROR, stderr="error: use of undeclared identifier 'nan'")], OLD
        ).verdict
        is Verdict.AS_EXPECTED
    )
    assert (
        classify(e, [run(Outcome.ERROR, message="shape mismatch")], OLD).verdict
        is Verdict.UNEXPECTED
    )
    assert (
        classify(e, [run(Outcome.ERROR, message="Failed to compile kernel")], NEW).verdict
        is Verdict.REGRESSED
    )
    assert (
        classify(e, [run(Outcome.ERROR, message="shape mismatch")], NEW).verdict
        is Verdict.UNEXPECTED
    )


def test_repeats_report_counts_and_flakiness() -> None:
    e = entry(outcomes=(Outcome.CRASH, Outcome.FAIL))
    runs = [run(Outcome.CRASH)] * 3 + [run(Outcome.PASS)] * 7
    j = classify(e, runs, OLD)
    assert j.verdict is Verdict.AS_EXPECTED and j.flaky
    assert "reproduced 3/10" in j.reason
    j = classify(e, runs, NEW)
    assert j.verdict is Verdict.REGRESSED and "3/10" in j.reason
    j = classify(e, [run(Outcome.PASS)] * 10, OLD)
    assert j.verdict is Verdict.FIXED and not j.flaky
    j = classify(e, [run(Outcome.PASS)] * 9 + [run(Outcome.TIMEOUT)], NEW)
    assert j.verdict is Verdict.UNEXPECTED and "timeout 1/10" in j.reason


def test_per_backend_fix_and_affects() -> None:
    e = entry(affects=("metal",), fixed_in={"metal": Version("0.32.0")})
    assert not bug_expected(e.bug, environment("0.26.5", "cpu"))
    assert bug_expected(e.bug, environment("0.26.5", "metal"))
    assert not bug_expected(e.bug, environment("0.32.0", "metal"))
    assert (
        classify(e, [run(Outcome.FAIL)], environment("0.26.5", "cpu")).verdict is Verdict.REGRESSED
    )


def test_introduced_in_makes_a_regression_window() -> None:
    e = entry(introduced_in=dict.fromkeys(BACKENDS, Version("0.30.0")))
    assert not bug_expected(e.bug, environment("0.29.4"))
    assert bug_expected(e.bug, environment("0.30.0"))
    assert bug_expected(e.bug, environment("0.31.2"))
    assert not bug_expected(e.bug, environment("0.32.0"))


def test_dev_builds_count_as_their_release() -> None:
    e = entry()
    assert not bug_expected(e.bug, environment("0.32.0.dev20260601+abc"))
    assert bug_expected(e.bug, environment("0.31.2.dev1"))


def test_open_bug_and_guard_entry() -> None:
    open_bug = entry(fixed_in={})
    assert bug_expected(open_bug.bug, environment("9.9.9"))
    guard = entry(affects=())
    assert not bug_expected(guard.bug, environment("0.26.5"))


def test_harness_errors_are_ours_not_mlx() -> None:
    harness = Observation(
        Outcome.ERROR, 0.0, exc_type="HarnessError", message="boom", harness_error=True
    )
    j = classify(entry(outcomes=(Outcome.ERROR,)), [harness], OLD)
    assert j.verdict is Verdict.UNEXPECTED and j.reason.startswith("mgradcheck error")


def test_requirements() -> None:
    env = environment("0.29.4", "cpu", float64=False)
    assert unmet_requirement(Requirements(), env) is None
    assert "needs metal" in (unmet_requirement(Requirements(backends=("metal",)), env) or "")
    assert "needs mlx >=0.30" in (
        unmet_requirement(Requirements(mlx=SpecifierSet(">=0.30")), env) or ""
    )
    assert "float64" in (unmet_requirement(Requirements(float64=True), env) or "")
    assert "not installed" in (unmet_requirement(Requirements(), replace(env, mlx=None)) or "")


def test_verdict_failure_flags() -> None:
    failing = {v for v in Verdict if v.is_failure}
    assert failing == {Verdict.REGRESSED, Verdict.UNEXPECTED, Verdict.FIXED, Verdict.NOT_RUN}
