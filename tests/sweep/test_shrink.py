"""Shrinking every finding at once, within the sweep's budget, with its progress shown."""

from __future__ import annotations

import ast
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from mgradcheck.sweep.case_runs import CaseResult, Executor, Status, Task
from mgradcheck.sweep.catalogue import Case, arr
from mgradcheck.sweep.findings import Group
from mgradcheck.sweep.pipeline import FindingReport, SweepReport
from mgradcheck.sweep.render import render
from mgradcheck.sweep.shrink import shrink_all
from tests.builders import RecordingProgress
from tests.conftest import environment

ATAN2 = Case(
    "arctan2", "arctan2", "binary", "lambda a, b: mx.arctan2(a, b)", (arr(2, 3), arr(2, 3))
)
SIN = Case("sin", "sin", "unary", "lambda x: mx.sin(x)", (arr(3),))


def finding(kind: str, check: str) -> dict[str, Any]:
    return {"kind": kind, "check": check, "traced": ["b"], "paths": "jvp vs finite differences",
            "detail": "observed [1., 2.], expected [1., 3.]"}  # fmt: skip


def wrong_jvp(task: Task) -> CaseResult:
    """arctan2's jvp is wrong in value and dtype (two groups, one representative); sin crashes."""
    if task.case.op == "sin":
        return CaseResult(task, Status.CRASH, message="SIGSEGV")
    found = [finding(kind, "jvp") for kind in ("wrong-value", "wrong-dtype")]
    return CaseResult(task, Status.WRONG, findings=found if "jvp" in task.spec["checks"] else [])


class Fake(Executor):
    """Runs nothing: each task's result is ``outcome(task)``; each run's tasks are kept."""

    def __init__(self, outcome: Callable[[Task], CaseResult], pause: float = 0.0) -> None:
        super().__init__(None, environment())  # type: ignore[arg-type]
        self.outcome = outcome
        self.pause = pause
        self.calls: list[tuple[list[Task], list[str]]] = []

    def run(
        self,
        tasks: Sequence[Task],
        deadline: float | None = None,
        batch_size: int | None = None,
        *,
        group: Sequence[str] | None = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> list[CaseResult]:
        self.calls.append((list(tasks), list(group or [])))
        time.sleep(self.pause)
        return [self.outcome(task) for task in tasks]


def groups() -> list[Group]:
    wrong = wrong_jvp(Task.of(ATAN2, "float32"))
    crash = CaseResult(Task.of(SIN, "float32"), Status.CRASH)
    return [
        Group("arctan2", "wrong-value", "jvp", [wrong]),
        Group("arctan2", "wrong-dtype", "jvp", [wrong]),
        Group("sin", "crash", "", [crash]),
    ]


def test_every_finding_shrinks_at_once_and_a_candidate_runs_once() -> None:
    fake = Fake(wrong_jvp)
    progress = RecordingProgress()
    shrunk = shrink_all(groups(), fake, progress=progress)
    # One run per step, each with every finding's candidates (up to -j children at once),
    # where one finding after another took a run per finding and step.
    assert len(fake.calls) <= 5
    first, kinds = fake.calls[0]
    assert {t.case.op for t in first} == {"arctan2", "sin"}
    specs = [json.dumps(t.spec, sort_keys=True) for tasks, _ in fake.calls for t in tasks]
    assert len(specs) == len(set(specs))  # the two arctan2 findings proposed alike: run once
    # Candidates of one operation share children; a crash's each run alone.
    assert {k for t, k in zip(first, kinds, strict=True) if t.case.op == "arctan2"} == {
        "op arctan2"
    }
    crash_kinds = [k for t, k in zip(first, kinds, strict=True) if t.case.op == "sin"]
    assert len(crash_kinds) == len(set(crash_kinds)) > 1
    assert [s.steps[0] for s in shrunk] == ["traced b, jvp only", "traced b, jvp only", "jvp only"]
    assert shrunk[0].spec["checks"] == ["jvp"] and not any(s.stopped for s in shrunk)
    assert shrunk[0].spec["inputs"][0]["shape"] == [1, 1]
    # Shown as it goes: each finding once done, each step as a status.
    assert progress.done == 3 and len(progress.lines) == 3
    assert any(c.startswith("status step 1: ") for c in progress.calls)


def test_a_finding_the_budget_leaves_is_reported_as_far_as_it_got() -> None:
    fake = Fake(wrong_jvp, pause=0.3)
    shrunk = shrink_all(groups(), fake, deadline=time.monotonic() + 0.2)
    assert len(fake.calls) == 1  # the second step would start after the deadline
    assert [s.stopped for s in shrunk] == ["out of time"] * 3
    assert shrunk[0].steps == ["traced b, jvp only"]  # what the first step found is kept


def test_a_step_cut_short_by_the_deadline_stops_its_finding() -> None:
    def late(task: Task) -> CaseResult:  # the engine started none of sin's candidates in time
        return CaseResult(task, Status.NOT_RUN) if task.case.op == "sin" else wrong_jvp(task)

    shrunk = shrink_all(groups(), Fake(late), deadline=time.monotonic() + 60)
    assert [s.stopped for s in shrunk] == ["", "", "out of time"]
    assert shrunk[2].result.task.spec == Task.of(SIN, "float32").spec  # the finding, as found


def test_the_report_and_its_last_line_count_what_was_left_unshrunk() -> None:
    found = groups()
    shrunk = shrink_all(found, Fake(wrong_jvp, pause=0.3), deadline=time.monotonic() + 0.2)
    results = [g.results[0] for g in found]
    report = SweepReport(environment(), 2, results, budget=60.0)
    report.findings = [FindingReport(g, s) for g, s in zip(found, shrunk, strict=True)]
    data = report.to_json()
    assert [f["shrink_stopped"] for f in data["findings"]] == ["out of time"] * 3
    assert "3 distinct findings (3 left unshrunk)" in report.summary_line()
    last = render(report).splitlines()[-1]
    assert (
        last
        == "  3 findings left unshrunk (reported as found): the budget of 60s ran out (raise --budget)"
    )


def test_each_finding_says_what_was_found_and_where_to_see_it_all() -> None:
    """Not just `FINDING sin: crash: 1 run`: the case, dtype, shapes, and what differed or how
    the child died, then where the whole of it is."""
    found = groups()
    shrunk = shrink_all(found, Fake(wrong_jvp), deadline=time.monotonic() + 60)
    report = SweepReport(environment(), 2, [g.results[0] for g in found], budget=60.0)
    report.findings = [FindingReport(g, s) for g, s in zip(found, shrunk, strict=True)]
    lines = render(report).splitlines()
    shown = "      arctan2 [float32] at (1, 1), (1, 1): jvp vs finite differences: observed [1., 2.], expected [1., 3.]"
    assert shown in lines  # the shrunk point's shapes
    crash = lines[lines.index(next(x for x in lines if x.startswith("  FINDING sin: crash"))) + 1]
    assert crash == "      sin [float32] at (1,): SIGSEGV"
    assert any("--json FILE" in x and "--emit DIR" in x for x in lines)


def test_each_finding_records_what_its_candidates_took() -> None:
    def timed(task: Task) -> CaseResult:
        result = wrong_jvp(task)
        result.seconds = 0.5
        return result

    fake = Fake(timed)
    shrunk = shrink_all(groups(), fake)
    ran = sum(len(tasks) for tasks, _ in fake.calls)
    # Each candidate is charged once, to the finding that proposed it first.
    assert sum(s.seconds for s in shrunk) == pytest.approx(0.5 * ran)
    assert all(s.seconds > 0 for s in shrunk[:1])


def test_a_drawn_call_s_written_arguments_shrink_to_the_ones_it_needs() -> None:
    """expand_dims with several axes is wrong under vmap (``vmap-expand-dims-several-axes``);
    a drawn call that also writes other literal arguments sheds them and keeps the axes."""
    fn = "lambda a: mx.sum(mx.expand_dims(a, axis=(0, 1)), axis=(0, -1), keepdims=True)"
    drawn = Case("gen0-0001-expand_dims-float32", "expand_dims", "generated", fn, (arr(2, 3),),
                 drawn=True)  # fmt: skip

    def needs_two_axes(task: Task) -> CaseResult:
        tree = ast.parse(task.spec["fn"], mode="eval")
        inner = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and ast.unparse(n.func) == "mx.expand_dims")  # fmt: skip
        axes = ast.literal_eval(inner.keywords[0].value) if inner.keywords else 0
        several = isinstance(axes, tuple) and len(axes) > 1
        return CaseResult(task, Status.WRONG if several else Status.PASS,
                          findings=[finding("wrong-shape", "vmap")] if several else [])  # fmt: skip

    wrong = needs_two_axes(Task.of(drawn, "float32"))
    shrunk = shrink_all(
        [Group("expand_dims", "wrong-shape", "vmap", [wrong])], Fake(needs_two_axes)
    )
    assert shrunk[0].spec["fn"] == "lambda a: mx.sum(mx.expand_dims(a, axis=(0, 1)))"
    assert (
        "mx.sum without axis=" in shrunk[0].steps and "mx.sum without keepdims=" in shrunk[0].steps
    )
    # a catalogue case's arguments are its writer's: they stay
    listed = Case("expand_dims", "expand_dims", "shape", fn, (arr(2, 3),))
    wrong = needs_two_axes(Task.of(listed, "float32"))
    shrunk = shrink_all(
        [Group("expand_dims", "wrong-shape", "vmap", [wrong])], Fake(needs_two_axes)
    )
    assert shrunk[0].spec["fn"] == fn


