"""The table printed after a run: one line per entry, within the width it is given (see
:func:`~mgradcheck.run.display.output_width`: ``$COLUMNS``, the terminal's, else 100).

Id, outcome, verdict, time and the start of the reason; an id is never broken
(it is what people copy into ``mgradcheck show``, which has the title and the
whole reason). The reason takes what width is left and ends in an ellipsis.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.display import (
    cut,
    markup_safe,
    output_width,
    plain_stream,
    printable,
    report_console,
)
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.wording import count

# Rich is imported where it draws: a run whose output is piped prints the plain table and
# never loads it (tests/cli/test_startup.py).
if TYPE_CHECKING:
    from rich.console import Console


OUTCOME_MAX = 14  # longer outcomes ("crash 3/10, pass 7/10") wrap within their column
# What Rich would not print as it stands: a character outside printable ASCII but the
# ellipsis of a cut reason (\u2026: a \N{...} name would load unicodedata), markup ('[', and
# the backslash that escapes it); and what Rich reads as an emoji code (a name between colons,
# found as Rich finds them: '::' names none).
_UNLIKE_PLAIN = re.compile(r"[^\x20-\x5a\x5d-\x7e\u2026]")
_EMOJI = re.compile(r":(\S*?)(?:-(?:emoji|text))?:")


def _rich_only(text: str) -> bool:
    """Whether Rich would show ``text`` otherwise than as it stands (or lay it out otherwise)."""
    if _UNLIKE_PLAIN.search(text) or text != text.strip():
        return True
    return any(match.group(1) for match in _EMOJI.finditer(text))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


Row = tuple[str, ...]


def ran(report: Report) -> list[EntryResult]:
    """The results with a row: those an interrupt kept from running are one line instead."""
    return [r for r in report.results if r.standing not in (Verdict.NOT_RUN, Outcome.NOT_RUN)]


def not_run_line(report: Report) -> str | None:
    """``92 entries did not run: the run was interrupted``, or None when every one ran."""
    missing = len(report.results) - len(ran(report))
    if not missing:
        return None
    why = "the run was interrupted" if report.interrupted else "the run stopped before them"
    return f"{count(missing, report.noun)} did not run: {why}"


def summary(report: Report) -> list[str]:
    """The lines under the table: how many did not run, and the summary line."""
    text = f"{report.summary_line()}  ({printable(_environments(report))})"
    return [line for line in (not_run_line(report), text) if line]


def _columns(report: Report) -> tuple[Row, list[Row], list[int]]:
    """The header and cells but the reason's, and their columns' widths (the outcome's capped)."""
    judged = report.judged
    header = ("id", "outcome", "verdict", "time") if judged else ("id", "outcome", "time")
    cells = [
        (printable(r.id), r.outcome_text + (" (flaky)" if r.flaky else ""))
        + ((r.standing.label,) if judged else ())
        + (f"{r.duration:.1f}s",)
        for r in ran(report)
    ]
    widths = [max(len(text) for text in column) for column in zip(header, *cells, strict=False)]
    widths[1] = min(widths[1], OUTCOME_MAX)
    return header, cells, widths


def _reason_width(widths: list[int], width: int) -> int:
    # Between two columns: a space of padding and a blank rule. The reason gets what is left,
    # however little: a line that passed the width would make Rich cut or fold the ids.
    return max(width - sum(widths) - 2 * len(widths), 1)


def _environments(report: Report) -> str:
    return ", ".join(
        e.label + (f" on {e.hardware}" if e.hardware else "") for e in report.environments
    )


def show(report: Report, stderr: bool = False) -> None:
    """Print the table on standard output (``stderr``: on standard error).

    In a pipe or a file Rich draws it without colour, as :func:`plain` writes it: then Rich
    is not imported (bench/README.md, "Start-up"); on a terminal, or when the table holds
    what only Rich lays out right (wide characters, markup, a cell to fold), Rich draws it.
    """
    stream = sys.stderr if stderr else sys.stdout
    text = plain(report, output_width(stream)) if plain_stream(stream) else None
    if text is None:
        render(report, report_console(stderr=stderr))
        return
    stream.write(text)
    stream.flush()


def plain(report: Report, width: int) -> str | None:
    """The table as Rich draws it without colour at ``width`` columns, less the spaces that pad
    each row out to the table's width; or None when only Rich can say (a cell that would fold,
    wide or control characters, markup, too little width)."""
    header, cells, widths = _columns(report)
    reason_width = _reason_width(widths, width)
    reasons = [cut(_first_line(printable(r.reason)), reason_width) for r in ran(report)]
    rows = [(*header, "reason"), *((*r, reason) for r, reason in zip(cells, reasons, strict=True))]
    below = summary(report)
    texts = [*below, *(text for row in rows for text in row)]
    if any(map(_rich_only, texts)):
        return None
    widths = [*widths, max(len(row[-1]) for row in rows)]
    total = sum(widths) + 2 * (len(widths) - 1)
    too_wide = total > width or any(len(line) > width for line in below)
    if too_wide or any(len(row[1]) > widths[1] for row in rows):
        return None
    time = len(widths) - 2  # the one column set flush right
    lines = [
        "  ".join(
            text.rjust(w) if column == time else text.ljust(w)
            for column, (text, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    lines.insert(1, "\N{BOX DRAWINGS LIGHT HORIZONTAL}" * total)
    return "\n".join([*lines, *below, ""])


def render(report: Report, console: Console) -> None:
    """One row per result; a test's outcome, coloured, stands where an entry's verdict would."""
    from rich import box
    from rich.table import Table

    judged = report.judged
    _, cells, widths = _columns(report)
    reason_width = _reason_width(widths, console.width)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False)
    table.add_column("id", style="bold", no_wrap=True, min_width=widths[0])
    table.add_column("outcome", width=widths[1])
    if judged:
        table.add_column("verdict", no_wrap=True, min_width=widths[2])
    table.add_column("time", justify="right", no_wrap=True, min_width=widths[-1])
    table.add_column("reason", no_wrap=True)
    for r, row in zip(ran(report), cells, strict=True):
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
    missing = not_run_line(report)
    if missing:
        console.print(missing, highlight=False)
    envs = markup_safe(_environments(report))
    console.print(f"{report.summary_line()}  [dim]({envs})[/]", highlight=False)
