"""The run-and-report stage ``run`` and ``tests`` share, driven without Click or a child."""

from __future__ import annotations

import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from mgradcheck.errors import Interrupted, UsageError
from mgradcheck.exitcodes import ExitCode
from mgradcheck.outcomes import Verdict
from mgradcheck.reports import json_report
from mgradcheck.reports.outputs import report_outputs
from mgradcheck.reports.stage import Produce, run_and_report
from mgradcheck.run import stages
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report
from tests.builders import result
from tests.conftest import environment


def target() -> AbstractContextManager[tuple[ChildCommand, Environment]]:
    return nullcontext((ChildCommand(sys.executable), environment()))


def producing(
    results: Sequence[EntryResult],
    interrupted: Interrupted | None = None,
    then: BaseException | None = None,
) -> Produce:
    """Hands over ``results`` one by one as a runner does, then stops: returning
    ``interrupted``, or raising ``then`` (an error out of the run)."""

    def produce(
        command: ChildCommand, env: Environment, snapshots: stages.Snapshots | None
    ) -> tuple[Report, Interrupted | None]:
        def run(
            on_result: Callable[[EntryResult], None],
        ) -> tuple[Sequence[EntryResult], Interrupted | None]:
            for r in results:
                on_result(r)
            if then is not None:
                raise then
            return results, interrupted

        return stages.reported(len(results), env, run, snapshots=snapshots)

    return produce


class Recorder:
    """What the stage told the user, kept and drew, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.said: list[str] = []

    def say(self, line: str) -> None:
        self.said.append(line)

    def keep(self, report: Report) -> None:
        self.events.append(f"keep {len(report.results)}")

    def show(self, report: Report, stderr: bool) -> None:
        self.events.append(f"show {len(report.results)} stderr={stderr}")


def test_a_finished_run_writes_every_output_and_exits_by_its_verdicts(tmp_path: Path) -> None:
    outputs = report_outputs(json=tmp_path / "r.json", junit=tmp_path / "r.xml")
    seen = Recorder()
    results = [result("a"), result("b", Verdict.REGRESSED)]
    code = run_and_report(outputs, [], target, producing(results), seen.say, seen.keep, seen.show)
    assert code == ExitCode.UNEXPECTED
    assert seen.events == ["keep 2", "show 2 stderr=False"]
    assert seen.said == []
    written = json_report.read(tmp_path / "r.json")
    assert [r.id for r in written.results] == ["a", "b"]
    assert not written.interrupted and "partial" not in written.meta
    cases = ET.parse(tmp_path / "r.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == ["a", "b"]


def test_an_interrupted_run_reports_what_finished_and_exits_by_the_signal(
    tmp_path: Path,
) -> None:
    outputs = report_outputs(json=tmp_path / "r.json")
    seen = Recorder()
    results = [result("a"), result("b", Verdict.NOT_RUN)]
    stopped = Interrupted(signal.SIGINT)
    code = run_and_report(
        outputs, [], target, producing(results, stopped), seen.say, seen.keep, seen.show
    )
    assert code == ExitCode.INTERRUPTED
    assert seen.said == ["interrupted by SIGINT; the report holds what finished"]
    written = json_report.read(tmp_path / "r.json")
    assert written.interrupted and [r.id for r in written.results] == ["a", "b"]


def test_an_error_mid_run_leaves_the_snapshot_of_what_finished(tmp_path: Path) -> None:
    outputs = report_outputs(json=tmp_path / "r.json")
    seen = Recorder()
    produce = producing([result("a")], then=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_and_report(outputs, [], target, produce, seen.say, seen.keep, seen.show)
    assert seen.events == []  # nothing kept or drawn: the command's error path takes over
    written = json_report.read(tmp_path / "r.json")
    assert written.interrupted and [r.id for r in written.results] == ["a"]
    assert written.meta["partial"] == {"finished": 1, "planned": 1}


def test_a_report_on_standard_output_is_written_once_and_the_table_goes_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen = Recorder()
    given: list[stages.Snapshots | None] = []
    produce = producing([result("a")])

    def recorded(
        command: ChildCommand, env: Environment, snapshots: stages.Snapshots | None
    ) -> tuple[Report, Interrupted | None]:
        given.append(snapshots)
        return produce(command, env, snapshots)

    code = run_and_report(
        report_outputs(json=Path("-")), [], target, recorded, seen.say, seen.keep, seen.show
    )
    assert code == ExitCode.OK
    assert given == [None]
    assert seen.events == ["keep 1", "show 1 stderr=True"]
    assert '"id": "a"' in capsys.readouterr().out


def test_the_outputs_are_checked_before_the_target_is_opened(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text("[]\n", encoding="utf-8")
    opened: list[bool] = []

    def opening() -> AbstractContextManager[tuple[ChildCommand, Environment]]:
        opened.append(True)
        return target()

    seen = Recorder()
    with pytest.raises(UsageError):
        run_and_report(
            report_outputs(json=corpus), [corpus], opening, producing([]), seen.say, seen.keep
        )
    assert opened == [] and seen.events == []
