"""The runner against children that pass, fail, raise, crash, hang, flood and misbehave."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mgradcheck import __version__
from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from mgradcheck.run import stages
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Silent
from mgradcheck.run.results import EntryResult
from mgradcheck.run.runner import Runner, RunOptions, probe
from tests.builders import RecordingProgress
from tests.conftest import BEHAVIOURS, FIXTURES, environment

FAULTS = FIXTURES / "faults"


def run_fixtures(
    directory: Path, ids: list[str] | None = None, **options: object
) -> dict[str, EntryResult]:
    entries = [e for e in load([directory]) if ids is None or e.id in ids]
    progress = RecordingProgress()
    finished: list[EntryResult] = []
    runner = Runner(
        ChildCommand(sys.executable),
        environment(),
        RunOptions(**options),  # type: ignore[arg-type]
        progress,
        on_result=finished.append,
    )
    outcome = runner.run(entries)
    assert outcome.interrupted is None
    assert progress.total == len(entries) and progress.stopped
    assert progress.done == len(entries)
    assert sorted(r.id for r in finished) == sorted(e.id for e in entries)
    assert [r.id for r in outcome.results] == [e.id for e in entries]
    return {r.id: r for r in outcome.results}


@pytest.fixture(scope="module")
def behaviours() -> dict[str, EntryResult]:
    return run_fixtures(BEHAVIOURS, jobs=4)


@pytest.mark.parametrize(
    ("name", "outcome", "reason"),
    [
        ("passes", Outcome.PASS, ""),
        ("fails-check", Outcome.FAIL, "tangent: observed [1., 2.], expected [1., 3.]"),
        ("raises", Outcome.ERROR, "ValueError: not a check failure"),
        ("segfaults", Outcome.CRASH, "SIGSEGV"),
        ("aborts", Outcome.CRASH, "SIGABRT"),
        ("hangs", Outcome.TIMEOUT, "no result after 2s"),
        ("exits-early", Outcome.CRASH, "exit status 3"),
        ("floods-output", Outcome.PASS, ""),
    ],
)
def test_each_behaviour_is_classified(
    behaviours: dict[str, EntryResult], name: str, outcome: Outcome, reason: str
) -> None:
    (run,) = behaviours[name].runs
    assert run.outcome is outcome
    assert reason in run.reason


def test_crash_keeps_the_faulthandler_traceback_pointing_at_the_yaml(
    behaviours: dict[str, EntryResult],
) -> None:
    (run,) = behaviours["segfaults"].runs
    assert "Segmentation fault" in run.stderr
    assert 'segfaults.yaml", line 10' in run.stderr
    assert not run.result_written


def test_timeout_keeps_partial_output(behaviours: dict[str, EntryResult]) -> None:
    (run,) = behaviours["hangs"].runs
    assert run.stdout == "started\n"


def test_failed_check_traceback_names_the_yaml_line(behaviours: dict[str, EntryResult]) -> None:
    (run,) = behaviours["fails-check"].runs
    assert 'fails-check.yaml", line 9' in run.traceback


def test_flood_keeps_head_and_tail_only(behaviours: dict[str, EntryResult]) -> None:
    (run,) = behaviours["floods-output"].runs
    assert len(run.stdout) < 100_000
    assert run.stdout.startswith("x" * 200)
    assert run.stdout.endswith("END-OF-STDOUT\n")
    assert "bytes not kept" in run.stdout


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, EntryResult], Path]:
    pidfile = tmp_path_factory.mktemp("pids") / "grandchild.pid"
    os.environ["MGRADCHECK_TEST_PIDFILE"] = str(pidfile)
    try:
        return run_fixtures(FAULTS, jobs=4, memory_limit=1 << 30), pidfile
    finally:
        del os.environ["MGRADCHECK_TEST_PIDFILE"]


@pytest.mark.parametrize(
    ("name", "outcome", "reason"),
    [
        ("bus-error", Outcome.CRASH, "SIGBUS"),
        ("oom-killed", Outcome.CRASH, "SIGKILL"),
        ("ignores-sigterm", Outcome.TIMEOUT, "no result after 1s"),
        ("half-written-result", Outcome.CRASH, "exit status 0"),
        ("noisy-crash", Outcome.CRASH, "SIGSEGV"),
        ("eats-memory", Outcome.ERROR, "MemoryError: exceeded the memory ceiling of 1024 MiB"),
        ("floods-100mb", Outcome.PASS, ""),
    ],
)
def test_each_fault_is_classified(
    faults: tuple[dict[str, EntryResult], Path], name: str, outcome: Outcome, reason: str
) -> None:
    (run,) = faults[0][name].runs
    assert run.outcome is outcome, run
    assert reason in run.reason


def test_sigterm_ignorer_is_killed_after_the_grace(
    faults: tuple[dict[str, EntryResult], Path],
) -> None:
    (run,) = faults[0]["ignores-sigterm"].runs
    assert run.stdout == "ignoring TERM\n"
    assert run.exit_status == -9


def test_grandchildren_do_not_outlive_the_run(faults: tuple[dict[str, EntryResult], Path]) -> None:
    pid = int(faults[1].read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail(f"grandchild {pid} is still alive")


def test_100mb_flood_keeps_memory_bounded(faults: tuple[dict[str, EntryResult], Path]) -> None:
    (run,) = faults[0]["floods-100mb"].runs
    assert run.stdout.endswith("LAST-STDOUT-LINE\n")
    assert run.stderr.endswith("LAST-STDERR-LINE\n")
    assert len(run.stdout) + len(run.stderr) < 200_000


PEAK_RSS = """
import resource, sys
from pathlib import Path
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.corpus.loader import load
from mgradcheck.run.runner import RunOptions, Runner
from tests.conftest import environment
from mgradcheck.run.display import Silent
entries = load([Path(sys.argv[1])])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
(result,) = Runner(ChildCommand(sys.executable), environment(), RunOptions(), Silent()).run(entries).results
assert result.runs[0].stdout.endswith("LAST-STDOUT-LINE\\n"), result.runs[0]
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_100mb_flood_keeps_the_parents_memory_bounded() -> None:
    """Measured in a fresh parent, whose peak RSS is its own and no other test's."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(FAULTS / "floods-100mb.yaml")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    before_kib, after_kib = map(int, done.stdout.split())
    # The parent never held the 200 MB the child wrote: its peak grows by a few MiB at most.
    assert after_kib - before_kib < 32 * 1024, (before_kib, after_kib)


def test_repeat_runs_every_time_and_counts() -> None:
    results = run_fixtures(BEHAVIOURS, ids=["raises", "passes"], repeat=3, jobs=2)
    assert len(results["raises"].runs) == 3
    assert results["raises"].outcome_text == "error 3/3"


def test_missing_interpreter_is_a_harness_error() -> None:
    (entry,) = load([BEHAVIOURS / "passes.yaml"])
    runner = Runner(ChildCommand("/nonexistent/python"), environment(), RunOptions(), Silent())
    (result,) = runner.run([entry]).results
    (run,) = result.runs
    assert run.harness_error and "cannot start /nonexistent/python" in run.message


def test_probe_reports_the_interpreter(tmp_path: Path) -> None:
    env = probe(ChildCommand(sys.executable), tmp_path)
    assert env.python == ".".join(map(str, sys.version_info[:3]))
    # Which interpreter it is, and this mgradcheck's version, the stage stamps, cached or not.
    stamped = stages.prepare(sys.executable)[1]
    assert (stamped.interpreter, stamped.mgradcheck) == (sys.executable, __version__)
    assert stages.prepare(sys.executable)[1] == stamped


def test_a_stream_keeps_a_bounded_window_of_a_large_stream() -> None:
    from mgradcheck.run.child_process import HEAD_BYTES, TAIL_BYTES, _Capped

    capped = _Capped()
    block = bytes(range(256)) * 4096  # 1 MiB
    for _ in range(100):
        for i in range(0, len(block), 65536):
            capped.add(block[i : i + 65536])
    capped.add(b"THE END")
    capture = capped.capture()
    assert capture.total == 100 * len(block) + 7
    assert len(capture.head) == HEAD_BYTES and len(capture.tail) == TAIL_BYTES
    assert capture.tail.endswith(b"THE END")
    assert capped.tail_size < TAIL_BYTES + 65536
