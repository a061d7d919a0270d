"""Report paths: an earlier report of ours is rewritten; a file that is not one never is.

The commands' refusals (inputs, files of the user's) are tests/test_isolation.py's; here,
that every writer's own file reads as a report, whatever it holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.errors import UsageError
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import Judged, State
from mgradcheck.reports import badge, json_report, junit, markdown
from mgradcheck.reports.outputs import refuse_foreign, report_outputs
from mgradcheck.run.observation import Observation
from mgradcheck.sweep import upstream_issue as upstream
from tests import builders, fake_mlx
from tests.conftest import environment
from tests.sweep.test_upstream_issue import entry


def _issue() -> str:
    run = Observation(Outcome.FAIL, 0.1, stdout="observed [1]\n", message="wrong")
    cells = (Judged(Version("0.32.4"), State.BAD, "fail", "r"),)
    return upstream.render(upstream.Issue(entry(), "print(1)\n", run, environment(), cells))


def test_every_writers_own_file_may_be_rewritten(tmp_path: Path) -> None:
    report, tests = builders.every_verdict(), builders.every_outcome()
    shown = badge.summarise(report)
    files = {
        "report.json": json_report.render(report),
        "tests.json": json_report.render(tests),
        "junit.xml": junit.render(tests),
        "summary.md": markdown.render(report),
        "badge.svg": badge.render_svg(shown),
        "badge.shields.json": json_report.dumps(badge.endpoint(shown)),
        "issue.md": _issue(),
        "empty.json": "",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        refuse_foreign(tmp_path / name)  # no error


def test_a_matrix_rewrites_its_own_json_and_markdown(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    json_report.write(builders.report(builders.result("fixed-in-1-3")), path)
    args = ["matrix", "fixed-in-1-3", "--corpus", str(fake_mlx.FIXTURES), f"--from-report={path}"]
    args += ["--json", str(tmp_path / "m.json"), "--markdown", str(tmp_path / "m.md")]
    for _ in range(2):
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    "text",
    [
        "import os\n",
        "id: spoof\n",
        "# Notes\n\n## mgradcheck: not at the start\n",
        '{"name": "package", "schema": "mgradcheck-report"}\n',
        '<?xml version="1.0"?>\n<project/>\n',
        '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path/></svg>\n',
    ],
)
def test_a_file_that_is_not_a_report_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "out.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match="is not an mgradcheck report"):
        refuse_foreign(path)


def test_githubs_step_summary_is_appended_to_whatever_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# An earlier step's own Markdown\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report_outputs().check()  # no error: GitHub's file, appended to
