"""``mgradcheck run``'s stages in their order, driven in this process with a stand-in target and
runner: what is checked before the target opens, what is kept, written and shown, and the exit."""

from __future__ import annotations

import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mgradcheck.cli import cli
from mgradcheck.errors import EnvironmentFailure, Interrupted
from mgradcheck.exitcodes import ExitCode
from mgradcheck.outcomes import Verdict
from mgradcheck.paths import last_report
from mgradcheck.reports import json_report
from mgradcheck.run import stages
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report
from tests.builders import result
from tests.conftest import BEHAVIOURS, environment


class StandIn:
    """The target and the runner of a run: the runner hands over ``results`` one by one as
    the real one does, then returns ``interrupted`` or raises ``then`` (an error mid-run)."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        results: Sequence[EntryResult],
        interrupted: Interrupted | None = None,
        then: BaseException | None = None,
        opening: BaseException | None = None,
    ) -> None:
        self.results, self.interrupted, self.then, self.opening = (
            results,
            interrupted,
            then,
            opening,
        )
        self.opened = 0
        self.snapshots: list[object] = []
        monkeypatch.setattr("mgradcheck.cli.run.open_target", self.open_target)
        monkeypatch.setattr(stages, "execute", self.execute)

    def open_target(
        self, *args: object
    ) -> AbstractContextManager[tuple[ChildCommand, Environment]]:
        self.opened += 1
        if self.opening is not None:
            raise self.opening
        return nullcontext((ChildCommand(sys.executable), environment()))

    def execute(
        self,
        entries: Sequence[object],
        command: ChildCommand,
        env: Environment,
        *args: Any,
    ) -> tuple[Report, Interrupted | None]:
        meta, snapshots = args[2], args[3]
        self.snapshots.append(snapshots)
        reporter = stages.Reporter(len(entries), env, meta, snapshots)
        for r in self.results:
            reporter.add(r)
        if self.then is not None:
            raise self.then
        return reporter.final(self.results, self.interrupted), self.interrupted


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["run", "--corpus", str(BEHAVIOURS), "passes", "raises", *args])


def test_a_finished_run_keeps_writes_and_shows_its_report_and_exits_by_its_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    StandIn(monkeypatch, [result("passes"), result("raises", Verdict.REGRESSED)])
    done = run("--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"))
    assert done.exit_code == ExitCode.UNEXPECTED, done.output
    for path in (tmp_path / "r.json", last_report()):
        written = json_report.read(path)
        assert [r.id for r in written.results] == ["passes", "raises"]
        assert not written.interrupted and "partial" not in written.meta
    cases = ET.parse(tmp_path / "r.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == ["passes", "raises"]
    assert "REGRESSED raises" in done.stdout and "interrupted" not in done.stderr


def test_an_interrupted_run_reports_what_finished_and_exits_by_the_signal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finished = [result("passes"), result("raises", Verdict.NOT_RUN)]
    StandIn(monkeypatch, finished, Interrupted(signal.SIGINT))
    done = run("--json", str(tmp_path / "r.json"))
    assert done.exit_code == ExitCode.INTERRUPTED
    assert "interrupted by SIGINT; the report holds what finished" in done.stderr
    written = json_report.read(tmp_path / "r.json")
    assert written.interrupted and [r.id for r in written.results] == ["passes", "raises"]


def test_an_error_mid_run_leaves_the_snapshot_of_what_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    StandIn(monkeypatch, [result("passes")], then=EnvironmentFailure("no space left on device"))
    done = run("--json", str(tmp_path / "r.json"))
    assert done.exit_code == ExitCode.ENVIRONMENT and "no space left" in done.stderr
    assert not last_report().exists()  # nothing kept: the command's error path took over
    written = json_report.read(tmp_path / "r.json")
    assert written.interrupted and [r.id for r in written.results] == ["passes"]
    assert written.meta["partial"] == {"finished": 1, "planned": 2}


def test_a_report_on_standard_output_is_written_once_and_the_table_goes_to_stderr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in = StandIn(monkeypatch, [result("passes"), result("raises")])
    done = run("--json", "-", "-v")
    assert done.exit_code == ExitCode.OK
    assert stand_in.snapshots == [None]  # no rewrites: a reader of a pipe would take each
    assert done.stdout.count('"id": "passes"') == 1 and "passes" in done.stderr


def test_the_outputs_are_checked_before_the_target_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "passes.yaml").write_text((BEHAVIOURS / "passes.yaml").read_text())
    stand_in = StandIn(monkeypatch, [])
    done = CliRunner().invoke(
        cli, ["run", "--corpus", str(corpus), "--json", str(corpus / "report.yaml")]
    )
    assert done.exit_code == ExitCode.USAGE and "which this command reads" in done.stderr
    assert stand_in.opened == 0 and not last_report().exists()


def test_an_interrupt_while_the_target_opens_writes_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    StandIn(monkeypatch, [], opening=KeyboardInterrupt())
    done = run("--json", str(tmp_path / "r.json"))
    assert done.exit_code == ExitCode.INTERRUPTED
    assert done.stderr.strip() == "mgradcheck: interrupted by SIGINT before any entry ran"
    assert not (tmp_path / "r.json").exists() and not last_report().exists()
