"""The matrix report from plain values: Markdown marks, and a table that turns at the width."""

from __future__ import annotations

import io

from rich.console import Console

from mgradcheck.reports.matrix import (
    Cell,
    FlipLine,
    Item,
    MatrixView,
    render_markdown,
    render_table,
)

URL = "https://github.com/ml-explore/mlx/compare/v1.2.0...v1.3.0"
VIEW = MatrixView(
    "cpu on linux-x86_64",
    "a run crashes",
    ("1.2.0", "1.3.0"),
    (
        Item(
            "fixed-[here]",
            (Cell("crash", "red"), Cell("pass", "green", flip=True)),
            (FlipLine("bad through 1.2.0, good from 1.3.0", URL, " (corpus: fixed_in 1.3.0)"),),
        ),
        Item("never-judged", (Cell("n/a", "yellow", unknown=True),) * 2, (), "nothing judged"),
    ),
    interrupted=True,
)


def table(width: int, by_item: bool = False) -> list[str]:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    render_table(VIEW, console, by_item)
    return console.export_text().splitlines()


def test_markdown_marks_flips_and_unknowns_and_words_the_flips() -> None:
    lines = render_markdown(VIEW).splitlines()
    assert lines[0] == "### MLX releases against the mgradcheck corpus (cpu on linux-x86_64)"
    assert lines[2] == "| MLX | `fixed-[here]` | `never-judged` |"
    assert lines[4:6] == ["| 1.3.0 | **→ pass** | _n/a_ |", "| 1.2.0 | crash | _n/a_ |"]
    assert f"- `fixed-[here]`: bad through 1.2.0, good from 1.3.0 (corpus: fixed_in 1.3.0) ([compare]({URL}))" in lines  # fmt: skip
    assert "- `never-judged`: nothing judged" in lines
    assert lines[-1] == "_The matrix was interrupted: cells marked `not run` are missing._"
    by_item = render_markdown(VIEW, by_item=True, subject="MLX's tests").splitlines()
    assert by_item[2] == "| id | 1.2.0 | 1.3.0 |"
    assert "| `fixed-[here]` | crash | **→ pass** |" in by_item


def test_the_table_puts_entries_across_when_they_fit_else_down() -> None:
    wide = table(80)
    assert wide[0] == "MLX releases (cpu on linux-x86_64), newest first"
    assert wide[2].split("┃")[1:3] == [" MLX   ", " fixed-[here] "]
    assert [line.split("│")[1].strip() for line in wide[4:6]] == ["1.3.0", "1.2.0"]
    flip = "- fixed-[here]: bad through 1.2.0, good from 1.3.0 (corpus: fixed_in 1.3.0)"
    assert wide[-3:] == [flip, f"  {URL}", "- never-judged: nothing judged"]  # the URL whole
    ids = ["fixed-[here]", "never-judged"]
    for lines, tables in ((table(80, by_item=True), 1), (table(30), 2)):  # 30: a release each
        assert "newest first" not in "\n".join(lines)
        rows = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
        assert rows == ids * tables  # whole, one line each
