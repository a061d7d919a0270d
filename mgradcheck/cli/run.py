"""``mgradcheck run``: the corpus, each entry in its own child, judged and reported.

:func:`run` calls the stages in order: load and select -> shard -> check the outputs -> open
the target -> execute (the report files rewritten as results come) -> keep the last report ->
write the reports -> show -> exit code.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from mgradcheck.cli.common import handle_errors, reader_may_leave, say
from mgradcheck.cli.options import (
    CORPUS_OPTION,
    IDS_ARGUMENT,
    TAG_OPTION,
    jobs_option,
    report_options,
)
from mgradcheck.cli.release_options import interpreter_options, release_options
from mgradcheck.cli.sharding import shard_items, shard_options
from mgradcheck.cli.target import note_kernel_build, open_target
from mgradcheck.exitcodes import describe

if TYPE_CHECKING:
    from mgradcheck.corpus.entry import Entry
    from mgradcheck.corpus.shard import Shard
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
    from mgradcheck.paths import last_report
    from mgradcheck.reports import json_report
    from mgradcheck.reports.incremental import rewriting_files
    from mgradcheck.reports.outputs import report_outputs, write
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose
    from mgradcheck.run.runner import RunOptions

    entries = stages.load_selected(corpus_paths, ids, tags, say)
    entries, meta = shard_items(shard, durations_path, entries, lambda e: repeat or e.repeat)
    outputs = report_outputs(**reports)
    # Before the target opens, which may install a release: no report may replace what is read.
    outputs.check(inputs=stages.corpus_inputs(corpus_paths))
    memory_limit = max_memory * 1024 * 1024 if max_memory else None
    options = RunOptions(jobs=jobs, timeout=timeout, repeat=repeat, memory_limit=memory_limit)
    progress = choose(quiet)
    on_start = partial(_tell_child_start, say if quiet else progress.line) if verbose > 1 else None
    with _open_target_or_exit(python, mlx_version, settings, progress) as (command, env):
        note_kernel_build(command, env, any(e.uses_compile for e in entries))
        with rewriting_files(outputs, say) as snapshots:
            report, interrupted = stages.execute(
                entries, command, env, options, progress, meta, snapshots, on_start
            )
    json_report.write(report, last_report())  # what 'mgradcheck show' tells of the last run
    write(report, outputs)
    with reader_may_leave(sys.stderr if outputs.to_stdout else sys.stdout):
        _show_and_annotate(report, outputs.to_stdout, entries, verbose > 0, corpus_paths)
    if interrupted is not None:
        say(f"interrupted by {interrupted}; the report holds what finished")
    sys.exit(stages.exit_code(report, interrupted))


@contextlib.contextmanager
def _open_target_or_exit(
    python: Path | None,
    mlx_version: Mlx | None,
    settings: Settings | None,
    progress: Progress,
) -> Iterator[tuple[ChildCommand, Environment]]:
    """The target, held until the block ends; an interrupt while installing or probing ends
    the command here: nothing ran, so no report is written (an old one stays)."""
    from mgradcheck.errors import Interrupted

    with contextlib.ExitStack() as held:
        try:
            target = held.enter_context(open_target(python, mlx_version, settings, progress))
        except (Interrupted, KeyboardInterrupt) as exc:
            stopped = exc if isinstance(exc, Interrupted) else Interrupted(2)
            say(f"interrupted by {stopped} before any entry ran")
            sys.exit(stopped.exit_code)
        yield target


def _show_and_annotate(
    report: Report,
    stderr: bool,
    entries: Sequence[Entry],
    verbose: bool,
    corpus: Sequence[Path],
) -> None:
    """What needs attention (``verbose``: the table), and in GitHub Actions an annotation at
    each entry's line that went wrong."""
    from mgradcheck.reports import attention, github

    attention.show(report, stderr=stderr, verbose=verbose, corpus=corpus)
    if github.in_actions():
        for annotation in github.annotate(report, {e.id: e.line for e in entries}):
            click.echo(annotation, err=stderr)


def _tell_child_start(show: Callable[[str], None], name: str, child: LiveChild) -> None:
    """``-vv``: a child's command line, and what mgradcheck changed in the environment it
    inherits (set, or removed: see ``CHILD_UNSET``), as it starts."""
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
