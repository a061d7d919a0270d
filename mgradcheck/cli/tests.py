"""``mgradcheck tests``: an upstream test suite run as a corpus, each test in its own child."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mgradcheck.cli.common import handle_errors, reader_may_leave, say
from mgradcheck.cli.options import jobs_option, on_stdout, report_options
from mgradcheck.cli.release_options import interpreter_options, release_options
from mgradcheck.cli.sharding import shard_items, shard_options
from mgradcheck.errors import EnvironmentFailure, UsageError
from mgradcheck.exitcodes import ExitCode, describe
from mgradcheck.reports.formats import FORMATS

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings
    from mgradcheck.suites.collect import Expand, SuiteTest
    from mgradcheck.suites.mlx_tests import Checkout
    from mgradcheck.suites.suite_runs import SuiteOptions

EPILOG = """\b
Outcomes (no verdicts: a test has no expectation but to pass):
  pass     the test passed
  fail     an assertion failed (unittest's failure)         JUnit <failure>
  error    another exception, or a failed fixture            JUnit <failure>
  crash    its interpreter died: a signal (named), or an exit JUnit <error>
  timeout  ran past --timeout; its process group was killed  JUnit <error>
  skip     a skip decorator, skipTest, pytest.skip, or an expected failure  <skipped>

""" + describe("every test passed or skipped", "one did not")


# The options of one mode only, by parameter name: those of --matrix, then those of a plain run.
_MATRIX_ONLY = {"versions": "--versions", "markdown_path": "--markdown", "emit_dir": "--emit",
                "no_cache": "--no-cache", "force": "--force"}  # fmt: skip
_RUN_ONLY = {**{f"{f.name}_path": f"--{f.name}" for f in FORMATS if f.name != "json"},
             "python": "--python", "mlx_version": "--mlx"}  # fmt: skip
# Why an option means nothing in the other mode, where that is not plain from its name.
_WHY = {"no_cache": ": only a matrix reuses stored results; a run without it runs every test"}


def _check_modes(matrix: bool, given: dict[str, object]) -> None:
    """An option of one mode given in the other is bad usage, said before anything runs."""
    wrong, where = (_RUN_ONLY, "without --matrix") if matrix else (_MATRIX_ONLY, "with --matrix")
    for name, option in wrong.items():
        if given.get(name):
            raise UsageError(f"{option} is used {where} only{_WHY.get(name, '')}")


def _load(
    paths: Sequence[str],
    revision: str | None,
    repo: Path | None,
    keyword: str | None,
    expand: Expand,
    builds: bool = False,
) -> tuple[list[SuiteTest], Checkout | None]:
    """The tests chosen; ``builds``: --mlx names a commit, which --mlx-repo's clone builds."""
    from mgradcheck.suites.collect import collect, select

    checkout = None
    if revision is not None:
        from mgradcheck.suites.mlx_tests import checkout as take

        checkout = take(revision, repo)
        paths = [str(checkout.directory / p) for p in paths] or [str(checkout.directory)]
    elif repo is not None and not builds:
        raise UsageError("--mlx-repo goes with --mlx-tests TAG (or with --mlx COMMIT)")
    elif not paths:
        raise UsageError("give the tests: files or directories, or --mlx-tests TAG")
    return select(collect([Path(p) for p in paths], expand), keyword), checkout


def _expander(
    python: Path | None,
    mlx_version: Mlx | None,
    matrix: bool,
    versions: str | None,
    settings: Settings,
    timeout: float,
) -> Expand:
    """How pytest-style tests are collected: by pytest, in the interpreter they run under; in
    release environments (--mlx, --matrix), which hold MLX and NumPy only, from their source,
    unless --with puts pytest there: then by that pytest, in the environment of the release
    named (of the newest release chosen, with --matrix), where the tests' imports resolve."""
    from mgradcheck.suites.pytest_items import AS_READ, in_target

    if not matrix and mlx_version is None:
        return in_target(str(python) if python else sys.executable, timeout, say)
    from mgradcheck.releases.choice import Release

    named = mlx_version.version if isinstance(mlx_version, Release) else None
    if _brings_pytest(settings.extras) and (named is not None or matrix):

        def in_release(tests: list[SuiteTest]) -> list[SuiteTest]:
            if not any(t.kind == "pytest" for t in tests):
                return tests
            from mgradcheck.releases.on_release import open_release
            from mgradcheck.releases.release_matrix import chosen_releases

            version = named if named is not None else chosen_releases(settings, versions)[1][-1]
            try:
                with open_release(version, settings, say) as (command, _):
                    return in_target(command.python, timeout, say)(tests)
            except EnvironmentFailure as exc:
                if named is not None:
                    raise  # the release to run cannot be installed: said once, exit 3
                say(
                    f"note: no pytest to collect with: {exc}: {AS_READ}"
                )  # the matrix says the rest
                return tests

        return in_release

    def as_read(tests: list[SuiteTest]) -> list[SuiteTest]:
        if any(t.kind == "pytest" for t in tests):
            say(f"note: release environments hold MLX and NumPy, not pytest (--with pytest "
                f"puts it there): {AS_READ}")  # fmt: skip
        return tests

    return as_read


def _brings_pytest(extras: Sequence[str]) -> bool:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return any(canonicalize_name(Requirement(extra).name) == "pytest" for extra in extras)


def _inputs(chosen: Sequence[SuiteTest]) -> list[Path]:
    """What a run reads, which no report may replace: the tests' modules, and the directories
    that hold them (the modules and files they import or open from beside them)."""
    return sorted({t.file for t in chosen} | {t.file.parent for t in chosen})


@click.command(epilog=EPILOG, short_help="Run a test suite's tests, each in its own process.")
@handle_errors
@click.argument("paths", nargs=-1, metavar="[PATH|FILE::Class::test]...")
@click.option("-k", "keyword", metavar="EXPR", help="Only tests matching this pytest-style expression, e.g. 'grad and not complex'.")  # fmt: skip
@click.option("--mlx-tests", "revision", metavar="TAG", help="MLX's own python/tests at this tag, from --mlx-repo's clone (PATHs are then inside it).")  # fmt: skip
@interpreter_options("Run", releases_flag="matrix")
@release_options
@jobs_option("How many children run at once, each running --per-child tests.")
@click.option("--per-child", type=click.IntRange(1, 10_000), default=1, show_default=True,
              help="Tests per child; a child that dies has its culprit re-run alone.")  # fmt: skip
@click.option("--timeout", type=click.FloatRange(0.1, 86400), default=120.0, show_default=True,
              help="Seconds per test.")  # fmt: skip
@report_options("the JSON report (with --matrix: the matrix)")
@click.option("--matrix", "matrix", is_flag=True, help="Run the tests on each release and show where each flips.")  # fmt: skip
@click.option("--versions", metavar="RANGE", help="With --matrix: only releases in this range, e.g. '>=0.31.2'.")  # fmt: skip
@click.option("--markdown", "markdown_path", type=click.Path(path_type=Path), metavar="FILE",
              help="With --matrix: write it as Markdown here ('-': standard output, the table then to stderr).")  # fmt: skip
@click.option("--emit", "emit_dir", type=click.Path(file_okay=False, path_type=Path),
              help="With --matrix: write a corpus entry for each test that flips, checked to reproduce.")  # fmt: skip
@click.option("--force", is_flag=True, help="With --emit: replace entry files already in DIR (else refused before anything runs).")  # fmt: skip
@click.option("--no-cache", is_flag=True, help="With --matrix: run again what the store holds.")
@shard_options("tests")
@click.option("--collect-only", is_flag=True, help="List the tests collected and exit.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
@click.option("-v", "--verbose", is_flag=True, help="Show the table of every test, not only those that need attention.")  # fmt: skip
def tests(
    paths: Sequence[str],
    keyword: str | None,
    revision: str | None,
    python: Path | None,
    mlx_version: Mlx | None,
    settings: Settings,
    jobs: int,
    per_child: int,
    timeout: float,
    reports: Mapping[str, Path | None],
    matrix: bool,
    versions: str | None,
    markdown_path: Path | None,
    emit_dir: Path | None,
    force: bool,
    no_cache: bool,
    shard: Shard | None,
    durations_path: Path | None,
    collect_only: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Run a test suite's unittest and pytest tests, each in its own child, like corpus entries.

    \b
    Tests are collected from the source (nothing is imported here): test*
    methods of unittest.TestCase classes, test* functions and methods of Test*
    classes, from test*.py and *_test.py files; pytest-style ones as pytest
    collects them in the interpreter they run under, one test per parameter set
    (test_x.py::test_f[float32]). Helper modules beside the tests import as
    under unittest. A crash or hang ends only its own test.
    With --matrix, the tests run on each release (results stored by the test's
    source hash), and --emit writes the ones that flip as corpus entries.
    """
    from mgradcheck.releases.choice import Commit, Release
    from mgradcheck.suites.suite_runs import SuiteOptions

    _check_modes(matrix, click.get_current_context().params)
    if force and emit_dir is None:
        raise UsageError("--force goes with --emit")
    if versions:
        from mgradcheck.index.installable import parse_range

        parse_range(versions)  # a bad range is bad usage, said before anything runs
    commit = isinstance(mlx_version, Commit)
    expand = _expander(python, mlx_version, matrix, versions, settings, timeout)
    chosen, checkout = _load(paths, revision, settings.mlx_repo, keyword, expand, builds=commit)
    chosen, meta = shard_items(shard, durations_path, chosen)
    if collect_only:
        from mgradcheck.suites.source import shown
        from mgradcheck.wording import count

        for test in chosen:
            click.echo(shown(test.id))  # a directory's name is the test's: never sent raw
        click.echo(f"{count(len(chosen), 'test')} collected", err=True)
        return
    options = SuiteOptions(jobs=jobs, per_child=per_child, timeout=timeout)
    if matrix:
        settings = dataclasses.replace(settings, use_cached=not no_cache)
        _matrix(chosen, checkout, settings, options, versions, reports["json"], markdown_path, emit_dir, force, quiet, meta)  # fmt: skip
        return
    # The stages of run (see mgradcheck.cli.run), over tests, their runs stored per release.
    from mgradcheck.cli.target import open_target
    from mgradcheck.reports import attention
    from mgradcheck.reports.incremental import rewriting_files
    from mgradcheck.reports.outputs import report_outputs, write
    from mgradcheck.run.display import choose
    from mgradcheck.run.stages import exit_code
    from mgradcheck.suites.suite_runs import report_of, store_runs

    outputs = report_outputs(**reports)
    outputs.check(inputs=_inputs(chosen))  # before the target opens, which may install a release
    progress = choose(quiet)
    target = open_target(python, mlx_version, settings, progress)
    with target as (command, env), rewriting_files(outputs, say) as snapshots:
        report, interrupted = report_of(chosen, command, env, options, progress, meta, snapshots)
    if isinstance(mlx_version, Release):  # a commit's runs: not stored
        store_runs(settings, mlx_version.version, chosen, report.results, options)
    write(report, outputs)
    with reader_may_leave(sys.stderr if outputs.to_stdout else sys.stdout):
        attention.show(report, outputs.to_stdout, verbose)
    if interrupted is not None:
        say(f"interrupted by {interrupted}; the report holds what finished")
    sys.exit(exit_code(report, interrupted))


def _matrix(
    chosen: Sequence[SuiteTest],
    checkout: Checkout | None,
    settings: Settings,
    options: SuiteOptions,
    versions: str | None,
    json_path: Path | None,
    markdown_path: Path | None,
    emit_dir: Path | None,
    force: bool,
    quiet: bool,
    meta: dict[str, Any],
) -> None:
    from mgradcheck.atomic import write_text
    from mgradcheck.releases.matrix_report import matrix_view
    from mgradcheck.reports.matrix import render_table
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run.display import choose, report_console
    from mgradcheck.suites.matrix import markdown, suite_matrix, summary_lines
    from mgradcheck.suites.source import shown

    to_stdout = on_stdout(json_path, markdown_path)
    check_writable_paths(json_path, markdown_path, inputs=_inputs(chosen))
    if emit_dir is not None and not force:
        from mgradcheck.suites.harvest import check_targets

        check_targets(chosen, emit_dir)  # a hand-edited draft is not replaced, said before any run
    result = suite_matrix(chosen, settings, versions, options, choose(quiet))
    if json_path is not None:
        from mgradcheck.reports.json_report import dumps

        write_text(
            json_path, dumps({**result.to_json(), "meta": {"kind": "tests", **meta}}, indent=1)
        )
    console = report_console(stderr=to_stdout)
    render_table(matrix_view(result), console, by_item=True)
    for line in summary_lines(result):  # test ids hold directory names: shown, never obeyed
        console.print(shown(line), highlight=False, soft_wrap=True, markup=False)
    if markdown_path is not None:
        write_text(markdown_path, markdown(result))
    if result.interrupted:
        say("interrupted; the table holds what finished")
        sys.exit(ExitCode.for_signal(result.signum))
    if emit_dir is not None:
        from mgradcheck.suites.harvest import harvest

        def tell(line: str) -> None:
            click.echo(shown(line), err=to_stdout)

        harvest(result, chosen, checkout, settings, emit_dir, choose(quiet), force, tell)
