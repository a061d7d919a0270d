"""``mgradcheck bisect`` and ``matrix``: commands over real MLX releases (and commits built here).

Thin: options are parsed and checked here (every version and URL before any
subprocess starts); the work is :func:`mgradcheck.releases.bisect_releases.bisect_entry`,
:func:`mgradcheck.releases.bisect_commits.bisect_commits` and
:func:`mgradcheck.releases.release_matrix.matrix_of`. Heavy imports stay inside the
commands so that ``mgradcheck --help`` stays quick.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.completion import release_versions
from mgradcheck.cli.options import (
    CORPUS_OPTION,
    ID_ARGUMENT,
    IDS_ARGUMENT,
    TAG_OPTION,
    jobs_option,
    json_option,
    on_stdout,
)
from mgradcheck.cli.release_options import build_options, release_options, release_or_ref
from mgradcheck.cli.sharding import shard_options
from mgradcheck.errors import UsageError
from mgradcheck.exitcodes import ExitCode, describe
from mgradcheck.releases.regress import RegressOn

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings


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
TIMEOUT_OPTION = click.option(
    "--timeout",
    type=click.FloatRange(0.1, 86400),
    help="Seconds per run of an entry, overriding each entry's own, as in 'run' (runs are "
    "stored per timeout).",
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


def _commit_hashes(
    ctx: click.Context, param: click.Parameter, value: Sequence[str]
) -> tuple[str, ...]:
    from mgradcheck.upstream import is_commit

    for text in value:
        if not is_commit(text):
            raise click.BadParameter(f"{text!r} is not a commit hash (7 to 40 hex digits)")
    return tuple(value)


def _given(name: str) -> bool:
    """Whether option ``name`` was given on the command line (not a default, nor pyproject.toml's)."""
    source = click.get_current_context().get_parameter_source(name)
    return source is click.core.ParameterSource.COMMANDLINE


def corpus_args(corpus_paths: Sequence[Path]) -> list[str]:
    """Options that make another mgradcheck command see the same corpus."""
    return [a for p in corpus_paths for a in ("--corpus", str(p))]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from mgradcheck.atomic import write_text
    from mgradcheck.reports.json_report import dumps

    write_text(path, dumps(data, indent=1))


@click.command(
    epilog=f"{RegressOn.epilog()}\n\n{describe('the release where it changes found (none found is 2)')}",
    short_help="Find the MLX release that fixed (or broke) an entry.",
)
@handle_errors
@ID_ARGUMENT
@click.option(
    "--good",
    callback=release_or_ref,
    shell_complete=release_versions,
    metavar="VERSION|REF",
    help="A release without the behaviour (default: from the entry); with --commits, "
    "also a tag or commit.",
)
@click.option(
    "--bad",
    callback=release_or_ref,
    shell_complete=release_versions,
    metavar="VERSION|REF",
    help="A release with it (default: from the entry); with --commits, also a tag or commit.",
)
@click.option(
    "--commits",
    "by_commit",
    is_flag=True,
    help="Then bisect the commits between the two releases found (or between --good and "
    "--bad), each built here from a clone of MLX: the commit and pull request that changed it.",
)
@REGRESS_OPTION
@MATCH_OPTION
@CORPUS_OPTION
@release_options
@build_options
@TIMEOUT_OPTION
@click.option(
    "--no-cache", is_flag=True, help="Run every probe again instead of reusing stored results."
)
@json_option("the result as JSON")
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the report still prints).")
def bisect(
    entry_id: str,
    good: Mlx | None,
    bad: Mlx | None,
    by_commit: bool,
    regress_on: RegressOn,
    pattern: str | None,
    corpus_paths: Sequence[Path],
    settings: Settings,
    timeout: float | None,
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

    With --commits, the first-parent history between the last bad and the
    first good release is bisected the same way, each probe a wheel built from
    one commit (CPU backend, or CUDA with a CUDA --backend; a compiler, CMake
    and BLAS/LAPACK are needed). Wheels are kept by commit hash, so no commit is
    built twice; a commit that does not build is skipped around.

    There is no -j: which release runs next depends on the last one's answer.
    """
    from mgradcheck.releases.bisect_releases import bisect_entry
    from mgradcheck.releases.choice import Commit, Release
    from mgradcheck.reports.bisect import render
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose, report_console

    pattern = _pattern(regress_on, pattern)
    refs = [end for end in (good, bad) if isinstance(end, Commit)]
    if refs and not by_commit:
        raise UsageError(f"{refs[0].ref!r} is not an MLX version; give --commits to bisect commits")
    (entry,) = stages.load_selected(corpus_paths, [entry_id], say=say)
    check_writable_paths(json_path, inputs=stages.corpus_inputs(corpus_paths))
    settings = dataclasses.replace(settings, use_cached=not no_cache, timeout=timeout)
    if refs:
        if good is None or bad is None:
            raise UsageError("a tag or commit as one end of --commits needs both --good and --bad")
        released = None
        ends: tuple[Mlx, Mlx] = (good, bad)
    else:
        released = bisect_entry(
            entry,
            settings,
            regress_on,
            pattern,
            good.version if isinstance(good, Release) else None,
            bad.version if isinstance(bad, Release) else None,
            choose(quiet),
            corpus_args(corpus_paths),
        )
        render(released.view(), report_console(stderr=on_stdout(json_path)))
        if not by_commit or released.boundary is None:
            if json_path is not None:
                _write_json(json_path, released.to_json())
            sys.exit(ExitCode.OK if released.boundary is not None else ExitCode.USAGE)
        older, newer = (Release(v) for v in released.boundary)
        ends = (newer, older) if released.direction == "fix" else (older, newer)
    from mgradcheck.releases.bisect_commits import bisect_commits

    result = bisect_commits(
        entry,
        settings,
        *ends,
        choose(quiet),
        regress_on,
        pattern,
        released,
        corpus_args(corpus_paths),
    )
    render(result.view(), report_console(stderr=on_stdout(json_path)))
    if json_path is not None:
        _write_json(json_path, result.to_json())
    if result.interrupted:
        sys.exit(ExitCode.for_signal(result.signum))
    sys.exit(ExitCode.OK if result.boundary is not None else ExitCode.USAGE)


@click.command(
    epilog=f"{RegressOn.epilog()}\n\n{describe('the table shown, whatever it holds')}",
    short_help="Run entries on every MLX release; show where each flips.",
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
@click.option(
    "--commit",
    "commit_refs",
    multiple=True,
    callback=_commit_hashes,
    metavar="HASH",
    help="Also run on this commit, built here once and shown after the release it follows "
    "(repeatable).",
)
@REGRESS_OPTION
@MATCH_OPTION
@release_options
@build_options
@jobs_option("How many releases run at once; each runs its entries one at a time.")
@TIMEOUT_OPTION
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
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Write the matrix as one self-contained HTML page here: a grid coloured by outcome, "
    "grouped by tag, with a filter ('-': standard output).",
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
@shard_options("entries (each on every release)")
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the table still prints).")
def matrix(
    ids: Sequence[str],
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    version_range: str | None,
    commit_refs: Sequence[str],
    regress_on: RegressOn,
    pattern: str | None,
    settings: Settings,
    jobs: int,
    timeout: float | None,
    no_cache: bool,
    json_path: Path | None,
    markdown_path: Path | None,
    html_path: Path | None,
    from_reports: Sequence[Path],
    shard: Shard | None,
    durations_path: Path | None,
    quiet: bool,
) -> None:
    """Run entries (all, or IDS) on every installable MLX release and show where each one flips."""
    from mgradcheck.cli.sharding import shard_items
    from mgradcheck.index.installable import parse_range
    from mgradcheck.releases.matrix_report import matrix_view
    from mgradcheck.releases.release_matrix import matrix_of
    from mgradcheck.reports.matrix import render_markdown, render_table
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose, report_console

    pattern = _pattern(regress_on, pattern)
    if from_reports and commit_refs:
        raise UsageError("--commit builds and runs a commit here: it cannot go with --from-report")
    if version_range:
        parse_range(version_range)  # a bad range is bad usage, said before anything runs
    entries = stages.load_selected(corpus_paths, ids, tags, say)
    if shard is not None and from_reports:
        raise UsageError("--shard splits the runs of a matrix: it cannot go with --from-report")
    if from_reports and _given("timeout"):  # pyproject.toml's applies only where runs are made
        raise UsageError("--timeout is for runs made here: it cannot go with --from-report")
    entries, meta = shard_items(shard, durations_path, entries, lambda e: e.repeat)
    inputs = [*stages.corpus_inputs(corpus_paths), *(from_reports or ())]
    check_writable_paths(json_path, markdown_path, html_path, inputs=inputs)
    if from_reports:
        from mgradcheck.releases.release_matrix import from_reports as judged_reports
        from mgradcheck.reports.joined import read

        try:
            reports = read(from_reports)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        result = judged_reports(entries, reports, regress_on, pattern)
    else:
        settings = dataclasses.replace(settings, use_cached=not no_cache, timeout=timeout)
        result = matrix_of(
            entries,
            settings,
            version_range,
            regress_on,
            pattern,
            jobs,
            choose(quiet),
            commit_refs,
        )
    if json_path is not None:
        _write_json(json_path, {**result.to_json(), "meta": meta})
    view = matrix_view(result)
    render_table(view, report_console(stderr=on_stdout(json_path, markdown_path, html_path)))
    from mgradcheck.atomic import write_text

    if markdown_path is not None:
        write_text(markdown_path, render_markdown(view))
    if html_path is not None:
        from mgradcheck.reports.matrix_html import render_html

        write_text(html_path, render_html(view))
    if result.interrupted:
        say("interrupted; the table holds what finished")
        sys.exit(ExitCode.for_signal(result.signum))
