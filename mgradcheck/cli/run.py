"""``mgradcheck run``: the corpus, each entry in its own child, judged and reported."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.options import (
    CORPUS_OPTION,
    IDS_ARGUMENT,
    TAG_OPTION,
    jobs_option,
    report_options,
)
from mgradcheck.cli.release_options import interpreter_options, release_options
from mgradcheck.cli.sharding import shard_options
from mgradcheck.cli.target import note_kernel_build, open_target
from mgradcheck.exitcodes import describe

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard, Unit
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings
    from mgradcheck.run.child_process import ChildCommand, LiveChild
    from mgradcheck.run.display import Progress
    from mgradcheck.run.observation import Environment
    from mgradcheck.run.results import Report


@click.command(
    short_help="Run corpus entries, each in its own process, and judge each one.",
    epilog=describe("every verdict as expected", "an unexpected verdict"),
)
@handle_errors
@IDS_ARGUMENT
@CORPUS_OPTION
@TAG_OPTION
@jobs_option("How many children run at once, each one run of one entry.")
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 86400),
    help="Seconds per run, overriding each entry's own.",
)
@click.option(
    "--repeat", type=click.IntRange(1, 10_000), help="Runs per entry, overriding each entry's own."
)
@interpreter_options("Run")
@release_options
@click.option("--max-memory", type=click.IntRange(1), help="Address-space limit per child, in MiB.")
@report_options()
@shard_options("entries")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress display (what needs attention and the summary still print).",
)
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Show the table of every entry, not only those that need attention; twice (-vv), "
    "also each child's command line as it starts, and the environment variables "
    "mgradcheck sets or removes for it.",
)
def run(
    ids: Sequence[str],
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    jobs: int,
    timeout: float | None,
    repeat: int | None,
    python: Path | None,
    mlx_version: Mlx | None,
    settings: Settings | None,
    max_memory: int | None,
    reports: Mapping[str, Path | None],
    shard: Shard | None,
    durations_path: Path | None,
    quiet: bool,
    verbose: int,
) -> None:
    """Run corpus entries (all, or those named by IDS) and judge each against its expectation."""
    from mgradcheck.cli.sharding import take
    from mgradcheck.paths import last_report
    from mgradcheck.reports import json_report
    from mgradcheck.reports.outputs import report_outputs
    from mgradcheck.reports.stage import run_and_report
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose
    from mgradcheck.run.runner import RunOptions

    entries = stages.load_selected(corpus_paths, ids, tags, say)

    def selection() -> tuple[list[Unit], list[tuple[str, str]], list[str]]:
        from mgradcheck.corpus.shard import units

        return (units(entries, repeat), [(e.id, e.id) for e in entries],
                [f"{e.id} {e.content_hash}" for e in entries])  # fmt: skip

    part = take(shard, durations_path, selection)
    if part is not None:
        entries = [e for e in entries if e.id in part.units]
    outputs = report_outputs(**reports)
    meta = part.meta if part is not None else {}
    options = RunOptions(
        jobs=jobs,
        timeout=timeout,
        repeat=repeat,
        memory_limit=max_memory * 1024 * 1024 if max_memory else None,
    )
    progress = choose(quiet)
    shown = _shown(say if quiet else progress.line) if verbose > 1 else None
    compiles = any(e.uses_compile for e in entries)
    lines = {e.id: e.line for e in entries}
    code = run_and_report(
        outputs,
        stages.corpus_inputs(corpus_paths),
        lambda: _opened(python, mlx_version, settings, progress, compiles),
        lambda command, env, snapshots: stages.execute(
            entries, command, env, options, progress, meta, snapshots, shown
        ),
        say,
        keep=lambda report: json_report.write(report, last_report()),
        show=lambda report, stderr: _show(report, stderr, lines, verbose > 0, corpus_paths),
    )
    sys.exit(code)


@contextlib.contextmanager
def _opened(
    python: Path | None,
    mlx_version: Mlx | None,
    settings: Settings | None,
    progress: Progress,
    compiles: bool,
) -> Iterator[tuple[ChildCommand, Environment]]:
    """Open the target (held until the block ends) and say when this run builds its kernels;
    an interrupt while installing or probing ends the command here."""
    from mgradcheck.errors import Interrupted

    with contextlib.ExitStack() as held:
        try:
            command, env = held.enter_context(open_target(python, mlx_version, settings, progress))
        except (Interrupted, KeyboardInterrupt) as exc:
            # While installing or probing: nothing ran, so no report is written (an old one stays).
            stopped = exc if isinstance(exc, Interrupted) else Interrupted(2)
            say(f"interrupted by {stopped} before any entry ran")
            sys.exit(stopped.exit_code)
        note_kernel_build(command, env, compiles)
        yield command, env


def _show(
    report: Report,
    stderr: bool,
    lines: Mapping[str, int],
    verbose: bool,
    corpus: Sequence[Path],
) -> None:
    """What needs attention (``verbose``: the table), and in GitHub Actions an annotation at
    each entry's line that went wrong."""
    from mgradcheck.reports import attention, github

    attention.show(report, stderr=stderr, verbose=verbose, corpus=corpus)
    if github.in_actions():
        for annotation in github.annotate(report, lines):
            click.echo(annotation, err=stderr)


def _shown(show: Callable[[str], None]) -> Callable[[str, LiveChild], None]:
    """``--verbose``: each child's command line, and what mgradcheck changed in the environment
    it inherits (set, or removed: see ``CHILD_UNSET``), as it starts."""

    def started(name: str, child: LiveChild) -> None:
        import os
        import shlex

        env = child.env or {}
        set_ = " ".join(
            f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()) if os.environ.get(k) != v
        )
        removed = " ".join(sorted(k for k in os.environ if k not in env))
        argv = cast("list[str]", child.process.args)  # as child_process._run gives it
        show(f"{name}: {shlex.join(argv)}")
        show(f"{name}: set {set_ or 'nothing'}; removed {removed or 'nothing'}")

    return started
