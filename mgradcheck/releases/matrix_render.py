"""A matrix as people read it: a terminal table within the console's width, and Markdown.

The terminal table puts entries across only when every entry's column fits beside the
releases'; else entries go down (their ids whole, never broken: they are what people copy)
and releases across, in as many tables as the width needs. Markdown is for release notes
and CI summaries, where the page scrolls: its orientation is the caller's.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.version import Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.releases.regress import RegressOn, State, recorded
from mgradcheck.releases.release_matrix import Flip, Matrix
from mgradcheck.releases.store import Runnable
from mgradcheck.run.display import markup_safe

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# What a column of a Rich table adds to its text's width: a space each side, and the rule
# before it (the table's edge adds one more).
_COLUMN = 3


def _cell_text(matrix: Matrix, entry_id: str, version: Version) -> str:
    cell = matrix.cell(entry_id, version)
    return cell.outcome if cell.outcome != "unavailable" else "n/a"


def _markdown_cell(matrix: Matrix, entry_id: str, version: Version) -> str:
    text = _cell_text(matrix, entry_id, version)
    if version in matrix.flip_versions(entry_id):
        return f"**→ {text}**"
    if matrix.cell(entry_id, version).state is State.UNKNOWN:
        return f"_{text}_"
    return text


def render_markdown(
    matrix: Matrix, by_item: bool = False, subject: str = "the mgradcheck corpus"
) -> str:
    """A table to paste into a release note: flips in bold with an arrow.

    Releases down and entries across; ``by_item``: entries down, releases across.
    """
    ids = [e.id for e in matrix.entries]
    lines = [f"### MLX releases against {subject} ({matrix.target})", ""]
    if by_item:
        lines += [
            "| id | " + " | ".join(str(v) for v in matrix.versions) + " |",
            "|---|" + "---|" * len(matrix.versions),
        ]
        for entry_id in ids:
            row = [_markdown_cell(matrix, entry_id, v) for v in matrix.versions]
            lines.append(f"| `{entry_id}` | " + " | ".join(row) + " |")
    else:
        lines += [
            "| MLX | " + " | ".join(f"`{i}`" for i in ids) + " |",
            "|---|" + "---|" * len(ids),
        ]
        for version in reversed(matrix.versions):
            row = [_markdown_cell(matrix, entry_id, version) for entry_id in ids]
            lines.append(f"| {version} | " + " | ".join(row) + " |")
    lines += [
        "",
        f"**→** marks the release where an entry flips, bad meaning {matrix.regress_on.meaning}; "
        "_italic_: could not be judged (another misbehaviour, not installable, or skipped).",
        "",
    ]
    lines += _flip_lines(matrix, markdown=True)
    if matrix.interrupted:
        lines += ["", "_The matrix was interrupted: cells marked `not run` are missing._"]
    return "\n".join(lines) + "\n"


def _flip_lines(matrix: Matrix, markdown: bool) -> list[str]:
    lines = []
    for entry in matrix.entries:
        flips = matrix.flips(entry.id)
        name = f"`{entry.id}`" if markdown else entry.id
        if not flips:
            states = {matrix.cell(entry.id, v).state for v in matrix.versions} - {State.UNKNOWN}
            what = (
                states.pop().label + " on every release judged"
                if len(states) == 1
                else "nothing judged"
            )
            lines.append(f"- {name}: {what}")
            continue
        for flip in flips:
            link = f" ([compare]({flip.compare_url}))" if markdown else f"  {flip.compare_url}"
            lines.append(f"- {name}: {flip.sentence()}{_recorded(entry, flip, matrix)}{link}")
    return lines


def _recorded(entry: Runnable, flip: Flip, matrix: Matrix) -> str:
    if matrix.regress_on is not RegressOn.SIGNATURE or not isinstance(entry, Entry):
        return ""
    device = "cuda" if matrix.backend.startswith("cuda") else matrix.backend
    found = recorded(entry, device, flip.now is State.GOOD, flip.before, flip.after)
    if found is None:
        return ""
    return f" (corpus: {found.key} {found.version}{'' if found.agrees else ', which disagrees'})"


def _table_cell(matrix: Matrix, entry_id: str, version: Version) -> str:
    cell = matrix.cell(entry_id, version)
    text = _cell_text(matrix, entry_id, version)
    mark = "→ " if version in matrix.flip_versions(entry_id) else ""
    style = f"bold {cell.state.colour}" if mark else cell.state.colour
    return f"[{style}]{mark}{markup_safe(text)}[/]"


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


def _shown(matrix: Matrix, entry_id: str, version: Version) -> str:
    """A cell as the table shows it, unstyled: its width is what the column needs."""
    mark = "→ " if version in matrix.flip_versions(entry_id) else ""
    return mark + _cell_text(matrix, entry_id, version)


def render_table(matrix: Matrix, console: Console, by_item: bool = False) -> None:
    """Releases down (newest first) and entries across, when that fits the console's width;
    else (and for ``by_item``) entries down and releases across, as many tables as it takes."""
    width = console.width
    ids = [e.id for e in matrix.entries]
    versions = list(matrix.versions)
    needs = {i: max([len(i), *(len(_shown(matrix, i, v)) for v in versions)]) for i in ids}
    first = ("MLX", max([3, *(len(str(v)) for v in versions)]))
    across = [first, *((markup_safe(i), needs[i]) for i in ids)]
    if not by_item and _width(across) <= width:
        console.print(f"[bold]MLX releases[/] ({matrix.target}), newest first", highlight=False)
        table = _table(across)
        for version in reversed(versions):
            table.add_row(str(version), *(_table_cell(matrix, i, version) for i in ids))
        console.print(table)
    else:
        console.print(f"[bold]MLX releases[/] ({matrix.target})", highlight=False)
        id_column = ("id", max([2, *map(len, ids)]))
        columns = {
            v: max([len(str(v)), *(len(_shown(matrix, i, v)) for i in ids)]) for v in versions
        }
        for chunk in _chunks(versions, columns, width - _width([id_column])):
            headers = [id_column, *((str(v), columns[v]) for v in chunk)]
            table = _table(headers)
            for entry_id in ids:
                table.add_row(
                    markup_safe(entry_id), *(_table_cell(matrix, entry_id, v) for v in chunk)
                )
            # Too narrow for an id and one release: the line grows, and the id stays whole.
            console.print(table, width=max(width, _width(headers)))
    console.print(
        f"→ the release where an entry flips; [red]bad[/] means {matrix.regress_on.meaning}; "
        "[yellow]yellow[/]: could not be judged",
        highlight=False,
    )
    for line in _flip_lines(matrix, markdown=False):
        for part in textwrap.wrap(
            line, max(width, 20), subsequent_indent="  ", break_long_words=False,
            break_on_hyphens=False,
        ):  # fmt: skip
            console.print(markup_safe(part), highlight=False, soft_wrap=True)


def _chunks(
    versions: Sequence[Version], columns: dict[Version, int], room: int
) -> list[list[Version]]:
    """The releases in runs of columns that fit ``room`` beside the ids (one at least each)."""
    chunks: list[list[Version]] = [[]]
    used = 0
    for version in versions:
        need = columns[version] + _COLUMN
        if chunks[-1] and used + need > room:
            chunks.append([])
            used = 0
        chunks[-1].append(version)
        used += need
    return chunks
