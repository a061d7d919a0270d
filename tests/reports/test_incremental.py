"""Report files rewritten as entries finish: a killed run leaves valid files; all formats agree."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mgradcheck.errors import WriteError
from mgradcheck.outcomes import Verdict
from mgradcheck.reports import badge as badges
from mgradcheck.reports.incremental import SnapshotWriter
from mgradcheck.reports.outputs import Outputs, report_outputs
from mgradcheck.run import stages
from mgradcheck.run.results import Report
from mgradcheck.run.runner import RunOptions
from tests.builders import RecordingProgress, report, result
from tests.conftest import BEHAVIOURS, FIXTURES

VERDICTS = FIXTURES / "verdicts"
MGRADCHECK = [sys.executable, "-m", "mgradcheck.cli"]


def test_execute_hands_over_a_snapshot_at_start_and_after_every_entry() -> None:
    written: list[Report] = []
    progress = RecordingProgress()
    entries = stages.select(stages.load_corpus([BEHAVIOURS]), ["passes", "fails-check"])
    command, env = stages.prepare(sys.executable)
    stages.execute(entries, command, env, RunOptions(), progress, snapshots=written.append)
    assert progress.calls[0] == "start 2" and progress.calls[-1] == "stop"
    assert sorted(progress.calls[1:-1]) == ["fails-check", "passes"]
    assert [len(w.results) for w in written] == [0, 1, 2]
    assert written[1].results[0].id == progress.calls[1]
    assert all(w.interrupted for w in written)
    assert written[-1].meta["partial"] == {"finished": 2, "planned": 2}


def test_a_failed_write_warns_once_and_the_run_goes_on(tmp_path: Path) -> None:
    warnings: list[str] = []
    attempts: list[Report] = []

    def full_disk(rep: Report, outputs: Outputs) -> None:
        attempts.append(rep)
        raise WriteError("cannot write r.json: No space left on device")

    writer = SnapshotWriter(report_outputs(json=tmp_path / "r.json"), warnings.append, full_disk)
    for done in ((), (result("a"),), (result("a"), result("b"))):
        writer(report(*done, interrupted=True))
    assert len(attempts) == 1 and len(warnings) == 1
    assert "No space left on device" in warnings[0]


def test_execute_rewrites_the_files_while_it_runs(tmp_path: Path) -> None:
    outputs = report_outputs(json=tmp_path / "r.json", junit=tmp_path / "r.xml")
    seen_on_disk: list[list[str]] = []

    class Peek(RecordingProgress):
        def line(self, text: str, style: str = "") -> None:
            # Called before the writer rewrites the files: they hold the entries before this one.
            root = ET.parse(tmp_path / "r.xml").getroot()
            seen_on_disk.append([c.get("name", "") for c in root.iter("testcase")])

    entries = stages.select(stages.load_corpus([BEHAVIOURS]), ["passes", "fails-check"])
    command, env = stages.prepare(sys.executable)
    writer = SnapshotWriter(outputs, pytest.fail, interval=0)  # every snapshot, as it comes
    rep, interrupted = stages.execute(entries, command, env, RunOptions(), Peek(), snapshots=writer)
    assert interrupted is None
    assert sorted(map(len, seen_on_disk)) == [0, 1]
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["interrupted"] is True and data["meta"]["partial"] == {"finished": 2, "planned": 2}
    assert (
        not rep.interrupted and "partial" not in rep.meta
    )  # the caller's final write replaces them


def _mgradcheck(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([*MGRADCHECK, *args], text=True, **kwargs)  # type: ignore[call-overload, no-any-return]


def _wait_for(condition: object, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def _testcases(path: Path) -> list[str]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    return [c.get("name", "") for c in root.iter("testcase")]


def _endpoint(path: Path) -> str:
    try:
        return str(json.loads(path.read_text())["message"])
    except (OSError, ValueError, KeyError):
        return ""


def test_sigkill_mid_run_leaves_valid_reports_of_what_finished(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a-passes.yaml").write_text((BEHAVIOURS / "passes.yaml").read_text())
    pid_file = tmp_path / "sleeper.pid"
    (corpus / "b-sleeper.yaml").write_text(
        "id: sleeper\ntitle: Sleeps until killed\nsummary: s\n"
        'upstream: {report: "https://example.invalid/x"}\nbug: {outcome: fail, affects: []}\ntimeout: 300\n'
        f"code: |\n  import os, time\n  open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n  time.sleep(120)\n"
    )
    out = {name: tmp_path / name for name in ("r.json", "r.xml", "s.md", "b.svg", "b.shields.json")}
    parent = _mgradcheck(
        "run", "--corpus", str(corpus), "-q", "-j", "1",  # the sleeper starts once the first is written
        "--json", str(out["r.json"]), "--junit", str(out["r.xml"]),
        "--summary", str(out["s.md"]), "--badge", str(out["b.svg"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sleeper = 0
    try:
        _wait_for(lambda: pid_file.exists() and pid_file.read_text(), "the second entry to start")
        sleeper = int(pid_file.read_text())
        _wait_for(
            lambda: _endpoint(out["b.shields.json"]).startswith("1/1"), "the last file written"
        )
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if sleeper:  # the child has its own process group, which no one else will now kill
            with contextlib.suppress(ProcessLookupError):
                os.killpg(sleeper, signal.SIGKILL)
    assert parent.returncode == -signal.SIGKILL
    assert _testcases(out["r.xml"]) == ["passes"]
    data = json.loads(out["r.json"].read_text())
    assert [r["id"] for r in data["results"]] == ["passes"]
    assert data["interrupted"] is True and data["meta"]["partial"] == {"finished": 1, "planned": 2}
    assert "**Partial:** 1 of 2 entries" in out["s.md"].read_text()
    assert (
        ET.parse(out["b.svg"]).getroot().get("aria-label")
        == "mlx 0.32.4 (cpu): 1/1 as expected, incomplete"
    )
    assert json.loads(out["b.shields.json"].read_text())["message"] == "1/1 as expected, incomplete"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_json_junit_summary_badge_and_table_agree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [
            *MGRADCHECK, "run", "--corpus", str(BEHAVIOURS), "--corpus", str(VERDICTS),
            "passes", "fails-check", "known-crash", "fixed-upstream", "metal-only", "-j", "3", "-q",
            "--json", str(out / "r.json"), "--junit", str(out / "r.xml"),
            "--summary", str(out / "s.md"), "--badge", str(out / "badge"),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    rep = Report.from_json(json.loads((out / "r.json").read_text()))
    verdicts = {r.id: r.verdict for r in rep.results}
    assert verdicts == {
        "passes": Verdict.AS_EXPECTED,
        "fails-check": Verdict.REGRESSED,
        "known-crash": Verdict.AS_EXPECTED,
        "fixed-upstream": Verdict.FIXED,
        "metal-only": Verdict.SKIPPED,
    }
    line = rep.summary_line()
    assert line == "5 entries: 1 REGRESSED, 1 FIXED, 2 as expected, 1 skipped"
    assert line in result.stdout  # the terminal table's summary
    assert (out / "s.md").read_text().startswith(f"## mgradcheck: {line}\n")

    root = ET.parse(out / "r.xml").getroot()
    failing = {
        c.get("name")
        for c in root.iter("testcase")
        if c.find("failure") is not None or c.find("error") is not None
    }
    skipped = {c.get("name") for c in root.iter("testcase") if c.find("skipped") is not None}
    assert (
        failing
        == {r.id for r in rep.results if r.verdict.is_failure}
        == {"fails-check", "fixed-upstream"}
    )
    assert skipped == {"metal-only"}
    assert root.get("tests") == "5"

    endpoint = json.loads((out / "badge.shields.json").read_text())
    assert endpoint["message"] == "2/4 as expected, 1 REGRESSED, 1 FIXED"
    assert endpoint["color"] == badges.TONES["red"]
    svg = ET.parse(out / "badge.svg").getroot()
    assert svg.get("aria-label") == f"mlx 0.32.4 (cpu): {endpoint['message']}"
    for verdict_label in ("REGRESSED", "FIXED"):
        assert re.search(rf"\| {verdict_label} \| 1 \|", (out / "s.md").read_text())


def test_rewrites_come_at_most_once_an_interval_and_the_last_is_never_lost(tmp_path: Path) -> None:
    written: list[int] = []
    writer = SnapshotWriter(
        report_outputs(json=tmp_path / "r.json"),
        pytest.fail,
        lambda r, o: written.append(len(r.results)),
        0.3,
    )
    done: list[object] = []
    for i in range(50):  # 50 entries finishing within a few milliseconds
        done.append(result(f"e{i}"))
        writer(report(*done, interrupted=True))  # type: ignore[arg-type]
    assert written == [1]  # the first at once; the rest wait for the interval
    _wait_for(lambda: written[-1] == 50, "the timer's write of the latest snapshot", limit=10)
    assert len(written) == 2
    writer(report(*done, result("last"), interrupted=True))  # type: ignore[arg-type]
    writer.close()  # on the way out: what is pending is written now, nothing after
    assert written[-1] == 51
    writer(report(interrupted=True))
    assert written[-1] == 51
