"""``mgradcheck tests`` as a user runs it: a real subprocess, its reports and its exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.builders import mgradcheck
from tests.conftest import SUITES

BEHAVIOURS = str(SUITES / "basic" / "test_behaviours.py")


def test_help_pins_the_options_and_says_how_outcomes_map() -> None:
    result = CliRunner().invoke(cli, ["tests", "--help"])
    assert result.exit_code == 0
    for option in ("-k", "--mlx-tests", "--mlx-repo", "--python", "--mlx", "--jobs",
                   "--per-child", "--timeout", "--json", "--junit", "--summary", "--badge",
                   "--matrix", "--versions", "--markdown", "--emit", "--collect-only"):  # fmt: skip
        assert option in result.output
    assert "JUnit <error>" in result.output and "Exit status: 0 every test passed" in result.output
    assert "  tests " in CliRunner().invoke(cli, ["--help"]).output


def test_a_run_reports_each_test_and_exits_1_when_one_does_not_pass(tmp_path: Path) -> None:
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    result = mgradcheck(
        "tests", BEHAVIOURS, "-k", "passes or fails or segfaults or test_skipped",
        "-j", "2", "--json", str(report), "--junit", str(junit), "-q",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "4 tests: 1 pass, 1 fail, 1 crash, 1 skip" in result.stdout
    data = json.loads(report.read_text())
    assert data["meta"]["kind"] == "tests"
    assert {k: v for k, v in data["counts"].items() if v} == {
        "pass": 1, "fail": 1, "crash": 1, "skip": 1,
    }  # fmt: skip
    assert all(r["verdict"] is None for r in data["results"])
    crash = next(r for r in data["results"] if r["outcome"] == "crash")
    assert crash["reason"] == "SIGSEGV" and crash["id"].endswith("test_segfaults")
    cases = {c.get("name", ""): c for c in ET.parse(junit).getroot().iter("testcase")}
    kinds = {name.rsplit("::", 1)[1]: [e.tag for e in case if e.tag != "properties"]
             for name, case in cases.items()}  # fmt: skip
    assert kinds == {
        "test_passes": [],
        "test_fails": ["failure"],
        "test_segfaults": ["error", "system-err"],
        "test_skipped": ["skipped"],
    }
    assert "Traceback" not in result.stderr


def test_every_test_passing_exits_0_and_collect_only_runs_nothing() -> None:
    result = mgradcheck("tests", BEHAVIOURS, "-k", "test_passes or helper_module", "-q")
    assert result.returncode == 0, result.stderr
    listed = mgradcheck("tests", str(SUITES / "basic"), "--collect-only")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[0] == "test_behaviours.py::TestBehaviours::test_passes"
    assert "24 tests collected" in listed.stderr  # test_parametrized: one per parameter


def test_a_report_on_standard_output_sends_the_table_to_stderr() -> None:
    result = mgradcheck("tests", BEHAVIOURS, "-k", "test_passes", "-q", "--json", "-")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [r["outcome"] for r in data["results"]] == ["pass"]
    assert "1 test: 1 pass" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give the tests: files or directories, or --mlx-tests TAG"),
        ([BEHAVIOURS, "-k", "passes and"], "the expression ends too soon"),
        ([BEHAVIOURS, "--emit", "out"], "--emit is used with --matrix only"),
        ([BEHAVIOURS, "--versions", ">=1"], "--versions is used with --matrix only"),
        ([BEHAVIOURS, "--matrix", "--junit", "x.xml"], "--junit is used without --matrix only"),
        ([BEHAVIOURS, "--matrix", "--versions", "1.0"], "is not a version range"),
        ([BEHAVIOURS, "--mlx-repo", "."], "--mlx-repo goes with --mlx-tests TAG"),
        ([BEHAVIOURS, "--pre"], "--pre applies only with --mlx VERSION or --matrix"),
        ([BEHAVIOURS, "--matrix", "--pre", "--versions", "1.0"], "is not a version range"),
        (["no/such/dir"], "no/such/dir: no such file or directory"),
        ([BEHAVIOURS + "::TestBehaviours::test_nothing"], "no such test"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["tests", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_stops_the_children_and_keeps_what_finished(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    out = tmp_path / "report.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "mgradcheck", "tests", BEHAVIOURS, "-k", "test_passes or hangs",
         "--timeout", "300", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert process.stderr is not None
    process.stderr.readline()  # the title; then a mark per finished test, as pytest's dots
    mark = process.stderr.read(1)  # the quick test finished; the hanging one is running
    assert mark == ".", mark or "mgradcheck exited early"
    time.sleep(0.5)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == status, stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    outcomes = {r["id"].rsplit("::", 1)[1]: r["outcome"] for r in data["results"]}
    assert outcomes == {"test_passes": "pass", "test_hangs": "not run"}
    assert "interrupted by" in stderr and "Traceback" not in stderr
    runs = Path(os.environ["MGRADCHECK_CACHE"]) / "runs"
    leftover = subprocess.run(["pgrep", "-f", str(runs)], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # no child of the run is left behind
