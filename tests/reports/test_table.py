"""The run table at 80 columns: one line per entry, ids whole, the reason cut to fit, no title."""

from __future__ import annotations

import pytest
from rich.console import Console

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import table
from mgradcheck.run import stages
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
    assert len(rows) == len(ids)
    table_lines = lines[: lines.index(next(line for line in lines if " entries: " in line))]
    assert all(len(line) <= width for line in table_lines), max(map(len, table_lines))
    for row in rows:
        assert "second line" not in row and row.rstrip().endswith(("\N{HORIZONTAL ELLIPSIS}", ")"))


def test_the_columns_are_id_outcome_verdict_time_reason() -> None:
    header = rendered(80)[0].split()
    assert header == ["id", "outcome", "verdict", "time", "reason"]
    assert not any("Entry " in line for line in rendered(80))  # titles belong to 'show'
