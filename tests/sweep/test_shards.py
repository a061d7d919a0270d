"""``sweep --shard K/N``: operations dealt whole, and the shards' reports merged into the
unsharded report (the same cases, results and findings, in the same order)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.corpus.shard import Shard, deal, split
from mgradcheck.sweep import shards
from mgradcheck.sweep.case_runs import CaseResult, Status, Task
from mgradcheck.sweep.catalogue import Case, arr
from mgradcheck.sweep.findings import group
from mgradcheck.sweep.pipeline import FindingReport, SweepOptions, SweepReport, plan
from mgradcheck.sweep.shrink import Shrunk
from tests.builders import mgradcheck
from tests.conftest import environment


def case(id: str, op: str) -> Case:
    return Case(id, op, "unary", f"lambda x: mx.{op}(x)", (arr(3),))


CASES = [case("sin", "sin"), case("cos", "cos"), case("sin-const", "sin"), case("exp", "exp"),
         case("tan", "tan"), case("cos-scaled", "cos")]  # fmt: skip
OPTIONS = SweepOptions(dtypes=("float32", "float16"), transform_dtypes=())


def finding(kind: str, check: str) -> dict[str, Any]:
    return {"kind": kind, "check": check, "paths": "jvp vs finite differences", "traced": ["x"],
            "dtype": "float32", "point": 0, "detail": "observed [0.] expected [1.]", "inputs": "x=[1.]"}  # fmt: skip


def outcome(task: Task) -> CaseResult:
    """A made-up sweep: two ops wrong (one in two ways on other runs), a crash, passes."""
    if task.case.op == "sin" and task.dtype == "float16":
        return CaseResult(task, Status.WRONG, [finding("wrong-value", "jvp")])
    if task.case.id == "cos-scaled":
        return CaseResult(task, Status.WRONG, [finding("wrong-dtype", "vjp"), finding("wrong-value", "jvp")])  # fmt: skip
    if task.key == "tan[float32]":
        return CaseResult(task, Status.CRASH, message="SIGSEGV")
    return CaseResult(task, Status.PASS, ran={"jvp": 2})


def report(tasks: list[Task], cases: int, **meta: Any) -> dict[str, Any]:
    results = [outcome(t) for t in tasks]
    findings = [FindingReport(g, Shrunk(g.representative())) for g in group(results)]
    swept = SweepReport(environment(), cases, results, findings, seconds=3.0, budget=60.0)
    swept.meta = dict(meta)
    return swept.to_json()


def sharded(count: int, options: SweepOptions = OPTIONS) -> list[dict[str, Any]]:
    chosen, tasks = plan(options, CASES)
    reports = []
    for k in range(1, count + 1):
        part = split(
            Shard(k, count), shards.units(tasks), shards.items(tasks), shards.identity(tasks)
        )
        mine = [t for t in tasks if t.case.op in part.units]
        reports.append(report(mine, sum(c.op in part.units for c in chosen), **part.meta))
    return reports


def same(data: Any) -> Any:
    """A sweep report less what says how it ran (its shards, how long, each run's time): what
    it found."""
    if isinstance(data, dict):
        return {
            k: same(v) for k, v in data.items() if k not in ("meta", "seconds", "shrink_seconds")
        }
    return [same(v) for v in data] if isinstance(data, list) else data


@pytest.mark.parametrize("count", [1, 2, 3, 4, 6])
def test_merged_shards_equal_the_unsharded_sweep(count: int) -> None:
    _, tasks = plan(OPTIONS, CASES)
    whole = report(tasks, len(CASES))
    assert [f["title"] for f in whole["findings"]] == [
        "sin: wrong-value (jvp)", "tan: crash", "cos: wrong-value (jvp), also vjp"
    ]  # fmt: skip
    parts = sharded(count)
    merged, missing = shards.merge(parts[::-1], [f"s{k}.json" for k in range(count, 0, -1)])
    assert missing == []
    assert same(merged) == same(whole)
    assert [s["shard"] for s in merged["meta"]["sources"]] == [
        f"{k}/{count}" for k in range(count, 0, -1)
    ]


def test_an_operation_is_dealt_whole_with_its_cases() -> None:
    parts = sharded(3)
    ops = [{r["op"] for r in p["results"]} for p in parts]
    assert sorted(op for shard in ops for op in shard) == ["cos", "exp", "sin", "tan"]  # each once
    for part, names in zip(parts, ops, strict=True):
        assert {r["case"] for r in part["results"]} == {c.id for c in CASES if c.op in names}


def test_sweep_durations_time_an_operation_by_its_cases() -> None:
    units = {u.key: u for u in shards.units(plan(OPTIONS, CASES)[1])}
    assert units["sin"].members == ("sin", "sin-const") and units["sin"].cost == 4
    times = {"sin": 1.0, "sin-const": 2.0, "cos": 0.5, "cos-scaled": 0.5, "exp": 9.0}
    assert units["sin"].seconds(times) == 3.0 and units["tan"].seconds(times) is None


def write(tmp_path: Path, reports: list[dict[str, Any]], stem: str = "shard") -> list[str]:
    paths = []
    for k, data in enumerate(reports, start=1):
        path = tmp_path / f"{stem}-{k}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


def test_cli_merges_a_sweeps_shards_into_its_json_and_a_summary_of_the_findings(
    tmp_path: Path,
) -> None:
    paths = write(tmp_path, sharded(2))
    merged, summary = tmp_path / "sweep.json", tmp_path / "summary.md"
    done = CliRunner().invoke(
        cli, ["report", "merge", *paths, "--json", str(merged), "--summary", str(summary)]
    )
    assert done.exit_code == 0, done.output
    assert "merged 2 sweep reports: 6 catalogue cases, 12 runs; 3 distinct findings" in done.output
    _, tasks = plan(OPTIONS, CASES)
    assert same(json.loads(merged.read_text())) == same(report(tasks, len(CASES)))
    text = summary.read_text()
    assert text.startswith("## mgradcheck: sweep on mlx 0.32.4 cpu")
    assert "**3 distinct findings**" in text
    assert "| cos: wrong-value (jvp), also vjp | 2 |" in text
    junit = CliRunner().invoke(cli, ["report", "merge", *paths, "--junit", "x.xml"])
    assert junit.exit_code == 2 and "--junit: not for a sweep report" in junit.output


def test_cli_refuses_a_missing_repeated_or_foreign_sweep_shard(tmp_path: Path) -> None:
    paths = write(tmp_path, sharded(3))
    missing = CliRunner().invoke(cli, ["report", "merge", paths[0], paths[2], "--json", "-"])
    assert missing.exit_code == 2
    assert "no report for shard mlx 0.32.4 cpu" in missing.output and ": 2/3" in missing.output
    allowed = CliRunner().invoke(
        cli, ["report", "merge", paths[0], paths[2], "--json", "-", "--allow-missing"]
    )
    assert allowed.exit_code == 0 and '"missing_shards"' in allowed.stdout
    twice = CliRunner().invoke(cli, ["report", "merge", *paths, paths[1], "--json", "-"])
    assert twice.exit_code == 2 and "shard 2/3 of mlx 0.32.4 cpu" in twice.output
    other_seed = write(tmp_path, sharded(3, dataclasses.replace(OPTIONS, seed=1)), "seed")
    mixed = CliRunner().invoke(cli, ["report", "merge", *paths[:2], other_seed[2], "--json", "-"])
    assert mixed.exit_code == 2 and mixed.stdout == ""
    (line,) = mixed.output.strip().splitlines()
    assert "are shards of different selections" in line and other_seed[2] in line


@pytest.mark.mlx
def test_a_real_sweeps_shards_merge_into_the_unsharded_report(tmp_path: Path) -> None:
    """Two shards of a small real sweep (a wrong divmod among passing ops), shrunk, merged."""
    pytest.importorskip("mlx.core")
    chosen = ["--ops", "sin*", "--ops", "divmod*", "--ops", "cos*", "--dtypes", "float32",
              "--transform-dtypes", "none", "--points", "1", "-q"]  # fmt: skip
    paths = []
    for k in (1, 2):
        path = tmp_path / f"sweep-{k}.json"
        run = mgradcheck("sweep", *chosen, "--shard", f"{k}/2", "--json", str(path))
        assert run.returncode in (0, 1), run.stderr
        paths.append(path)
    whole, merged = tmp_path / "whole.json", tmp_path / "merged.json"
    run = mgradcheck("sweep", *chosen, "--json", str(whole))
    # divmod's zero derivative is found on every release to date, and documented (a guard).
    assert run.returncode == 0 and "BY DESIGN divmod" in run.stdout, run.stdout + run.stderr
    done = mgradcheck("report", "merge", *map(str, paths[::-1]), "--json", str(merged))
    assert done.returncode == 0, done.stderr
    expected, got = json.loads(whole.read_text()), json.loads(merged.read_text())
    assert [f["title"] for f in expected["findings"]] == ["divmod: wrong-value (jvp), also vjp"]
    assert [f["known"] for f in got["findings"]] == ["divmod-remainder-zero-derivative"]
    assert same(got) == same(expected)


def test_durations_charge_a_finding_s_shrinking_to_the_case_it_was_found_in() -> None:
    data = {
        "results": [
            {"case": "sin", "seconds": 1.0}, {"case": "sin", "seconds": 0.5},
            {"case": "cos", "seconds": 2.0}, {"case": "tan", "seconds": None},
        ],
        "findings": [{"evidence": {"case": "sin"}, "shrink_seconds": 4.0}],
    }  # fmt: skip
    assert shards.durations(data) == {"sin": 5.5, "cos": 2.0}


@pytest.mark.mlx
def test_a_real_sweep_times_each_run_and_its_durations_deal_its_shards(tmp_path: Path) -> None:
    """Each run's seconds, from its child's "done" line, are what 'report durations' writes and
    what --shard K/N --durations deals the operations by (the slowest first)."""
    pytest.importorskip("mlx.core")
    chosen = ["--ops", "sin", "--ops", "cos", "--ops", "exp", "--ops", "logaddexp",
              "--dtypes", "float32,float16", "--transform-dtypes", "none", "--points", "1"]  # fmt: skip
    swept, times = tmp_path / "sweep.json", tmp_path / "durations.json"
    run = mgradcheck("sweep", *chosen, "-q", "--no-shrink", "--json", str(swept))
    assert run.returncode == 0, run.stderr
    results = json.loads(swept.read_text())["results"]
    assert results and all(r["seconds"] > 0 for r in results), results
    done = mgradcheck("report", "durations", str(swept), "-o", str(times))
    assert done.returncode == 0 and "records no durations" not in done.stderr, done.stderr
    recorded = json.loads(times.read_text())
    per_case: dict[str, float] = {}
    for r in results:
        per_case[r["case"]] = per_case.get(r["case"], 0.0) + r["seconds"]
    assert recorded == pytest.approx(per_case, abs=2e-3)
    ops = ("sin", "cos", "exp", "logaddexp")
    _, tasks = plan(SweepOptions(ops, ("float32", "float16"), transform_dtypes=()))
    dealt = deal(shards.units(tasks), 2, recorded)
    for k in (1, 2):
        listed = mgradcheck(
            "sweep", *chosen, "--shard", f"{k}/2", "--durations", str(times), "--list"
        )
        assert listed.returncode == 0, listed.stderr
        mine = {line.split()[1] for line in listed.stdout.splitlines()[:-1]}
        assert mine == {op for op, shard in dealt.items() if shard == k}
