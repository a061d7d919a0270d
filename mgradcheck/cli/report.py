"""Commands over reports: ``mgradcheck report merge``, ``report compare``, ``report upstream`` and
``mgradcheck badge``."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.options import CORPUS_OPTION, report_options
from mgradcheck.cli.release_options import release_options
from mgradcheck.errors import UsageError
from mgradcheck.exitcodes import ExitCode, describe
from mgradcheck.wording import count

if TYPE_CHECKING:
    from mgradcheck.corpus.entry import Entry
    from mgradcheck.releases.settings import Settings
    from mgradcheck.run.results import Report

REPORTS = click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)


def _read(files: Sequence[Path], allow_missing: bool = True) -> Report:
    """The merged report of ``files`` (one file is its own merge); exit 2 on anything wrong,
    a missing shard included unless ``allow_missing`` (then a warning, and in the meta)."""
    from mgradcheck.cli.report_files import shards_missing
    from mgradcheck.reports import joined

    names = [str(f) for f in files]
    try:
        reports = joined.read(files)
        merged = joined.merge(reports, names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    missing = joined.missing_shards(reports, names)
    shards_missing(missing, allow_missing)
    if missing:
        merged.meta["missing_shards"] = missing
    return merged


@click.group(short_help="Merge or compare the reports of runs, or write a bug up for MLX.")
def report() -> None:
    """Work with reports: merge the JSON reports of runs, compare two of them, or write a bug up
    for MLX's issue tracker or its test suite."""


@report.command(
    name="merge",
    short_help="Merge the reports of many jobs (shards, backends, releases) into one.",
    epilog=describe("written, whatever the verdicts", environment=False),
)
@handle_errors
@REPORTS
@report_options("the merged JSON report")
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Merge the shards given even when one is missing (then named in a warning and the "
    "merged report's meta). Without it, a missing shard is refused.",
)
def merge_command(
    files: Sequence[Path],
    reports: Mapping[str, Path | None],
    allow_missing: bool,
) -> None:
    """Merge reports of many jobs (shards, backends, releases) into one, each result keeping its environment.

    \b
    The reports of run and tests jobs merge into every report run writes; the
    shards of one sweep, or of one matrix, into their JSON and a Markdown
    --summary (a sweep's findings; the matrix's table). Shards must be of the
    same selection (options, corpus, durations file), each given once, none
    missing. Writes the reports asked for (at least one; '-' is standard output).
    Exits 0 once written, whatever the verdicts: the jobs that ran them already failed or passed.
    """
    from mgradcheck.cli import report_files
    from mgradcheck.reports.formats import FORMATS
    from mgradcheck.reports.outputs import report_outputs, write

    kind, datas = report_files.load(files)
    if kind != report_files.REPORT:
        report_files.merge_runs(kind, datas, files, reports, allow_missing)
        return
    merged = _read(files, allow_missing)
    outputs = report_outputs(**reports)
    if not outputs.paths():
        *names, last = (f"--{f.name}" for f in FORMATS)
        raise UsageError(
            f"nothing to write: give {', '.join(names)} or {last} ('-' for standard output)"
        )
    outputs.check(inputs=files)
    write(merged, outputs)
    click.echo(
        f"merged {count(len(files), 'report')}: {merged.summary_line()}", err=outputs.to_stdout
    )


@report.command(
    name="durations",
    short_help="Write the seconds each item took, for --shard's --durations.",
    epilog=describe("written", environment=False),
)
@handle_errors
@REPORTS
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The durations file ('-': standard output); an earlier one is replaced.",
)
def durations_command(files: Sequence[Path], output: Path) -> None:
    """Write the seconds each entry, test or sweep case took in these reports, as a JSON object
    of id -> seconds (the mean where several reports time one id): what 'run', 'tests',
    'sweep' and 'matrix' take as --durations FILE to deal --shard K/N by time.

    Reports of any kind may be given: run, tests, sweep, matrix, merged or not.
    """
    from mgradcheck.cli import report_files

    report_files.write_durations(report_files.durations(files), output, files)