def test_an_array_indexed_by_drawn_indices_keeps_its_shape() -> None:
    """take_along_axis(a, indices) with indices drawn in 0..4 for a of (5,): halving a made
    the default sweep of 0.32.4 read out of bounds (eager MLX returned 3e-41)."""
    from mgradcheck.sweep.shrink import smaller_shapes

    fn = "lambda a, indices: mx.take_along_axis(a, indices, -1)"
    indexed = Case("gen0-0002-take_along_axis-float32", "take_along_axis", "generated", fn,
                   ({"shape": [5]}, {"shape": [4], "dtype": "int32", "range": [0, 4]}),
                   drawn=True)  # fmt: skip
    assert smaller_shapes(CaseResult(Task.of(indexed, "float32"), Status.WRONG)) == []
    # a mask is no index: its array shrinks with the others
    masked = Case("where", "where", "t", "lambda m, a: mx.where(m, a, 0.0)",
                  ({"shape": [4], "dtype": "bool"}, {"shape": [4]}))  # fmt: skip
    assert smaller_shapes(CaseResult(Task.of(masked, "float32"), Status.WRONG))


def test_the_array_of_as_strided_keeps_its_shape() -> None:
    from mgradcheck.sweep.shrink import smaller_shapes

    fn = "lambda a: mx.as_strided(a, (3, 2), (1, 3), 0)"
    viewed = Case("gen0-0270-as_strided-float32", "as_strided", "generated", fn,
                  ({"shape": [2, 3]},), drawn=True)  # fmt: skip
    assert smaller_shapes(CaseResult(Task.of(viewed, "float32"), Status.WRONG)) == []
