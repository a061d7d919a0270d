"""``--shard K/N --durations FILE`` on every heavy command, and ``report durations``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.builders import mgradcheck
from tests.conftest import BEHAVIOURS, SUITES

HEAVY = {  # each heavy command, with a selection that needs neither MLX nor a package index
    "run": ["run", "--corpus", str(BEHAVIOURS), "passes"],
    "tests": ["tests", str(SUITES / "basic" / "test_behaviours.py"), "-k", "test_passes"],
    "sweep": ["sweep", "--ops", "sin"],
    "matrix": [
        "matrix",
        "passes",
        "--corpus",
        str(BEHAVIOURS),
        "--index-url",
        "http://127.0.0.1:9/",
    ],
}


@pytest.mark.parametrize("command", sorted(HEAVY))
def test_every_heavy_command_takes_shard_and_durations(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "--shard K/N" in result.output and "--durations FILE" in result.output


@pytest.mark.parametrize("command", sorted(HEAVY))
@pytest.mark.parametrize(
    ("text", "problem"),
    [("{oops", "not valid JSON"), ('{"passes": "slow"}', "'passes' -> 'slow' is not a number")],
)
def test_a_bad_durations_file_is_one_line_naming_it_before_anything_runs(
    tmp_path: Path, command: str, text: str, problem: str
) -> None:
    durations = tmp_path / "durations.json"
    durations.write_text(text)
    result = mgradcheck(*HEAVY[command], "--shard", "1/2", "--durations", str(durations), "-q")
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"mgradcheck: error: {durations}: not a durations file")
    assert problem in line


def test_durations_go_with_a_shard_and_a_sweeps_coverage_without() -> None:
    result = CliRunner().invoke(cli, [*HEAVY["run"], "--durations", "d.json"])
    assert result.exit_code == 2 and "--durations goes with --shard" in result.output
    result = CliRunner().invoke(cli, [*HEAVY["sweep"], "--shard", "1/2", "--coverage"])
    assert result.exit_code == 2 and "--coverage covers the whole catalogue" in result.output


def test_run_deals_its_shards_by_the_recorded_durations(tmp_path: Path) -> None:
    chosen = ["passes", "fails-check", "raises"]
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"raises": 5.0, "passes": 1.0, "fails-check": 1.0}))
    seen = {}
    for timed in (False, True):
        out = tmp_path / f"shard-{timed}.json"
        extra = ["--durations", str(durations)] if timed else []
        result = mgradcheck(
            "run", "--corpus", str(BEHAVIOURS), *chosen, "-q", "--shard", "1/2",
            "--json", str(out), *extra,
        )  # fmt: skip
        assert result.returncode in (0, 1), result.stderr
        seen[timed] = [r["id"] for r in json.loads(out.read_text())["results"]]
    assert seen == {False: ["fails-check", "raises"], True: ["raises"]}  # the slowest alone


def test_report_durations_writes_each_ids_seconds(tmp_path: Path) -> None:
    report, durations = tmp_path / "r.json", tmp_path / "durations.json"
    run = mgradcheck(
        "run", "--corpus", str(BEHAVIOURS), "passes", "raises", "-q", "--json", str(report)
    )
    assert run.returncode == 1, run.stderr
    matrix = tmp_path / "matrix.json"
    matrix.write_text(json.dumps(_matrix({"1.0.0": 0.5, "1.1.0": 0.25, "1.2.0": None})))
    made = mgradcheck("report", "durations", str(report), str(matrix), "-o", str(durations))
    assert made.returncode == 0, made.stderr
    assert "3 durations from 2 reports written to" in made.stderr
    found = json.loads(durations.read_text())
    recorded = {r["id"]: r["duration"] for r in json.loads(report.read_text())["results"]}
    assert found == {
        "passes": pytest.approx(recorded["passes"], abs=1e-3),
        "raises": pytest.approx(recorded["raises"], abs=1e-3),
        "fixed-in-1-3": 0.75,  # a matrix: the entry's runs on every release
    }
    again = mgradcheck("report", "durations", str(report), "-o", str(durations))
    assert again.returncode == 0, again.stderr  # an earlier durations file is replaced
    assert set(json.loads(durations.read_text())) == {"passes", "raises"}
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": "not seconds"}')
    refused = mgradcheck("report", "durations", str(report), "-o", str(notes))
    assert refused.returncode == 2 and "not a durations file" in refused.stderr
    assert notes.read_text() == '{"mine": "not seconds"}'


def _matrix(cells: dict[str, float | None]) -> dict[str, object]:
    return {
        "schema": "mgradcheck-matrix",
        "schema_version": 1,
        "target": "cpu on linux-x86_64",
        "backend": "cpu",
        "regress_on": "signature",
        "interrupted": False,
        "releases": list(cells),
        "entries": [
            {
                "id": "fixed-in-1-3",
                "title": "t",
                "content_hash": "h",
                "cells": {
                    v: {
                        "state": "bad",
                        "outcome": "fail",
                        "reason": "r",
                        "cached": False,
                        "seconds": s,
                    }
                    for v, s in cells.items()
                },
                "flips": [],
            }
        ],
    }