@report.command(
    name="compare",
    short_help="Which entries a change to MLX fixed or broke: two run reports.",
    epilog=describe("nothing broke", "an entry broke in HEAD", environment=False),
)
@handle_errors
@click.argument("base", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("head", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write the comparison as Markdown for a pull request's description ('-': "
    "standard output, the table then on standard error).",
)
def compare_command(base: Path, head: Path, markdown_path: Path | None) -> None:
    """Compare two 'run --json' reports of the corpus: BASE (say, the commit a branch starts
    from) and HEAD (the branch, built with 'run --mlx BRANCH --mlx-repo PATH').

    \b
    Lists the entries the change fixed (the bug no longer reproduces), broke
    (REGRESSED or UNEXPECTED in HEAD where BASE was as expected, or a pass
    that became a bug), and changed (another outcome, verdict or reason),
    each with its reason, and those in one report only. Results are matched
    by entry and backend, so the two may run different MLX versions.
    """
    from mgradcheck.reports import compare, json_report
    from mgradcheck.reports.outputs import check_writable_paths

    check_writable_paths(markdown_path, inputs=(base, head))
    try:
        found = compare.compare(
            json_report.read(base), json_report.read(head), (str(base), str(head))
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if markdown_path is not None:
        compare.write_markdown(found, markdown_path)
    click.echo(compare.render_text(found), nl=False, err=str(markdown_path) == "-")
    if found.broke:
        sys.exit(ExitCode.UNEXPECTED)


@report.command(
    name="upstream",
    short_help="Print entry ID as a paste-ready MLX issue (Markdown).",
    epilog=describe("printed"),
)
@handle_errors
@click.argument("entry_id", metavar="ID")
@CORPUS_OPTION
@click.option(
    "--releases",
    "version_range",
    metavar="RANGE",
    help="Reproduce it on these releases, e.g. '>=0.31'. Default: the newest release of each of "
    "the three newest minor series, and the release that found it.",
)
@release_options
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Also write it here."
)
@click.option(
    "--as-test",
    "as_test",
    is_flag=False,
    flag_value="-",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="[DIR]",
    help="Instead, the entry's code as a unittest for MLX's python/tests (mlx_tests.MLXTestCase), "
    "printed, or written into DIR as test_<id>.py with a minimal mlx_tests.py beside it unless "
    "one is there. Nothing is installed or run. Give ID first.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def upstream_command(
    entry_id: str,
    corpus_paths: Sequence[Path],
    version_range: str | None,
    settings: Settings,
    output: Path | None,
    as_test: Path | None,
    quiet: bool,
) -> None:
    """Print entry ID as a paste-ready MLX issue (Markdown).

    \b
    Title and summary, a standalone reproducer (MLX and NumPy only) that
    raises AssertionError while the bug is present, what it printed on the
    newest release chosen, the releases where it reproduces (run through the
    cached release environments), where to look in MLX (the primitive methods
    at fault, as file:line in the MLX sources indexed in the package), and the
    environment. A gradcheck entry is run first to learn which transform
    combination fails, and where.

    With --as-test, the entry's code as a regression test for MLX's
    python/tests instead: it fails while the bug is present, passes once it
    is fixed ('mgradcheck tests DIR --mlx VERSION' runs it on a release).
    """
    from mgradcheck.atomic import write_text
    from mgradcheck.envs.venvs import needs_install
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose
    from mgradcheck.sweep import upstream_issue as upstream

    (entry,) = stages.load_selected(corpus_paths, [entry_id], say=say)
    check_writable_paths(output, inputs=stages.corpus_inputs(corpus_paths))
    if as_test is not None:
        _as_test(entry, as_test, output, version_range)
        return
    progress = choose(quiet)
    versions = upstream.releases(entry, settings, version_range)
    fresh = [v for v in versions if needs_install(settings.spec(v), settings.retry_failed)]
    if fresh:  # minutes each: said before, whatever the display
        where, them = (
            ("a cached environment", "it") if len(fresh) == 1 else ("cached environments", "them")
        )
        say(
            f"note: installing mlx {', '.join(map(str, fresh))} ({settings.target.backend}) into "
            f"{where} first (once; later runs reuse {them})"
        )
    progress.start(f"{entry.id} on mlx {', '.join(map(str, versions))}")
    try:
        found = upstream.issue(entry, settings, versions, progress)
    finally:
        progress.stop()
    text = upstream.render(found)
    if output is not None:
        write_text(output, text)
    click.echo(text)


def _as_test(entry: Entry, directory: Path, output: Path | None, version_range: str | None) -> None:
    """``report upstream ID --as-test [DIR]``: the entry as an MLX test, printed or written."""
    from mgradcheck.atomic import write_text
    from mgradcheck.sweep import upstream_test

    if version_range is not None:
        raise UsageError("--releases does not go with --as-test: the test is written, not run")
    if str(directory) == "-":
        text = upstream_test.render(entry)
        if output is not None:
            write_text(output, text)
        click.echo(text, nl=False)
        return
    if output is not None:
        raise UsageError("-o goes with --as-test alone; --as-test DIR names the files itself")
    for path in upstream_test.write(entry, directory):
        click.echo(f"wrote {path}")


@click.command(
    short_help="Draw a status badge (SVG, shields.io JSON) from reports.",
    epilog=describe("written", environment=False),
)
@handle_errors
@REPORTS
@click.option(
    "--badge",
    "badge_path",
    type=click.Path(path_type=Path),
    metavar="FILE",
    required=True,
    help="FILE (.svg added if missing) and FILE's stem + .shields.json beside it, as 'run --badge' "
    "writes them ('-': the SVG to standard output).",
)
@click.option("--label", help="Left-hand text. Default: the MLX releases, e.g. 'mlx 0.32.4'.")
def badge(files: Sequence[Path], badge_path: Path, label: str | None) -> None:
    """Draw a status badge from one or more reports, such as 'mlx 0.32.4 | 7/7 as expected'.

    Drawn here, with no network: the SVG, and the same badge as a shields.io
    endpoint document for https://img.shields.io/endpoint?url=...
    """
    from mgradcheck.reports import badge as badges
    from mgradcheck.reports.formats import BY_NAME, Output
    from mgradcheck.reports.outputs import Outputs
    from mgradcheck.run.display import printable

    merged = _read(files)
    svg, endpoint = badges.files(badge_path)
    outputs = Outputs((Output(BY_NAME["badge"], badge_path),))
    outputs.check(inputs=files)
    badges.write(merged, svg, endpoint, label)
    click.echo(printable(badges.summarise(merged, label).text), err=outputs.to_stdout)
