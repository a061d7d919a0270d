"""``mgradcheck run``: the corpus, each entry in its own child, judged and reported."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from mgradcheck.cli.common import (
    CORPUS_OPTION,
    IDS_ARGUMENT,
    TAG_OPTION,
    handle_errors,
    interpreter_options,
    jobs_option,
    json_option,
    note_kernel_build,
    open_target,
    release_options,
    report_options,
    say,
)
from mgradcheck.cli.sharding import shard_options
from mgradcheck.exitcodes import describe

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings
    from mgradcheck.run.child_process import LiveChild


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
@json_option()
@report_options
@shard_options("entries")
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress display (the table and summary still print)."
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show each child's command line as it starts, and the environment variables "
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
    json_path: Path | None,
    junit_path: Path | None,
    summary_path: Path | None,
    badge_path: Path | None,
    shard: Shard | None,
    durations_path: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Run corpus entries (all, or those named by IDS) and judge each against its expectation."""
    from mgradcheck.cli.sharding import take
    from mgradcheck.corpus.shard import units
    from mgradcheck.errors import Interrupted
    from mgradcheck.paths import last_report
    from mgradcheck.reports import github, json_report, table
    from mgradcheck.reports.incremental import SnapshotWriter
    from mgradcheck.reports.outputs import report_outputs, write
    from mgradcheck.run import stages
    from mgradcheck.run.display import choose
    from mgradcheck.run.runner import RunOptions

    entries = stages.select(stages.load_corpus(corpus_paths), ids, tags)
    part = take(shard, durations_path, units(entries, repeat),
                [(e.id, e.id) for e in entries], [f"{e.id} {e.content_hash}" for e in entries])  # fmt: skip
    if part is not None:
        entries = [e for e in entries if e.id in part.units]
    outputs = report_outputs(json_path, junit_path, summary_path, badge_path)
    outputs.check(inputs=stages.corpus_inputs(corpus_paths))
    meta = part.meta if part is not None else {}
    options = RunOptions(
        jobs=jobs,
        timeout=timeout,
        repeat=repeat,
        memory_limit=max_memory * 1024 * 1024 if max_memory else None,
    )
    progress = choose(quiet)
    try:
        command, env = open_target(python, mlx_version, settings, progress)
    except (Interrupted, KeyboardInterrupt) as exc:
        # While installing or probing: nothing ran, so no report is written (an old one stays).
        stopped = exc if isinstance(exc, Interrupted) else Interrupted(2)
        say(f"interrupted by {stopped} before any entry ran")
        sys.exit(stopped.exit_code)
    note_kernel_build(command, env, any(e.uses_compile for e in entries))
    snapshots = None
    files = outputs.files()
    if files.paths():
        snapshots = SnapshotWriter(files, lambda message: say(f"warning: {message}"))
    shown = _shown(say if quiet else progress.line) if verbose else None
    try:
        report, interrupted = stages.execute(
            entries, command, env, options, progress, meta, snapshots, shown
        )
    finally:
        if snapshots is not None:
            snapshots.close()
    json_report.write(report, last_report())
    write(report, outputs)
    table.show(report, stderr=outputs.to_stdout)
    if github.in_actions():
        for annotation in github.annotate(report, {e.id: e.line for e in entries}):
            click.echo(annotation, err=outputs.to_stdout)
    if interrupted is not None:
        say(f"interrupted by {interrupted}; the report holds what finished")
    sys.exit(stages.exit_code(report, interrupted))


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
