"""The run table at 80 columns: one line per entry, ids whole, the reason cut to fit, no title."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from rich.console import Console

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import table
from mgradcheck.run import stages
from mgradcheck.run.display import plain_stream
from mgradcheck.run.observation import Observation
from mgradcheck.run.results import Report
from tests import builders

LONG = "the bug is back: tangent: observed [1., 2.], expected [1., 3.] (1/2 differ, first at (1,))"


def rendered(width: int) -> list[str]:
    ids = [e.id for e in stages.load_corpus([])]  # the bundled corpus's ids, the longest included
    verdicts = list(Verdict)
    results = [
        builders.result(i, verdicts[n % len(verdicts)], reason=f"{LONG}\nsecond line")
        for n, i in enumerate(ids)
    ]
    results.append(builders.result("repeated", Verdict.UNEXPECTED, Outcome.CRASH, flaky=True))
    console = Console(width=width, record=True, color_system=None)
    table.render(builders.report(*results), console)
    return console.export_text().splitlines()


@pytest.mark.parametrize("width", [80, 100])
def test_every_line_fits_and_every_id_is_whole(width: int) -> None:
    lines = rendered(width)
    ids = {e.id for e in stages.load_corpus([])}
    rows = [line for line in lines if line.split() and line.split()[0] in ids]
    verdicts = list(Verdict)  # as rendered() deals them
    not_run = sum(verdicts[n % len(verdicts)] is Verdict.NOT_RUN for n in range(len(ids)))
    assert len(rows) == len(ids) - not_run  # what did not run is one line, not a row each
    assert f"{not_run} entries did not run: the run stopped before them" in lines
    table_lines = lines[: lines.index(next(line for line in lines if " entries: " in line))]
    assert all(len(line) <= width for line in table_lines), max(map(len, table_lines))
    for row in rows:
        assert "second line" not in row and row.rstrip().endswith(("\N{HORIZONTAL ELLIPSIS}", ")"))


def test_the_columns_are_id_outcome_verdict_time_reason() -> None:
    header = rendered(80)[0].split()
    assert header == ["id", "outcome", "verdict", "time", "reason"]
    assert not any("Entry " in line for line in rendered(80))  # titles belong to 'show'


# --- in a pipe: the same text, without Rich ------------------------------------------------

REASONS = ["", "bug absent", "ends in a space ", "x" * 300, LONG, "a \x1b[31m colour",
           "an :emoji: code", "wide \u4e2d\u6587", "markup [bold]x[/]"]  # fmt: skip


def reports() -> dict[str, Report]:
    """Tables Rich draws as they stand, and tables only Rich can draw right."""
    ids = [e.id for e in stages.load_corpus([])]
    verdicts = list(Verdict)
    cases = {"verdicts": builders.every_verdict(), "outcomes": builders.every_outcome()}
    for n, reason in enumerate(REASONS):
        results = [
            builders.result(i, verdicts[(n + k) % len(verdicts)], reason=reason,
                            duration=[0.04, 3.2, 12.5, 1234.5][k % 4])
            for k, i in enumerate(ids[: 3 + n])
        ]  # fmt: skip
        cases[reason] = builders.report(*results)
    runs = (Observation(Outcome.CRASH, 1.0),) * 3 + (Observation(Outcome.PASS, 1.0),) * 7
    cases["folded"] = builders.report(  # an outcome wider than its column folds there
        replace(builders.result("folded", Verdict.UNEXPECTED), runs=runs)
    )
    cases["flaky"] = builders.report(builders.result("f", Verdict.UNEXPECTED, flaky=True))
    return cases


def drawn_by_rich(report: Report, width: int) -> str:
    """What Rich prints, less the spaces that pad each row out to the table's width."""
    out = io.StringIO()
    table.render(report, Console(file=out, width=width, highlight=False))
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


@pytest.mark.parametrize("width", [40, 80, 160])
def test_the_plain_table_is_what_rich_prints_in_a_pipe(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "NO_COLOR"):
        monkeypatch.delenv(variable, raising=False)
    drawn = set()
    for name, report in reports().items():
        text = table.plain(report, width)
        if text is not None:
            assert text == drawn_by_rich(report, width), name
            drawn.add(name)
    plain = {"verdicts", "outcomes", "", "bug absent", "ends in a space ", "x" * 300}
    assert drawn == plain if width == 160 else drawn < plain  # narrower: summaries fold


def test_rich_draws_on_a_terminal_or_when_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert plain_stream(io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not plain_stream(io.StringIO())
