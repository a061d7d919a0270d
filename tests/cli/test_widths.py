"""Every table and listing fits the width it is given: $COLUMNS, the terminal's, else 100 in a
pipe; an id is never broken, and the least important column wraps or moves first."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mgradcheck.cli import cli
from mgradcheck.outcomes import Verdict
from mgradcheck.reports import json_report
from mgradcheck.reports.show import render
from mgradcheck.run import stages
from tests import builders
from tests.conftest import BEHAVIOURS, environment

WIDTHS = [80, 120]
IDS = [e.id for e in stages.load_corpus([])]  # the bundled corpus: 51 ids, 38 characters at most


def invoke(args: list[str], width: int | None) -> Result:
    env = {"COLUMNS": str(width) if width else None, "FORCE_COLOR": None, "TTY_COMPATIBLE": None}
    return CliRunner().invoke(cli, args, env=env)


def too_wide(lines: list[str], width: int) -> list[str]:
    """Lines past the width, but for one unbreakable word (a URL) alone after the indent."""
    return [line for line in lines if len(line) > width and len(line.split()) > 1]


@pytest.mark.parametrize("width", WIDTHS)
def test_list_fits_and_starts_each_entry_with_its_whole_id(width: int) -> None:
    result = invoke(["list"], width)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert too_wide(lines, width) == []
    assert all(line == line.rstrip() for line in lines)
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == IDS


@pytest.mark.parametrize("width", WIDTHS)
def test_show_wraps_its_text_at_the_width(width: int) -> None:
    for entry in stages.load_corpus([]):
        text = render(entry, width)
        prose = text[: text.index("\nReproducer (")].splitlines()  # the code is shown as written
        assert too_wide(prose, width) == [], entry.id
    shown = invoke(["show", "compiled-threads-tuple-output"], width)
    assert shown.exit_code == 0, shown.output
    assert max(map(len, shown.output.splitlines()[:12])) > (width - 10)  # the width is used


def run_table(width: int | None, *more: str) -> list[str]:
    args = ["run", "--corpus", str(BEHAVIOURS), "passes", "raises", "-q", *more]
    result = invoke(args, width)
    assert result.exit_code == 1, result.output
    return result.output.splitlines()


@pytest.mark.parametrize("width", [*WIDTHS, None])
def test_the_run_table_in_a_pipe_fits_columns_or_100(width: int | None) -> None:
    lines = run_table(width, "-v")
    assert lines[0].split() == ["id", "outcome", "verdict", "time", "reason"]
    assert max(map(len, lines)) <= (width or 100)
    assert all(line == line.rstrip() for line in lines)  # no row padded out to the width


def reports(tmp_path: Path) -> list[str]:
    """Two releases' run reports of the whole bundled corpus, as GPU runners would send them."""
    paths = []
    for n, mlx in enumerate(("0.31.2", "0.32.0")):
        env = environment(mlx=mlx)
        verdicts = [Verdict.AS_EXPECTED, Verdict.REGRESSED]
        results = [builders.result(i, verdicts[(k + n) % 2], env=env) for k, i in enumerate(IDS)]
        path = tmp_path / f"{mlx}.json"
        json_report.write(builders.report(*results), path)
        paths += ["--from-report", str(path)]
    return paths


@pytest.mark.parametrize("width", [*WIDTHS, None])
def test_the_matrix_of_51_entries_fits_with_every_id_whole(
    width: int | None, tmp_path: Path
) -> None:
    result = invoke(["matrix", *reports(tmp_path)], width)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert too_wide(lines, width or 100) == []
    words = {word.strip("│|") for line in lines for word in line.split()}
    assert set(IDS) <= words  # each id whole on one line
    for version in ("0.31.2", "0.32.0"):
        assert version in result.output
