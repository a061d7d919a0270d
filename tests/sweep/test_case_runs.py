"""The sweep's adapter to the batch engine: what a case's end means, in the outcomes' words."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mgradcheck.outcomes import Outcome
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.sweep.case_runs import Executor, Status, Task
from mgradcheck.sweep.catalogue import Case, arr
from tests.conftest import environment

SIN = Case("sin", "sin", "unary", "lambda x: mx.sin(x)", (arr(3),))


def test_a_status_that_is_an_outcome_is_that_outcome() -> None:
    for outcome in (Outcome.PASS, Outcome.CRASH, Outcome.ERROR, Outcome.TIMEOUT, Outcome.NOT_RUN):
        status = Status.of(outcome)
        assert status.outcome is outcome and status.label == outcome.label
    # What a batch child never reports is the harness's error; gradcheck's own words are no outcome.
    assert Status.of(Outcome.FAIL) is Status.ERROR and Status.of(Outcome.SKIP) is Status.ERROR
    assert [s for s in Status if s.outcome is None] == [
        Status.WRONG,
        Status.UNSUPPORTED,
        Status.NOT_CHECKED,
    ]


def test_a_child_that_dies_before_its_first_case_has_each_case_run_alone(tmp_path: Path) -> None:
    """It names no case: the first runs alone, the rest are batched again, and so on; no batch
    is run again unchanged until the deadline (every case "not run")."""
    (tmp_path / "numpy.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    command = ChildCommand(sys.executable, {"PYTHONPATH": str(tmp_path)})  # gradcheck imports it
    tasks = [Task.of(SIN, dtype) for dtype in ("float32", "float16", "bfloat16")]
    started = time.monotonic()
    results = Executor(command, environment(), jobs=2, batch_size=3).run(tasks, started + 10)
    assert [r.status for r in results] == [Status.CRASH] * 3, [r.message for r in results]
    assert all("SIGSEGV" in r.message for r in results)
    assert "before it started" in results[0].note
    assert time.monotonic() - started < 8  # well before the deadline


def test_a_hung_child_names_the_path_it_hung_in_as_a_crashed_one_does() -> None:
    """The default sweep of 0.32.4 saw a graph hang in the shapeless check (the size-1
    reduction corrupting memory, which segfaults on other runs): without the path, the
    hang named no check, so no entry could hold it."""
    from mgradcheck.run.observation import Observation
    from mgradcheck.sweep.case_runs import from_observation

    crumb = ('gradcheck: running shapeless compile with (b) traced, float32 | {"check": '
             '"shapeless", "traced": ["b"], "repro": {"variant": "size-1 axes"}}')  # fmt: skip
    values = 'gradcheck: values {"dtype": "float32", "values": [[1.0]]}'
    task = Task.of(SIN, "float32")
    for outcome, kind, how in ((Outcome.TIMEOUT, "timeout", "hung"),
                               (Outcome.CRASH, "crash", "crashed")):  # fmt: skip
        seen = Observation(outcome, 120.0, signal="SIGSEGV", message="no result after 120s",
                           stderr=f"{crumb}\n{values}\n")  # fmt: skip
        result = from_observation(task, seen)
        assert result.status.outcome is outcome
        (found,) = result.findings
        assert (found["kind"], found["check"]) == (kind, "shapeless")
        assert found["paths"] == f"shapeless compile {how}"
        assert found["repro"] == {"check": "shapeless", "variant": "size-1 axes"}


def test_a_reduction_mlx_refuses_over_no_elements_is_unsupported() -> None:
    """The default sweep of 0.32.4 drew logsumexp of an empty int64 array, which MLX refuses
    by design ("Received empty array"), as max does: a refusal, not the harness's error."""
    tasks = [
        Task.of(Case(f"{op}-empty", op, "reduction", f"lambda x: mx.{op}(x)", (arr(0),)), "float32")
        for op in ("logsumexp", "max")
    ]
    command = ChildCommand(sys.executable, {})
    results = Executor(command, environment(), jobs=1).run(tasks, time.monotonic() + 60)
    assert [r.status for r in results] == [Status.UNSUPPORTED] * 2, [r.message for r in results]
