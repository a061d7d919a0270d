"""A matrix as people read it: a terminal table within the console's width, and Markdown.

It is given the values to show (:class:`MatrixView`, which a matrix makes), so that it
needs nothing of the release machinery above it; it owns the layout. The terminal table
puts entries across only when every entry's column fits beside the releases'; else
entries go down (their ids whole, never broken: they are what people copy) and releases
across, in as many tables as the width needs. Markdown is for release notes and CI
summaries, where the page scrolls: its orientation is the caller's.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mgradcheck.run.display import markup_safe

# Rich is imported where a table is drawn: a Markdown matrix never loads it.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# What a column of a Rich table adds to its text's width: a space each side, and the rule
# before it (the table's edge adds one more).
_COLUMN = 3


@dataclass(frozen=True)
class Cell:
    """One entry on one release, as both renderings show it."""

    text: str  # "fail", "pass 3/3", "n/a", "not run"
    colour: str  # its state's
    flip: bool = False  # the release where the entry flips
    unknown: bool = False  # could not be judged
    state: str = ""  # "bad", "good", "unknown": what the page colours it by
    reason: str = ""  # why it was judged so: the child's message, a skip's requirement
    seconds: float | None = None  # what its runs took; None: none ran


@dataclass(frozen=True)
class FlipLine:
    """Where an entry flips, worded: the link and the corpus's record go after the sentence."""

    sentence: str  # "bad through 0.31.2, good from 0.32.0"
    compare_url: str
    note: str = ""  # " (corpus: fixed_in 0.32.0)", or nothing
    after: str = ""  # the release it flips on, whose cell is marked


@dataclass(frozen=True)
class Item:
    """One entry (or test): its cells, release by release, and where it flips."""

    id: str
    cells: tuple[Cell, ...]  # one per release, in the view's order
    flips: tuple[FlipLine, ...]
    steady: str = ""  # said when it never flips: "good on every release judged"
    title: str = ""
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatrixView:
    """What the report shows, as plain text."""

    target: str
    meaning: str  # what bad means
    versions: tuple[str, ...]  # oldest first
    items: tuple[Item, ...]
    interrupted: bool = False


def _markdown_cell(cell: Cell) -> str:
    if cell.flip:
        return f"**→ {cell.text}**"
    if cell.unknown:
        return f"_{cell.text}_"
    return cell.text


def render_markdown(
    view: MatrixView, by_item: bool = False, subject: str = "the mgradcheck corpus"
) -> str:
    """A table to paste into a release note: flips in bold with an arrow.

    Releases down and entries across; ``by_item``: entries down, releases across.
    """
    lines = [f"### MLX releases against {subject} ({view.target})", ""]
    if by_item:
        lines += [
            "| id | " + " | ".join(view.versions) + " |",
            "|---|" + "---|" * len(view.versions),
        ]
        for item in view.items:
            row = [_markdown_cell(c) for c in item.cells]
            lines.append(f"| `{item.id}` | " + " | ".join(row) + " |")
    else:
        lines += [
            "| MLX | " + " | ".join(f"`{i.id}`" for i in view.items) + " |",
            "|---|" + "---|" * len(view.items),
        ]
        for n in reversed(range(len(view.versions))):
            row = [_markdown_cell(i.cells[n]) for i in view.items]
            lines.append(f"| {view.versions[n]} | " + " | ".join(row) + " |")
    lines += [
        "",
        f"**→** marks the release where an entry flips, bad meaning {view.meaning}; "
        "_italic_: could not be judged (another misbehaviour, not installable, or skipped).",
        "",
    ]
    lines += flip_lines(view, markdown=True)
    if view.interrupted:
        lines += ["", "_The matrix was interrupted: cells marked `not run` are missing._"]
    return "\n".join(lines) + "\n"


