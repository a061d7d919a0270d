"""The terminal table printed after a run: one line per entry, readable at 80 columns.

Id, outcome, verdict, time and the start of the reason; an id is never broken
(it is what people copy into ``mgradcheck show``, which has the title and the
whole reason). The reason takes what width is left and ends in an ellipsis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mgradcheck.run.display import cut, markup_safe, printable
from mgradcheck.run.results import Report

if TYPE_CHECKING:
    from rich.console import Console


OUTCOME_MAX = 14  # longer outcomes ("crash 3/10, pass 7/10") wrap within their column


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def render(report: Report, console: Console) -> None:
    """One row per result; a test's outcome, coloured, stands where an entry's verdict would."""
    from rich import box
    from rich.table import Table

    judged = report.judged
    header = ("id", "outcome", "verdict", "time") if judged else ("id", "outcome", "time")
    cells = [
        (printable(r.id), r.outcome_text + (" (flaky)" if r.flaky else ""))
        + ((r.standing.label,) if judged else ())
        + (f"{r.duration:.1f}s",)
        for r in report.results
    ]
    widths = [max(len(text) for text in column) for column in zip(header, *cells, strict=False)]
    widths[1] = min(widths[1], OUTCOME_MAX)
    # Between two columns: a space of padding and a blank rule. The reason gets what is left,
    # however little: a line that passed the width would make Rich cut or fold the ids.
    reason_width = max(console.width - sum(widths) - 2 * len(widths), 1)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False)
    table.add_column("id", style="bold", no_wrap=True, min_width=widths[0])
    table.add_column("outcome", width=widths[1])
    if judged:
        table.add_column("verdict", no_wrap=True, min_width=widths[2])
    table.add_column("time", justify="right", no_wrap=True, min_width=widths[-1])
    table.add_column("reason", no_wrap=True)
    for r, row in zip(report.results, cells, strict=True):
        colour = r.standing.colour
        entry_id, outcome, *standing, seconds = row
        coloured = [f"[{colour}]{text}[/]" for text in standing]
        if not judged:
            outcome = f"[{colour}]{outcome}[/]"
        table.add_row(
            markup_safe(entry_id), outcome, *coloured, seconds,
            markup_safe(cut(_first_line(printable(r.reason)), reason_width)),
        )  # fmt: skip
    console.print(table)
    envs = markup_safe(
        ", ".join(
            e.label + (f" on {e.hardware}" if e.hardware else "") for e in report.environments
        )
    )
    console.print(f"{report.summary_line()}  [dim]({envs})[/]", highlight=False)
