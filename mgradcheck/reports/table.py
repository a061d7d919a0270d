"""The terminal table printed after a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mgradcheck.run.display import markup_safe
from mgradcheck.run.results import Report

if TYPE_CHECKING:
    from rich.console import Console


def _short(text: str, width: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def render(report: Report, console: Console) -> None:
    from rich.table import Table

    table = Table(title=None, show_lines=False, expand=False)
    for name, style in (
        ("id", "bold"),
        ("title", ""),
        ("outcome", ""),
        ("verdict", ""),
        ("time", ""),
        ("reason", ""),
    ):
        table.add_column(
            name, style=style, overflow="fold", justify="right" if name == "time" else "left"
        )
    for r in report.results:
        colour = r.verdict.colour
        flaky = " (flaky)" if r.judgement.flaky else ""
        table.add_row(
            markup_safe(r.id),
            markup_safe(_short(r.title, 50)),
            r.outcome_text + flaky,
            f"[{colour}]{r.verdict.label}[/]",
            f"{r.duration:.1f}s",
            markup_safe(_short(r.judgement.reason)),
        )
    console.print(table)
    envs = markup_safe(
        ", ".join(
            e.label + (f" on {e.hardware}" if e.hardware else "") for e in report.environments
        )
    )
    console.print(f"{report.summary_line()}  [dim]({envs})[/]", highlight=False)
