"""A suite's tests run each in its own child (or several per child), every outcome told apart."""

from __future__ import annotations

import sys

import pytest

from mgradcheck.outcomes import Outcome
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Silent
from mgradcheck.run.results import EntryResult
from mgradcheck.suites.collect import collect
from mgradcheck.suites.suite_runs import SuiteOptions, run_tests
from tests.builders import RecordingProgress
from tests.conftest import SUITES, environment

BASIC = SUITES / "basic"
HANGS = "test_behaviours.py::TestBehaviours::test_hangs"


def run(paths: list[str], options: SuiteOptions) -> dict[str, EntryResult]:
    tests = collect(paths)
    results, interrupted = run_tests(
        tests, ChildCommand(sys.executable), environment(), options, Silent()
    )
    assert interrupted is None
    assert [r.id for r in results] == [t.id for t in tests]
    return {r.id: r for r in results}


@pytest.fixture(scope="module")
def alone() -> dict[str, EntryResult]:
    """Every basic test: unittest's one per child (with a short timeout for the one that
    hangs), and pytest's in one child: each pytest session costs seconds to start."""
    unittests = [str(BASIC / "test_behaviours.py"), str(BASIC / "test_broken_import.py")]
    found = run(unittests, SuiteOptions(jobs=2, timeout=5))
    pytests = run([str(BASIC / "test_functions.py")], SuiteOptions(per_child=8, timeout=60))
    return {**found, **pytests}


CASES = [
    ("test_behaviours.py::TestBehaviours::test_passes", Outcome.PASS, ""),
    ("test_behaviours.py::TestBehaviours::test_fails", Outcome.FAIL, "4 != 5"),
    ("test_behaviours.py::TestBehaviours::test_errors", Outcome.ERROR, "ValueError: not an assertion"),
    ("test_behaviours.py::TestBehaviours::test_segfaults", Outcome.CRASH, "SIGSEGV"),
    (HANGS, Outcome.TIMEOUT, "no result after 5s"),
    ("test_behaviours.py::TestBehaviours::test_skipped", Outcome.SKIP, "not on this machine"),
    ("test_behaviours.py::TestBehaviours::test_skips_itself", Outcome.SKIP, "decided at run time"),
    ("test_behaviours.py::TestBehaviours::test_expected_failure", Outcome.SKIP, "expected failure: AssertionError: 1 != 2"),
    ("test_behaviours.py::TestBehaviours::test_unexpected_success", Outcome.FAIL, "unexpected success"),
    ("test_behaviours.py::TestBehaviours::test_subtests", Outcome.FAIL, "(i=2): 2 not less than 2"),
    ("test_behaviours.py::TestBehaviours::test_redefined", Outcome.PASS, ""),
    ("test_behaviours.py::TestBehaviours::test_helper_module_ran", Outcome.PASS, ""),
    ("test_behaviours.py::TestBrokenFixture::test_never_reached", Outcome.ERROR, "setUpClass (test_behaviours.TestBrokenFixture): the class fixture broke"),
    ("test_broken_import.py::TestUnreachable::test_one", Outcome.ERROR, "No module named 'module_that_does_not_exist'"),
    ("test_functions.py::test_function_passes", Outcome.PASS, ""),
    ("test_functions.py::test_function_fails", Outcome.FAIL, "assert 3 == 4"),
    ("test_functions.py::test_uses_a_fixture", Outcome.PASS, ""),
    ("test_functions.py::test_parametrized", Outcome.FAIL, "[3]: assert 3 < 3"),
    ("test_functions.py::test_marked_skip", Outcome.SKIP, "marked to skip"),
    ("test_functions.py::test_skips_at_run_time", Outcome.SKIP, "no GPU here"),
    ("test_functions.py::test_known_bug", Outcome.SKIP, "expected failure: a known bug"),
    ("test_functions.py::TestPlain::test_method", Outcome.PASS, ""),
]  # fmt: skip


@pytest.mark.parametrize(("test_id", "outcome", "reason"), CASES)
def test_each_outcome(
    alone: dict[str, EntryResult], test_id: str, outcome: Outcome, reason: str
) -> None:
    result = alone[test_id]
    assert result.outcome is outcome, result.runs
    assert reason in result.reason
    assert result.judgement is None and result.standing is outcome  # no verdict: its outcome


def test_a_crash_keeps_the_faulthandler_traceback(alone: dict[str, EntryResult]) -> None:
    (run,) = alone["test_behaviours.py::TestBehaviours::test_segfaults"].runs
    assert "Segmentation fault" in run.stderr and "test_behaviours.py" in run.stderr


def test_a_timeout_keeps_what_was_printed(alone: dict[str, EntryResult]) -> None:
    (run,) = alone[HANGS].runs
    assert run.stdout == "started\n"


def test_a_failure_keeps_the_tests_traceback(alone: dict[str, EntryResult]) -> None:
    (run,) = alone["test_behaviours.py::TestBehaviours::test_fails"].runs
    assert "test_behaviours.py" in run.traceback and "assertEqual(double(2), 5)" in run.traceback


def test_a_package_suite_imports_relatively() -> None:
    (result,) = run([str(SUITES / "package")], SuiteOptions(timeout=60)).values()
    assert result.outcome is Outcome.PASS, result.runs


def test_many_per_child_gives_the_same_outcomes_and_names_the_crash(
    alone: dict[str, EntryResult],
) -> None:
    unittests = [str(BASIC / "test_behaviours.py"), str(BASIC / "test_broken_import.py")]
    # Not the hanging test: its batch would wait out the batch's timeout before its run alone.
    chosen = [t for t in collect(unittests) if t.id != HANGS]
    options = SuiteOptions(per_child=20, timeout=60)
    results, _ = run_tests(chosen, ChildCommand(sys.executable), environment(), options, Silent())
    assert {r.id: r.outcome for r in results} == {r.id: alone[r.id].outcome for r in results}
    crashed = next(r for r in results if r.outcome is Outcome.CRASH)
    assert crashed.id.endswith("test_segfaults") and crashed.runs[0].signal == "SIGSEGV"
    batched_pass = next(r for r in results if r.id.endswith("test_passes"))
    assert batched_pass.runs[0].exit_status is None  # finished inside a batch: its done line


def test_the_progress_shows_each_child_running_by_its_first_test() -> None:
    wanted = ("test_passes", "test_redefined", "test_helper_module_ran")
    chosen = [t for t in collect([str(BASIC / "test_behaviours.py")]) if t.name in wanted]
    progress = RecordingProgress()
    options = SuiteOptions(per_child=2, timeout=60)
    results, _ = run_tests(chosen, ChildCommand(sys.executable), environment(), options, progress)
    assert [r.outcome for r in results] == [Outcome.PASS] * 3
    first, _, third = (t.id for t in chosen)
    assert sorted(progress.started) == sorted([f"{first} +1", third])
    assert progress.running == set() and progress.done == 3
