"""The ``mgradcheck`` command line: thin Click commands over the stage functions.

Imports are kept lazy so that ``mgradcheck --help`` and ``mgradcheck list``
start without loading MLX, NumPy or Rich tables.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from mgradcheck import __version__
from mgradcheck.cli_common import (
    CORPUS_OPTION,
    interpreter_options,
    jobs_option,
    report_options,
    user_errors,
)
from mgradcheck.cli_envs import envs
from mgradcheck.cli_releases import bisect, matrix
from mgradcheck.cli_report import badge, report
from mgradcheck.cli_sweep import sweep


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mgradcheck")
def cli() -> None:
    """Run the corpus of known MLX autodiff and mx.compile bugs, each in its own process.

    \b
    Exit status: 0 every verdict as expected, 1 an unexpected verdict,
    2 bad usage or corpus, 130 interrupted (143 on SIGTERM).
    """


def _shard(value: str | None) -> Any:
    """Parse ``--shard K/N`` into a :class:`~mgradcheck.shard.Shard`, or say what is wrong."""
    if value is None:
        return None
    from mgradcheck.shard import Shard

    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@cli.command()
@click.argument("ids", nargs=-1)
@CORPUS_OPTION
@click.option(
    "--tag", "tags", multiple=True, help="Only entries with this tag (repeatable: all must match)."
)
@jobs_option(1, "Entries run")
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 86400),
    help="Seconds per run, overriding each entry's own.",
)
@click.option(
    "--repeat", type=click.IntRange(1, 10_000), help="Runs per entry, overriding each entry's own."
)
@interpreter_options("Run")
@click.option("--max-memory", type=click.IntRange(1), help="Address-space limit per child, in MiB.")
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Write the JSON report here."
)
@report_options
@click.option(
    "--shard",
    callback=lambda ctx, param, value: _shard(value),
    metavar="K/N",
    help="Run only shard K of N (from 1): the same split in every job, balanced by runs.",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress display (the table and summary still print)."
)
@user_errors
def run(
    ids: Sequence[str],
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    jobs: int,
    timeout: float | None,
    repeat: int | None,
    python: Path | None,
    mlx_version: str | None,
    max_memory: int | None,
    json_path: Path | None,
    junit_path: Path | None,
    summary_path: Path | None,
    badge_path: Path | None,
    shard: Any,
    quiet: bool,
) -> None:
    """Run corpus entries (all, or those named by IDS) and judge each against its expectation."""
    from rich.console import Console

    from mgradcheck import display, pipeline
    from mgradcheck.reports import json_report, table
    from mgradcheck.runner import Interrupted, RunOptions, signals_interrupt

    release = pipeline.choose_interpreter(python, mlx_version)  # checked before anything starts
    entries = pipeline.select(pipeline.load_corpus(corpus_paths), ids, tags)
    if shard is not None:
        from mgradcheck.shard import select as shard_select

        entries = shard_select(entries, shard, repeat)
    outputs = pipeline.report_outputs(json_path, junit_path, summary_path, badge_path)
    outputs.check()
    meta = {"shard": str(shard)} if shard is not None else {}
    options = RunOptions(
        jobs=jobs,
        timeout=timeout,
        repeat=repeat,
        memory_limit=max_memory * 1024 * 1024 if max_memory else None,
    )
    with signals_interrupt():
        try:
            command, env = pipeline.open_interpreter(python, release, quiet)
        except (Interrupted, KeyboardInterrupt) as exc:
            # While installing or probing: nothing ran, so no report is written (an old one stays).
            stopped = exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
            click.echo(f"mgradcheck: interrupted by {stopped} before any entry ran", err=True)
            sys.exit(128 + stopped.signum)
        report, interrupted = pipeline.execute(
            entries, command, env, options, display.choose(quiet), outputs, meta
        )
    from mgradcheck.paths import last_report

    json_report.write(report, last_report())
    pipeline.write(report, outputs)
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160)
    table.render(report, console)
    if interrupted is not None:
        click.echo(
            f"mgradcheck: interrupted by {interrupted}; the report holds what finished", err=True
        )
    sys.exit(pipeline.exit_code(report, interrupted))


@cli.command(name="list")
@CORPUS_OPTION
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag.")
@user_errors
def list_(corpus_paths: Sequence[Path], tags: Sequence[str]) -> None:
    """List the corpus entries: id, expected signature, fix release, title."""
    from mgradcheck import pipeline

    entries = pipeline.load_corpus(corpus_paths)
    for e in entries:
        if not all(t in e.tags for t in tags):
            continue
        fixed = sorted({str(v) for v in e.bug.fixed_in.values() if v is not None})
        status = "fixed in " + "/".join(fixed) if fixed else ("open" if e.bug.affects else "guard")
        if e.upstream.report is None:
            status += ", unreported"
        click.echo(f"{e.id:<32} {status:<16} {e.title}")


@cli.command()
@click.argument("entry_id")
@CORPUS_OPTION
@user_errors
def show(entry_id: str, corpus_paths: Sequence[Path]) -> None:
    """Explain one entry: the bug, its links, its code, its last known status."""
    from mgradcheck import pipeline
    from mgradcheck.show import render

    (entry,) = pipeline.select(pipeline.load_corpus(corpus_paths), [entry_id])
    click.echo(render(entry))


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@user_errors
def validate(paths: Sequence[Path]) -> None:
    """Check corpus files (default: the bundled corpus) without running anything."""
    from mgradcheck import pipeline

    entries = pipeline.load_corpus(paths)
    click.echo(f"{len(entries)} entries valid")


for command in (report, badge, envs, bisect, matrix, sweep):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="mgradcheck")


if __name__ == "__main__":
    main()
