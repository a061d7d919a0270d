"""``mgradcheck sweep``: gradcheck the catalogue of MLX operations and emit what it finds."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.options import jobs_option, json_option, on_stdout
from mgradcheck.cli.release_options import interpreter_options, release_options
from mgradcheck.cli.sharding import shard_options
from mgradcheck.cli.target import note_kernel_build, open_target
from mgradcheck.errors import UsageError
from mgradcheck.exitcodes import ExitCode, describe
from mgradcheck.wording import count

# The graphs a sweep told nothing draws, besides a call of every operation in every dtype kind
# it takes (about 510 on 0.32.4): with the catalogue, about 400 s of the default budget on 2
# cores with a warm kernel cache (docs/sweep-explore.md).
DEFAULT_EXPLORE = 300

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings


def _dtypes(ctx: click.Context, param: click.Parameter, value: Sequence[str]) -> tuple[str, ...]:
    from mgradcheck.child.gradcheck_spec import FLOATS
    from mgradcheck.sweep.catalogue import DTYPES

    names = tuple(d.strip() for item in value for d in item.split(",") if d.strip())
    for name in names:
        if name not in FLOATS:
            raise click.BadParameter(f"{name!r} is not one of {', '.join(FLOATS)}")
    return names or DTYPES


def _checks(ctx: click.Context, param: click.Parameter, value: Sequence[str]) -> tuple[str, ...]:
    from mgradcheck.child.gradcheck_spec import CHECKS, COMPILED

    names = [c.strip() for item in value for c in item.split(",") if c.strip()]
    for name in names:
        if name not in (*CHECKS, "compiled"):
            raise click.BadParameter(f"{name!r} is not 'compiled' nor one of {', '.join(CHECKS)}")
    return tuple(c for name in names for c in (COMPILED if name == "compiled" else (name,)))


@click.command(
    short_help="Gradcheck a catalogue of MLX operations for new bugs.",
    epilog=describe("no finding", "findings"),
)
@handle_errors
@click.option(
    "--ops",
    "patterns",
    multiple=True,
    metavar="PATTERN",
    help="Only cases whose id, op or family matches this shell pattern (repeatable), e.g. 'arctan2*'.",
)
@click.option(
    "--dtypes",
    multiple=True,
    callback=_dtypes,
    metavar="D[,D...]",
    help="Floating dtypes to sweep. Default: float32,float16,bfloat16.",
)
@click.option(
    "--budget",
    type=click.FloatRange(1),
    default=600,
    show_default=True,
    help="Seconds for the whole sweep; cases left when three quarters are spent are not run.",
)
@interpreter_options("Sweep")
@release_options
@click.option(
    "--emit",
    "emit_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each finding as a corpus entry here, then run it to confirm it reproduces. "
    "A file or id already there is kept: the new entry takes the id with a suffix (-2, -3...).",
)
@json_option()
@jobs_option("How many children run at once, each a batch of catalogue cases.")
@click.option(
    "--points",
    type=click.IntRange(1, 20),
    default=2,
    show_default=True,
    help="Random points per case.",
)
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of every draw."
)
@click.option(
    "--explore",
    type=click.IntRange(0),
    metavar="N",
    help="Also run N calls drawn (by --seed) from the target MLX's own signatures and a table of "
    "domains, in every dtype kind (float64, complex64, integers, bool), and N graphs of 2 to 4 "
    "operations ('graph*'), beside the catalogue's cases and within the budget, all spread over "
    "the operations. Default: a call of every operation in every dtype kind it takes and "
    f"{DEFAULT_EXPLORE} graphs when no --ops, --list or --coverage narrows the sweep, else 0 "
    "(the catalogue alone).",
)
@click.option("--transform-dtypes", "--compile-dtypes", "transform_dtypes", default="float32",
              show_default=True, metavar="D[,D...]",
              help="Dtypes whose cases also run the transform checks (compile, vmap, views, specials, "
              "shapeless, second order, checkpoint, custom_function; each compiled graph costs a C++ "
              "build the first time on the CPU); the others run first order only. 'none' for none.")  # fmt: skip
@click.option(
    "--skip",
    "skip",
    multiple=True,
    callback=_checks,
    metavar="C[,C...]",
    help="Checks not to run, e.g. 'compiled' (compile, views, specials, shapeless, compose: the "
    "checks that build C++ kernels on the CPU) on a slow machine. Default: none.",
)
@click.option(
    "--no-shrink", is_flag=True, help="Emit each finding's simplest failing case as found."
)
@shard_options("operations (each with all its cases)")
@click.option(
    "--list", "list_only", is_flag=True, help="List the selected catalogue cases and exit."
)
@click.option(
    "--coverage",
    is_flag=True,
    help="Also print the table of MLX's operations by transform: checked, unsupported by this "
    "MLX (with its message) or not covered.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def sweep(
    patterns: tuple[str, ...],
    dtypes: tuple[str, ...],
    budget: float,
    python: Path | None,
    mlx_version: Mlx | None,
    settings: Settings | None,
    emit_dir: Path | None,
    json_path: Path | None,
    jobs: int,
    points: int,
    seed: int,
    explore: int | None,
    transform_dtypes: str,
    skip: tuple[str, ...],
    no_shrink: bool,
    shard: Shard | None,
    durations_path: Path | None,
    list_only: bool,
    coverage: bool,
    quiet: bool,
) -> None:
    """Gradcheck every operation of the catalogue, each case in a child, and report what disagrees.

    \b
    A wrong answer (two ways of computing one derivative disagree), a crash
    or a hang is a finding; findings are grouped by operation and kind,
    shrunk, and with --emit written as corpus entries and re-run to confirm.
    "Not implemented" errors are listed as unsupported, apart from findings.
    """
    from mgradcheck.cli.sharding import this_shard
    from mgradcheck.reports.outputs import check_directory, check_writable_paths
    from mgradcheck.run.display import choose, known_width
    from mgradcheck.sweep import render as sweep_report
    from mgradcheck.sweep import shards
    from mgradcheck.sweep.pipeline import SweepOptions, plan
    from mgradcheck.sweep.pipeline import sweep as run_sweep

    told_nothing, explore = explore is None, drawn_count(explore, patterns, list_only, coverage)
    every_kind = told_nothing and explore > 0  # the default draw: every operation in every kind
    options = SweepOptions(
        patterns=patterns, dtypes=dtypes, budget=budget, jobs=jobs, points=points, seed=seed,
        transform_dtypes=tuple(d for d in transform_dtypes.split(",") if d and d != "none"),
        skip=skip, shrink=not no_shrink, emit=emit_dir, explore=explore, every_kind=every_kind,
    )  # fmt: skip
    progress = choose(quiet)
    # The target is held (its environment locked against a prune) from the first use to the end.
    with contextlib.ExitStack() as held:
        target, explored, pool = None, None, None
        if explore:  # the calls are drawn from the target's signatures: it is opened first
            from mgradcheck.sweep.catalogue import catalogue
            from mgradcheck.sweep.pipeline import explored as draw_calls

            target = held.enter_context(open_target(python, mlx_version, settings, progress))
            explored = draw_calls(*target, options)
            pool = [*catalogue(), *explored.cases]
            say(explored.summary_line())
        cases, tasks = plan(options, pool)
        if not cases:
            raise UsageError(
                f"no catalogue case matches {', '.join(patterns)}; see 'mgradcheck sweep --list'"
            )
        part = this_shard(
            shard,
            durations_path,
            lambda: (shards.units(tasks), shards.items(tasks), shards.identity(tasks)),
        )
        if part is not None:
            if coverage:
                raise UsageError("--coverage covers the whole catalogue: run it without --shard")
            cases = [c for c in cases if c.op in part.units]
            tasks = [t for t in tasks if t.case.op in part.units]
        if list_only:
            for case in cases:
                click.echo(f"{case.id:<28} {case.op:<18} {case.family:<13} {case.fn}")
            click.echo(
                f"{count(len(cases), 'case')}, {count(len(tasks), 'run')} over {', '.join(dtypes)}"
            )
            return
        check_writable_paths(json_path)
        if emit_dir is not None:
            check_directory(emit_dir)
        command, env = target or held.enter_context(
            open_target(python, mlx_version, settings, progress)
        )
        note_kernel_build(command, env, bool(options.transform_dtypes))
        report = run_sweep(
            command, env, options, progress, cases=cases, coverage=coverage, explored=explored
        )
    report.meta = part.meta if part is not None else {}
    if json_path is not None:
        sweep_report.write_json(report, json_path)
    width = known_width(sys.stderr if on_stdout(json_path) else sys.stdout)
    click.echo(sweep_report.render(report, width), err=on_stdout(json_path))
    if report.coverage is not None:
        click.echo(sweep_report.coverage_table(report), err=on_stdout(json_path))
    if report.interrupted is not None:
        say(f"interrupted by {report.interrupted}; the report holds what finished")
        sys.exit(report.interrupted.exit_code)
    # A guard's documented behaviour is listed, not a failure of the sweep.
    sys.exit(ExitCode.UNEXPECTED if any(not f.by_design for f in report.findings) else ExitCode.OK)


def drawn_count(
    explore: int | None, patterns: Sequence[str], list_only: bool, coverage: bool
) -> int:
    """``--explore``, or when it is not given: a sweep told nothing explores; a slice chosen
    by --ops, a listing or the catalogue's coverage table is the catalogue's alone."""
    if explore is not None:
        return explore
    return 0 if patterns or list_only or coverage else DEFAULT_EXPLORE
