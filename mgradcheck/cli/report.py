"""Commands over finished reports: ``mgradcheck report merge`` and ``mgradcheck badge``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mgradcheck.cli.common import handle_errors, report_options, say
from mgradcheck.errors import UsageError

if TYPE_CHECKING:
    from mgradcheck.run.results import Report

REPORTS = click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)


def _read(files: Sequence[Path]) -> Report:
    """The merged report of ``files`` (one file is its own merge); exit 2 on anything wrong."""
    from mgradcheck.reports import merge

    try:
        reports = merge.read(files)
        merged = merge.merge(reports, [str(f) for f in files])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for missing in merge.missing_shards(reports):
        say(f"warning: no report for shard {missing}")
    return merged


@click.group()
def report() -> None:
    """Work with report files written by 'mgradcheck run --json'."""


@report.command(name="merge")
@handle_errors
@REPORTS
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="Write the merged JSON report here."
)
@report_options
def merge_command(
    files: Sequence[Path],
    output: Path | None,
    junit_path: Path | None,
    summary_path: Path | None,
    badge_path: Path | None,
) -> None:
    """Merge reports of many jobs (shards, backends, releases) into one, each result keeping its environment.

    Exits 0 once written, whatever the verdicts: the jobs that ran them already failed or passed.
    """
    from mgradcheck.reports.outputs import report_outputs, write

    merged = _read(files)
    outputs = report_outputs(output, junit_path, summary_path, badge_path)
    outputs.check(inputs=files)
    write(merged, outputs)
    click.echo(f"merged {len(files)} reports: {merged.summary_line()}")


@click.command()
@handle_errors
@REPORTS
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Write the SVG badge here.",
)
@click.option(
    "--endpoint",
    type=click.Path(path_type=Path),
    help="Also write a shields.io endpoint JSON here.",
)
@click.option("--label", help="Left-hand text. Default: the MLX releases, e.g. 'mlx 0.32.4'.")
def badge(files: Sequence[Path], output: Path, endpoint: Path | None, label: str | None) -> None:
    """Draw a status badge from one or more reports, e.g. 'mlx 0.32.4 | 7/7 as expected' (no network)."""
    from mgradcheck.reports import badge as badges
    from mgradcheck.reports.outputs import Outputs

    merged = _read(files)
    Outputs(badge=output, endpoint=endpoint).check(inputs=files)
    badges.write(merged, output, endpoint, label)
    click.echo(badges.summarise(merged, label).text)
