"""``mgradcheck bisect`` and ``matrix``: commands over real MLX releases.

Thin: options are parsed and checked here (every version and URL before any
subprocess starts); the work is :func:`mgradcheck.releases.bisect.bisect_entry`
and :func:`mgradcheck.releases.matrix.matrix_of`. Heavy imports stay inside
the commands so that ``mgradcheck --help`` stays quick.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mgradcheck.cli.common import (
    CORPUS_OPTION,
    ID_ARGUMENT,
    IDS_ARGUMENT,
    TAG_OPTION,
    handle_errors,
    jobs_option,
    json_option,
    on_stdout,
    release_options,
    say,
    version_option,
)
from mgradcheck.cli.completion import release_versions
from mgradcheck.errors import UsageError
from mgradcheck.exitcodes import ExitCode
from mgradcheck.releases.regress import RegressOn

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.releases.runs import Settings


def _regress_on(ctx: click.Context, param: click.Parameter, value: str) -> RegressOn:
    return RegressOn.from_label(value)


REGRESS_OPTION = click.option(
    "--regress-on",
    type=click.Choice([m.label for m in RegressOn]),
    default=RegressOn.SIGNATURE.label,
    show_default=True,
    callback=_regress_on,
    help="What counts as bad; the values are listed below.",
)
MATCH_OPTION = click.option(
    "--match", "pattern", metavar="REGEX", help="With --regress-on match: the regex."
)


def _pattern(regress_on: RegressOn, pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise click.BadParameter(
                f"not a regular expression: {exc}", param_hint="--match"
            ) from None
        if regress_on is not RegressOn.MATCH:
            raise click.BadParameter("--match goes with --regress-on match", param_hint="--match")
    elif regress_on is RegressOn.MATCH:
        raise click.BadParameter("--regress-on match needs --match REGEX", param_hint="--match")
    return pattern


def corpus_args(corpus_paths: Sequence[Path]) -> list[str]:
    """Options that make another mgradcheck command see the same corpus."""
    return [a for p in corpus_paths for a in ("--corpus", str(p))]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from mgradcheck.atomic import write_text
    from mgradcheck.reports.json_report import dumps

    write_text(path, dumps(data, indent=1))


@click.command(
    epilog=RegressOn.epilog(), short_help="Find the MLX release that fixed (or broke) an entry."
)
@handle_errors
@ID_ARGUMENT
@click.option(
    "--good",
    callback=version_option,
    shell_complete=release_versions,
    metavar="VERSION",
    help="A release without the behaviour (default: from the entry).",
)
@click.option(
    "--bad",
    callback=version_option,
    shell_complete=release_versions,
    metavar="VERSION",
    help="A release with it (default: from the entry).",
)
@REGRESS_OPTION
@MATCH_OPTION
@CORPUS_OPTION
@release_options
@click.option(
    "--no-cache", is_flag=True, help="Run every probe again instead of reusing stored results."
)
@json_option("the result as JSON")
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the report still prints).")
def bisect(
    entry_id: str,
    good: Version | None,
    bad: Version | None,
    regress_on: RegressOn,
    pattern: str | None,
    corpus_paths: Sequence[Path],
    settings: Settings,
    no_cache: bool,
    json_path: Path | None,
    quiet: bool,
) -> None:
    """Find the MLX release where entry ID changes: its fix, or the break of a regression.

    Both ends are checked first; then releases between them are installed and
    run, halving the range each time. A release that cannot be installed or
    judged is skipped around. Results are stored, so no release runs twice for
    the same entry. By default the direction follows the entry: the fix of a
    bug with fixed_in, the break of one with introduced_in.
    """
    from mgradcheck.releases.bisect import bisect_entry, render
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose, report_console

    pattern = _pattern(regress_on, pattern)
    (entry,) = stages.select(stages.load_corpus(corpus_paths), [entry_id])
    check_writable_paths(json_path, inputs=stages.corpus_inputs(corpus_paths))
    settings = dataclasses.replace(settings, use_cached=not no_cache)
    result = bisect_entry(
        entry, settings, regress_on, pattern, good, bad, choose(quiet), corpus_args(corpus_paths)
    )
    render(result, report_console(stderr=on_stdout(json_path)))
    if json_path is not None:
        _write_json(json_path, result.to_json())
    sys.exit(ExitCode.OK if result.boundary is not None else ExitCode.USAGE)


@click.command(
    epilog=RegressOn.epilog(), short_help="Run entries on every MLX release; show where each flips."
)
@handle_errors
@IDS_ARGUMENT
@CORPUS_OPTION
@TAG_OPTION
@click.option(
    "--versions",
    "version_range",
    metavar="RANGE",
    help="Only releases in this range, e.g. '>=0.29,<0.32'.",
)
@REGRESS_OPTION
@MATCH_OPTION
@release_options
@jobs_option("Releases run")
@click.option(
    "--no-cache", is_flag=True, help="Run everything again instead of reusing stored results."
)
@json_option("the matrix as JSON")
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Write the matrix as Markdown here ('-': standard output, the table then to stderr).",
)
@click.option(
    "--from-report",
    "from_reports",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Make the matrix of 'run --json' reports made elsewhere (repeatable) instead of "
    "installing releases: e.g. GPU runners, one report per release.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the table still prints).")
def matrix(
    ids: Sequence[str],
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    version_range: str | None,
    regress_on: RegressOn,
    pattern: str | None,
    settings: Settings,
    jobs: int,
    no_cache: bool,
    json_path: Path | None,
    markdown_path: Path | None,
    from_reports: Sequence[Path],
    quiet: bool,
) -> None:
    """Run entries (all, or IDS) on every installable MLX release and show where each one flips."""
    from mgradcheck.releases.index import parse_range
    from mgradcheck.releases.matrix import matrix_of, render_markdown, render_table
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose, report_console

    pattern = _pattern(regress_on, pattern)
    if version_range:
        parse_range(version_range)  # a bad range is bad usage, said before anything runs
    entries = stages.select(stages.load_corpus(corpus_paths), ids, tags)
    inputs = [*stages.corpus_inputs(corpus_paths), *(from_reports or ())]
    check_writable_paths(json_path, markdown_path, inputs=inputs)
    if from_reports:
        from mgradcheck.releases.matrix import from_reports as judged_reports
        from mgradcheck.reports.merge import read

        try:
            reports = read(from_reports)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        result = judged_reports(entries, reports, regress_on, pattern)
    else:
        settings = dataclasses.replace(settings, use_cached=not no_cache)
        result = matrix_of(
            entries, settings, version_range, regress_on, pattern, jobs, choose(quiet)
        )
    if json_path is not None:
        _write_json(json_path, result.to_json())
    render_table(result, report_console(width=200, stderr=on_stdout(json_path, markdown_path)))
    if markdown_path is not None:
        from mgradcheck.atomic import write_text

        write_text(markdown_path, render_markdown(result))
    if result.interrupted:
        say("interrupted; the table holds what finished")
        sys.exit(ExitCode.for_signal(result.signum))
