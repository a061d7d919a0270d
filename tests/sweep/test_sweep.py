"""The sweep: catalogue, grouping, shrink candidates, emitted entries, and a small real sweep."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mgradcheck.child.gradcheck_spec import CHECKS, COMPILED, FIRST_ORDER
from mgradcheck.corpus import loader
from mgradcheck.sweep import emit
from mgradcheck.sweep.case_runs import CaseResult, Status, Task
from mgradcheck.sweep.catalogue import Case, arr, catalogue, select
from mgradcheck.sweep.findings import Group, arg_names, group
from mgradcheck.sweep.pipeline import SweepOptions, plan
from mgradcheck.sweep.shrink import Shrunk, narrow, simpler_values, smaller_shapes
from tests.conftest import MINIMAL, environment

ATAN2 = Case(
    "arctan2", "arctan2", "binary", "lambda a, b: mx.arctan2(a, b)", (arr(2, 3), arr(2, 3))
)


def finding(kind: str, check: str, traced: tuple[str, ...] = ("a", "b")) -> dict[str, object]:
    return {"kind": kind, "check": check, "paths": "jvp vs finite differences", "traced": list(traced),
            "dtype": "float32", "point": 0, "detail": "observed [0.] expected [1.]", "inputs": "a=[1.]"}  # fmt: skip


def wrong(case: Case, dtype: str, *found: dict[str, object]) -> CaseResult:
    return CaseResult(Task.of(case, dtype), Status.WRONG, findings=list(found))


def test_catalogue_ids_are_unique_and_every_case_is_a_valid_entry(tmp_path: Path) -> None:
    cases = catalogue()
    assert len({c.id for c in cases}) == len(cases) > 150
    for case in cases:
        data = {"id": f"case-{len(list(tmp_path.iterdir()))}", "title": case.id, "summary": "s",
                "upstream": {"report": "https://example.invalid/r"}, "bug": {"outcome": "fail"},
                "gradcheck": case.spec("float32")}  # fmt: skip
        (tmp_path / f"{case.id}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert len(loader.load([tmp_path])) == len(cases)


def test_plan_selects_by_pattern_and_runs_transforms_only_in_transform_dtypes() -> None:
    chosen, tasks = plan(SweepOptions(patterns=("arctan2*",), dtypes=("float32", "float16")))
    assert [c.id for c in chosen] == ["arctan2", "arctan2-const-left", "arctan2-const-right"]
    assert len(tasks) == 6
    for task in tasks:
        transforms = {"compile", "vmap", "views", "specials", "shapeless", "custom"}
        assert transforms <= set(task.spec["checks"]) if task.dtype == "float32" else not transforms & set(task.spec["checks"])  # fmt: skip
    assert {c.family for c in select(catalogue(), ["conv"])} == {"conv"}
    decompositions = plan(SweepOptions(patterns=("linalg.inv",)))[1]  # by an operation covered
    assert {t.case.id for t in decompositions} == {"inv", "inv-cpu", "inv-batched"}
    assert {t.dtype for t in decompositions} == {"float32"}
    assert "shapeless" not in decompositions[0].spec["checks"]  # eye(3) is written into fn
    # --skip compiled: every check but those that build kernels, in every dtype it runs in.
    skipped = plan(SweepOptions(patterns=("arctan2",), skip=COMPILED))[1]
    assert [
        t.spec["checks"] for t in skipped if t.case.id == "arctan2" and t.dtype == "float32"
    ] == [[c for c in ATAN2.checks if c not in COMPILED]]
    assert all(set(t.spec["checks"]) == set(FIRST_ORDER) for t in skipped if t.dtype != "float32")


def test_findings_on_the_same_runs_are_one_group_named_by_the_best_kind() -> None:
    results = [
        wrong(ATAN2, "float32", finding("wrong-value", "vjp"), finding("wrong-value", "jvp"), finding("wrong-dtype", "dtype")),
        wrong(ATAN2, "float16", finding("wrong-value", "vjp"), finding("wrong-value", "jvp"), finding("wrong-dtype", "dtype")),
        CaseResult(Task.of(ATAN2, "bfloat16"), Status.CRASH, message="SIGSEGV"),
        CaseResult(Task.of(ATAN2, "float64"), Status.PASS),
    ]  # fmt: skip
    groups = group(results)
    assert [(g.kind, g.check) for g in groups] == [("wrong-value", "jvp"), ("crash", "")]
    assert groups[0].also == [("wrong-value", "vjp"), ("wrong-dtype", "dtype")]
    assert groups[0].representative().task.dtype == "float32"
    assert groups[1].shown_by(results[2]) and not groups[0].shown_by(results[3])


def test_shrink_candidates_trace_fewer_arguments_and_shrink_shapes_and_values() -> None:
    result = wrong(ATAN2, "float32", finding("wrong-value", "jvp", traced=("b",)))
    (what, spec), _ = narrow(Group("arctan2", "wrong-value", "jvp"), result)
    assert what == "traced b, jvp only" and spec["checks"] == ["jvp"]
    assert [i.get("const", False) for i in spec["inputs"]] == [True, False]
    crash = narrow(
        Group("arctan2", "crash", ""), CaseResult(Task.of(ATAN2, "float32"), Status.CRASH)
    )
    assert [w for w, _ in crash][:2] == ["only a traced", "only b traced"]
    shapes = smaller_shapes(result)
    assert shapes[0][0] == "every dimension 1" and shapes[0][1]["inputs"][0]["shape"] == [1, 1]
    # A start written into the function stays in range only at the shapes it was written for.
    update = Case("su", "slice_update", "shape", "lambda x, y: mx.slice_update(x, y, mx.array([1, 0]), (0, 1))", (arr(4, 3), arr(2, 3)))  # fmt: skip
    assert smaller_shapes(wrong(update, "float32", finding("wrong-value", "vmap"))) == []
    values = simpler_values(result)
    assert values[0][1]["inputs"][1] == {"shape": [2, 3], "fill": 1.0}
    assert arg_names("lambda a, b=2: a") == ["a", "b"] and arg_names("mx.sin") == []


def test_an_emitted_entry_validates_and_names_what_it_found(tmp_path: Path) -> None:
    result = wrong(ATAN2, "float32", finding("wrong-value", "jvp"))
    found = Group("arctan2", "wrong-value", "jvp", [result])
    path = emit.write(tmp_path, found, Shrunk(result, ["one point"]), environment(mlx="0.30.0"))
    (entry,) = loader.load([path])
    assert entry.id == "sweep-arctan2-wrong-value-jvp"
    assert entry.gradcheck is not None and entry.gradcheck["fn"] == ATAN2.fn
    assert str(entry.evidence[0].mlx) == "0.30.0"  # quoted: not read back as the number 0.3
    assert entry.bug.match is not None and "jvp vs finite differences" in entry.summary
    # A live bug has no upstream report yet: it is open, found by the sweep.
    assert entry.upstream.report is None and entry.found_by is not None
    assert (entry.found_by.tool, entry.found_by.mlx, entry.found_by.case) == (
        "mgradcheck sweep",
        "0.30.0",
        "arctan2",
    )
    assert entry.title == "sweep: arctan2: wrong-value in jvp vs finite differences"


SEGFAULT = Case("segfault", "segfault", "fixture", "lambda x: __import__('ctypes').string_at(0)",
                ({"shape": [1], "fill": 1.0},))  # fmt: skip
SIN = Case("sin", "sin", "unary", "lambda x: mx.sin(x)", (arr(3),))


@pytest.mark.mlx
@pytest.mark.slow
def test_a_small_sweep_survives_a_crash_and_emits_entries_that_reproduce(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    from mgradcheck.run import stages as pipeline
    from mgradcheck.sweep.pipeline import sweep

    divmod_case = next(c for c in catalogue() if c.id == "divmod-const")  # wrong on 0.32.4 too
    command, env = pipeline.prepare(sys.executable)
    options = SweepOptions(
        dtypes=("float32",), transform_dtypes=(), budget=300, emit=tmp_path, points=1
    )
    report = sweep(command, env, options, cases=[SIN, SEGFAULT, divmod_case])
    status = {r.task.case.id: r for r in report.results}
    assert status["sin"].status is Status.PASS
    assert status["segfault"].status is Status.CRASH and "SIGSEGV" in status["segfault"].message
    assert "batch child died" in status["segfault"].note  # found in a batch, confirmed alone
    kinds = {(f.group.op, f.group.kind) for f in report.findings}
    assert ("segfault", "crash") in kinds
    for f in report.findings:
        assert f.reproduced, f.reproduction
    assert len(loader.load([tmp_path])) == len(report.findings)
    if ("divmod", "wrong-value") in kinds:
        shrunk = next(f for f in report.findings if f.group.op == "divmod").shrunk
        assert shrunk.spec["inputs"][0]["shape"] == [1, 1]


@pytest.mark.mlx
@pytest.mark.slow
def test_a_shapeless_crash_through_where_alone_is_the_known_entry_not_new(tmp_path: Path) -> None:
    """The corpus's shapeless crash is a sum replayed at a size-1 axis; where's vjp over a
    broadcast operand reduces the same way. Without a sum in the same run, that crash used
    to be counted new."""
    pytest.importorskip("mlx.core")
    out = tmp_path / "sweep.json"
    others = ",".join(c for c in CHECKS if c != "shapeless")
    done = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "sweep", "--ops", "where-broadcast", "--dtypes",
         "float32", "--skip", others, "--no-shrink", "-j", "1", "-q", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # a finding
    (finding,) = json.loads(out.read_text())["findings"]
    assert (finding["op"], finding["kind"]) == ("where", "crash"), finding["evidence"]
    assert finding["known"] == "shapeless-reduction-to-size1-crash"
    assert "(1 known in the corpus, 0 by design, 0 new)" in done.stdout + done.stderr


@pytest.mark.mlx
@pytest.mark.slow
def test_an_interrupted_sweep_writes_what_finished(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    out = tmp_path / "sweep.json"
    process = subprocess.Popen(
        # Several children's worth of runs (96 cases a child), so that the signal comes while
        # the catalogue runs.
        [sys.executable, "-m", "mgradcheck", "sweep", "--ops", "unary", "--ops", "binary",
         "--dtypes", "float32,float16,bfloat16", "--transform-dtypes", "none", "-j", "1",
         "--points", "1", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    while "cases run" not in (line := process.stderr.readline()):
        assert line, "the sweep ended before running a batch"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted by SIGINT" in stderr and "Traceback" not in stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    statuses = {r["status"] for r in data["results"]}
    assert "not run" in statuses and statuses - {"not run"}, statuses


@pytest.mark.mlx
def test_only_the_batches_running_are_shown_as_running() -> None:
    """A wave holds two batches per job; the queued one is not shown as running."""
    pytest.importorskip("mlx.core")
    from mgradcheck.run import stages as pipeline
    from mgradcheck.sweep.case_runs import Executor
    from tests.builders import RecordingProgress

    class Peak(RecordingProgress):
        most = 0

        def item_started(self, item: str) -> None:
            super().item_started(item)
            self.most = max(self.most, len(self.running))

    command, env = pipeline.prepare(sys.executable)
    progress = Peak()
    options = SweepOptions(dtypes=("float32",), transform_dtypes=(), points=1)
    _, tasks = plan(options, [SIN, Case("cos", "cos", "unary", "lambda x: mx.cos(x)", (arr(3),))])
    results = Executor(command, env, jobs=1, batch_size=1, progress=progress).run(tasks)
    assert [r.status for r in results] == [Status.PASS, Status.PASS]
    assert progress.started == ["sin[float32]", "cos[float32]"]
    assert progress.most == 1 and not progress.running


@pytest.mark.parametrize("where", ["under a file", "read-only directory"])
def test_an_emit_directory_that_cannot_take_entries_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    import tempfile

    from click.testing import CliRunner

    from mgradcheck.cli import cli

    (tmp_path / "a-file").write_text("")
    emit_dir = tmp_path / "a-file" / "found"
    if where == "read-only directory":
        emit_dir = tmp_path / "found"
        emit_dir.mkdir()
        real = tempfile.mkstemp

        def read_only(*args: Any, **kwargs: Any) -> tuple[int, str]:
            if Path(kwargs.get("dir") or ".") == emit_dir:  # as chmod 555 is for all but root
                raise PermissionError(13, "Permission denied")
            return real(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", read_only)

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("a subprocess was started")

    monkeypatch.setattr(subprocess, "Popen", started)
    done = CliRunner().invoke(cli, ["sweep", "--ops", "sin", "--emit", str(emit_dir)])
    assert done.exit_code == 2, done.output
    (line,) = done.output.strip().splitlines()
    assert line.startswith(f"mgradcheck: error: cannot write in {emit_dir}: "), line


@pytest.mark.mlx
def test_a_ctrl_c_between_the_engines_runs_keeps_what_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("mlx.core")
    from mgradcheck.run import stages
    from mgradcheck.sweep import pipeline

    def interrupted(report: pipeline.SweepReport) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "name_causes", interrupted)
    command, env = stages.prepare(sys.executable)
    options = pipeline.SweepOptions(patterns=("exp",), dtypes=("float32",), transform_dtypes=())
    report = pipeline.sweep(command, env, options)
    assert report.interrupted is not None and report.interrupted.signum == signal.SIGINT
    assert [r.status.label for r in report.results] == ["pass"]


@pytest.mark.mlx
@pytest.mark.parametrize("holder", ["sweep-divmod-wrong-value-jvp", "mine"])
def test_an_emitted_entry_never_replaces_a_file_nor_takes_an_id_already_there(
    tmp_path: Path, holder: str
) -> None:
    """An entry emitted before and edited by hand, under its own name or another: kept as it
    is, and the new one written beside it under an id of its own; the directory validates."""
    pytest.importorskip("mlx.core")
    found = tmp_path / "found"
    found.mkdir()
    edited = found / f"{holder}.yaml"
    edited.write_text(MINIMAL.format(id="sweep-divmod-wrong-value-jvp"), encoding="utf-8")
    before = edited.read_bytes()

    def mgradcheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mgradcheck", *args],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    done = mgradcheck(
        "sweep", "--ops", "divmod-const", "--dtypes", "float32", "--transform-dtypes", "none",
        "--points", "1", "-j1", "-q", "--no-shrink", "--emit", str(found),
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert edited.read_bytes() == before
    written = found / "sweep-divmod-wrong-value-jvp-2.yaml"
    assert "(reproduces)" in done.stdout
    assert f"      -> {written}" in done.stdout.splitlines()  # the path whole, on its own line
    assert sorted(p.name for p in found.iterdir()) == sorted([edited.name, written.name])
    assert "mgradcheck report upstream sweep-divmod-wrong-value-jvp-2)" in written.read_text()
    checked = mgradcheck("validate", str(found))
    assert checked.returncode == 0, checked.stdout + checked.stderr
