"""Prose wrapped by the program between words; paths and commands whole, on lines of their own."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.sweep.findings import group
from mgradcheck.sweep.pipeline import FindingReport, SweepReport, name_causes
from mgradcheck.sweep.render import render
from mgradcheck.sweep.shrink import Shrunk
from tests.conftest import environment
from tests.releases.test_entry_from_script import RAISES, script
from tests.sweep.test_known import crash, wrong


def broken_words(lines: list[str], width: int) -> list[str]:
    """Lines past the width that hold more than one word: a terminal would break them anywhere."""
    return [line for line in lines if len(line) > width and len(line.split()) > 1]


def sweep_report() -> SweepReport:
    results = [crash("sum-axis"), crash("mean-axis"), wrong("cumsum", "jvp")]
    report = SweepReport(environment(), 3, results)
    report.findings = [FindingReport(g, Shrunk(g.representative())) for g in group(results)]
    name_causes(report)
    return report


def test_the_sweep_s_lines_wrap_between_words_at_the_width() -> None:
    report = sweep_report()
    whole = render(report).splitlines()
    assert any(len(line) > 50 for line in whole)  # long enough to need wrapping at 50
    wrapped = render(report, 50).splitlines()
    assert broken_words(wrapped, 50) == []
    assert " ".join(" ".join(wrapped).split()) == " ".join(" ".join(whole).split())  # no word lost
    summary = report.summary_line()
    assert whole[0] == summary and wrapped[0] != summary  # no width: the line is kept whole


def test_an_emitted_entry_s_path_stands_on_its_own_line() -> None:
    report = sweep_report()
    report.findings[0].path = Path("corpus/a-very-long-emitted-entry-name-for-the-sum-crash.yaml")
    lines = render(report, 40).splitlines()
    assert f"      -> {report.findings[0].path}" in lines


def test_new_s_list_of_what_to_write_wraps_and_its_commands_stay_whole(
    fake_wheels: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q"]
    args = ["new", str(script(tmp_path, "vmap.py", RAISES)), "--versions", "<1.5"]
    done = CliRunner().invoke(cli, [*args, "--corpus", str(corpus), *source], env={"COLUMNS": "44"})
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    todo = lines[lines.index("Still to write by hand:") + 1 : lines.index("Then:")]
    assert todo and all(line.startswith(("  - ", "    ")) for line in todo)
    assert broken_words(todo, 44) == []
    command = lines[lines.index("Then:") + 1]
    assert command.startswith("  mgradcheck validate ") and " && mgradcheck run vmap" in command