def flip_lines(view: MatrixView, markdown: bool) -> list[str]:
    """Where each entry flips, a sentence a line ("- id: ..."), or how it stays."""
    lines = []
    for item in view.items:
        name = f"`{item.id}`" if markdown else item.id
        if not item.flips:
            lines.append(f"- {name}: {item.steady}")
        for flip in item.flips:
            url = flip.compare_url
            link = f" ([compare]({url}))" if markdown else f"  {url}"
            lines.append(f"- {name}: {flip.sentence}{flip.note}{link}")
    return lines


def _cell_text(cell: Cell) -> str:
    """A cell as the table shows it, unstyled: its width is what the column needs."""
    return ("→ " if cell.flip else "") + cell.text


def _table_cell(cell: Cell) -> str:
    style = f"bold {cell.colour}" if cell.flip else cell.colour
    return f"[{style}]{'→ ' if cell.flip else ''}{markup_safe(cell.text)}[/]"


def _table(headers: Sequence[tuple[str, int]]) -> Table:
    """A table of these (header, width) columns, none wrapped or cut: each as wide as its
    widest text, which the caller has measured."""
    from rich.table import Table

    table = Table(show_lines=False)
    for n, (header, width) in enumerate(headers):
        table.add_column(header, style="bold" if n == 0 else "", no_wrap=True, min_width=width)
    return table


def _width(headers: Sequence[tuple[str, int]]) -> int:
    return sum(width + _COLUMN for _, width in headers) + 1


def render_table(view: MatrixView, console: Console, by_item: bool = False) -> None:
    """Releases down (newest first) and entries across, when that fits the console's width;
    else (and for ``by_item``) entries down and releases across, as many tables as it takes."""
    width = console.width
    items, versions = view.items, range(len(view.versions))
    needs = [max([len(i.id), *(len(_cell_text(c)) for c in i.cells)]) for i in items]
    first = ("MLX", max([3, *map(len, view.versions)]))
    across = [first, *((markup_safe(i.id), need) for i, need in zip(items, needs, strict=True))]
    if not by_item and _width(across) <= width:
        console.print(f"[bold]MLX releases[/] ({view.target}), newest first", highlight=False)
        table = _table(across)
        for n in reversed(versions):
            table.add_row(view.versions[n], *(_table_cell(i.cells[n]) for i in items))
        console.print(table)
    else:
        console.print(f"[bold]MLX releases[/] ({view.target})", highlight=False)
        id_column = ("id", max([2, *(len(i.id) for i in items)]))
        columns = [
            max([len(view.versions[n]), *(len(_cell_text(i.cells[n])) for i in items)])
            for n in versions
        ]
        for chunk in _chunks(columns, width - _width([id_column])):
            headers = [id_column, *((view.versions[n], columns[n]) for n in chunk)]
            table = _table(headers)
            for item in items:
                table.add_row(markup_safe(item.id), *(_table_cell(item.cells[n]) for n in chunk))
            # Too narrow for an id and one release: the line grows, and the id stays whole.
            console.print(table, width=max(width, _width(headers)))
    console.print(
        f"→ the release where an entry flips; [red]bad[/] means {view.meaning}; "
        "[yellow]yellow[/]: could not be judged",
        highlight=False,
    )
    for line in flip_lines(view, markdown=False):
        for part in textwrap.wrap(
            line, max(width, 20), subsequent_indent="  ", break_long_words=False,
            break_on_hyphens=False,
        ):  # fmt: skip
            console.print(markup_safe(part), highlight=False, soft_wrap=True)


def _chunks(columns: Sequence[int], room: int) -> list[list[int]]:
    """The releases (by position) in runs of these column widths that fit ``room`` beside
    the ids (one at least each)."""
    chunks: list[list[int]] = [[]]
    used = 0
    for n, column in enumerate(columns):
        need = column + _COLUMN
        if chunks[-1] and used + need > room:
            chunks.append([])
            used = 0
        chunks[-1].append(n)
        used += need
    return chunks


__all__ = [
    "Cell",
    "FlipLine",
    "Item",
    "MatrixView",
    "flip_lines",
    "render_markdown",
    "render_table",
]
