"""The report of a bisect, over releases or commits: its probes in order, the answer, the links.

It is given the values to show (:class:`BisectView`, which a bisect's result makes), so
that it needs nothing of the release machinery above it; it owns the layout: which
text is bold or dim, what is escaped, and what may wrap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mgradcheck.run.display import markup_safe

# Rich is imported where a table is drawn: the view alone (a --json bisect) never loads it.
if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True)
class Row:
    """One point of the search (a release, a commit) as the table shows it."""

    point: str  # the first column: "0.32.0", "6335c834c"
    number: int = 0  # when it was probed, 1 for the first; 0: never ("not needed")
    stored: bool = False  # its run came from the results store
    state: str = ""  # bad, good, unknown
    colour: str = ""
    edge: bool = False  # one side of the boundary
    cells: tuple[str, ...] = ()  # the outcome, then the bisect's own columns: plain text


@dataclass(frozen=True)
class Changed:
    """The commit a commit bisect names: where to read it, and whose it is."""

    url: str
    pull_url: str | None
    author: str
    date: str  # ISO 8601


@dataclass(frozen=True)
class BisectView:
    """What the report shows, as plain text; the optional parts print only when given."""

    title: str  # "bisect ID", "bisect ID over commits"
    target: str
    meaning: str  # what bad means
    columns: tuple[str, ...]  # the point's, "probe", "state", "outcome", then the cells'
    rows: tuple[Row, ...]  # in the order of the history, oldest first
    headline: str
    reproduce: str = ""
    legend: str | None = None  # under the table: what its marks say
    summary: str | None = None  # under the table: what the search cost
    changed: Changed | None = None
    compare: str | None = None  # upstream's changes across the boundary
    unknown: tuple[
        str, ...
    ] = ()  # the points between the boundary's sides that could not be judged
    note: str | None = None  # where the corpus disagrees


def render(view: BisectView, console: Console) -> None:
    """Every probe in history order, then the answer, the links and how to run it again."""
    from rich.table import Table

    console.print(f"[bold]{markup_safe(view.title)}[/] ({view.target}): bad means {view.meaning}")
    table = Table(show_lines=False)
    for index, name in enumerate(view.columns):
        table.add_column(name, overflow="fold", no_wrap=index < 2)
    for row in view.rows:
        if not row.number:
            blank = ("",) * (len(view.columns) - 3)
            table.add_row(markup_safe(row.point), "", "[dim]not needed[/]", *blank)
            continue
        number = f"#{row.number}" + (" stored" if row.stored else "")
        state = f"[{row.colour}]{row.state}[/]" + (" <" if row.edge else "")
        table.add_row(markup_safe(row.point), number, state, *map(markup_safe, row.cells))
    console.print(table)
    if view.legend:
        console.print(f"[dim]{markup_safe(view.legend)}[/]")
    if view.summary:
        console.print(markup_safe(view.summary))
    console.print(f"[bold]{markup_safe(view.headline)}[/]")
    if view.changed is not None:
        console.print(f"commit: {view.changed.url}", soft_wrap=True)
        if view.changed.pull_url:
            console.print(f"pull request: {view.changed.pull_url}", soft_wrap=True)
        console.print(f"author: {markup_safe(view.changed.author)}, {view.changed.date[:10]}")
    if view.compare:
        console.print(f"changes between them: {view.compare}", soft_wrap=True)
    if view.unknown:
        console.print(f"could not judge between them: {', '.join(view.unknown)}")
    if view.note:
        console.print(f"note: {markup_safe(view.note)}", soft_wrap=True)
    if view.reproduce:
        console.print(f"reproduce with: {view.reproduce}", soft_wrap=True, markup=False)


__all__ = ["BisectView", "Changed", "Row", "render"]
