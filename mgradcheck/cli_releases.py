"""Click commands over real MLX releases: ``bisect``, ``matrix`` (``envs`` is in cli_envs), ``run --mlx``.

Thin: options are parsed and checked here (every version and URL before any
subprocess starts), the work is done by :mod:`mgradcheck.bisect`,
:mod:`mgradcheck.matrix` and :mod:`mgradcheck.envs`. Heavy imports stay
inside the commands so that ``mgradcheck --help`` stays quick.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mgradcheck.cli_common import CORPUS_OPTION, jobs_option, user_errors
from mgradcheck.exitcodes import ExitCode
from mgradcheck.regress import RegressOn

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.child_process import ChildCommand
    from mgradcheck.observation import Environment
    from mgradcheck.release_runs import Settings

F = TypeVar("F", bound=Callable[..., Any])


def parse_version_option(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> Version | None:
    """Checked at parse time: nothing runs with a version that is not plain PEP 440."""
    if value is None:
        return None
    from mgradcheck.index import ReleaseError, parse_version

    try:
        return parse_version(value)
    except ReleaseError as exc:
        raise click.BadParameter(str(exc)) from None


def _index_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from mgradcheck.index import ReleaseError, check_index_url

    try:
        return check_index_url(value)
    except ReleaseError as exc:
        raise click.BadParameter(str(exc)) from None


def release_options(func: F) -> F:
    """Where releases come from and what they are built for; shared by every release command."""
    options = [
        click.option(
            "--index-url",
            callback=_index_url,
            metavar="URL",
            help="Package index (http(s):// or file://). Default: $UV_DEFAULT_INDEX, "
            "$UV_INDEX_URL, $PIP_INDEX_URL, else PyPI.",
        ),
        click.option(
            "--find-links",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            metavar="DIR",
            help="Also take MLX wheels from this directory (e.g. self-built commits between releases).",
        ),
        click.option("--no-index", is_flag=True, help="Use only --find-links, no package index."),
        click.option(
            "--backend",
            type=click.Choice(["cpu", "cuda", "metal"]),
            help="Backend to install for. Default: metal on macOS, cpu elsewhere.",
        ),
        click.option(
            "--installer",
            type=click.Choice(["uv", "pip"]),
            help="Build environments with uv (default when available) or venv + pip.",
        ),
        click.option("--pre", is_flag=True, help="Include pre-releases."),
        click.option("--yanked", is_flag=True, help="Include yanked releases."),
        click.option(
            "--retry-failed",
            is_flag=True,
            help="Try again installs that failed before (remembered otherwise).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def settings_from(options: dict[str, Any], use_cached: bool = True) -> Settings:
    from mgradcheck import envs
    from mgradcheck.index import Source, Target
    from mgradcheck.release_runs import Settings

    source = Source.from_options(options["index_url"], options["find_links"], options["no_index"])
    installer = (
        envs.Installer(options["installer"]) if options["installer"] else envs.default_installer()
    )
    return Settings(
        Target.current(options["backend"]),
        source,
        installer,
        use_cached=use_cached,
        retry_failed=options["retry_failed"],
    )


def source_args(settings: Settings, corpus_paths: Sequence[Path], backend: str | None) -> list[str]:
    """Options that make another mgradcheck command see the same corpus and releases."""
    args = [a for p in corpus_paths for a in ("--corpus", str(p))]
    return args + settings.source.cli_args() + (["--backend", backend] if backend else [])


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


REGRESS_OPTION = click.option(
    "--regress-on",
    type=click.Choice([m.label for m in RegressOn]),
    default=RegressOn.SIGNATURE.label,
    show_default=True,
    help="What counts as bad; the values are listed below.",
)
MATCH_OPTION = click.option(
    "--match", "pattern", metavar="REGEX", help="With --regress-on match: the regex."
)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    import json

    from mgradcheck.atomic import write_text

    write_text(path, json.dumps(data, indent=1) + "\n")


def _check_writable(*paths: Path | None) -> None:
    from mgradcheck.pipeline import Outputs

    Outputs(extra=tuple(p for p in paths if p is not None)).check()


def interruptible(func: F) -> F:
    """Ctrl-C or SIGTERM during installs and probes: exit 130/143 with one line, no traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mgradcheck.runner import Interrupted, signals_interrupt

        try:
            with signals_interrupt():
                return func(*args, **kwargs)
        except Interrupted as exc:
            click.echo(f"mgradcheck: interrupted by {exc}", err=True)
            sys.exit(128 + exc.signum)
        except KeyboardInterrupt:
            click.echo("mgradcheck: interrupted", err=True)
            sys.exit(ExitCode.INTERRUPTED)

    return wrapper  # type: ignore[return-value]


@click.command(epilog=RegressOn.epilog())
@click.argument("entry_id", metavar="ID")
@click.option(
    "--good",
    callback=parse_version_option,
    metavar="VERSION",
    help="A release without the behaviour (default: from the entry).",
)
@click.option(
    "--bad",
    callback=parse_version_option,
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
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Write the result as JSON here."
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the report still prints).")
@user_errors
@interruptible
def bisect(
    entry_id: str,
    good: Version | None,
    bad: Version | None,
    regress_on: str,
    pattern: str | None,
    corpus_paths: Sequence[Path],
    no_cache: bool,
    json_path: Path | None,
    quiet: bool,
    **options: Any,
) -> None:
    """Find the MLX release where entry ID changes: its fix, or the break of a regression.

    Both ends are checked first; then releases between them are installed and
    run, halving the range each time. A release that cannot be installed or
    judged is skipped around. Results are stored, so no release runs twice for
    the same entry. By default the direction follows the entry: the fix of a
    bug with fixed_in, the break of one with introduced_in.
    """
    from rich.console import Console

    from mgradcheck import bisect as bisecting
    from mgradcheck import pipeline
    from mgradcheck.index import list_releases
    from mgradcheck.release_progress import choose

    how = RegressOn.from_label(regress_on)
    pattern = _pattern(how, pattern)
    (entry,) = pipeline.select(pipeline.load_corpus(corpus_paths), [entry_id])
    _check_writable(json_path)
    settings = settings_from(options, use_cached=not no_cache)
    pre = options["pre"] or any(v is not None and v.is_prerelease for v in (good, bad))
    listing = list_releases(settings.source, settings.target, pre, options["yanked"])
    plan = bisecting.plan(entry, listing, good, bad)
    progress = choose(quiet)
    progress.start(f"bisect {entry.id}")
    try:
        result = bisecting.bisect(
            entry,
            plan,
            settings,
            how,
            pattern,
            status=progress.status,
            on_probe=lambda p, left: progress.line(bisecting.probe_line(p, left)),
            extra_args=source_args(settings, corpus_paths, options["backend"]),
        )
    finally:
        progress.stop()
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160)
    bisecting.render(result, console)
    if json_path is not None:
        _write_json(json_path, result.to_json())
    sys.exit(ExitCode.OK if result.boundary is not None else ExitCode.USAGE)


@click.command(epilog=RegressOn.epilog())
@click.argument("ids", nargs=-1)
@CORPUS_OPTION
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag (repeatable).")
@click.option(
    "--versions",
    "version_range",
    metavar="RANGE",
    help="Only releases in this range, e.g. '>=0.29,<0.32'.",
)
@REGRESS_OPTION
@MATCH_OPTION
@release_options
@jobs_option(2, "Releases run")
@click.option(
    "--no-cache", is_flag=True, help="Run everything again instead of reusing stored results."
)
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Write the matrix as JSON here."
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(path_type=Path),
    help="Write the matrix as Markdown here ('-': print it instead of the table).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the table still prints).")
@user_errors
@interruptible
def matrix(
    ids: Sequence[str],
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    version_range: str | None,
    regress_on: str,
    pattern: str | None,
    jobs: int,
    no_cache: bool,
    json_path: Path | None,
    markdown_path: Path | None,
    quiet: bool,
    **options: Any,
) -> None:
    """Run entries (all, or IDS) on every installable MLX release and show where each one flips."""
    from rich.console import Console

    from mgradcheck import matrix as matrices
    from mgradcheck import pipeline
    from mgradcheck.index import list_releases, parse_range

    how = RegressOn.from_label(regress_on)
    pattern = _pattern(how, pattern)
    wanted = parse_range(version_range) if version_range else None
    entries = pipeline.select(pipeline.load_corpus(corpus_paths), ids, tags)
    to_stdout = markdown_path == Path("-")
    _check_writable(json_path, None if to_stdout else markdown_path)
    settings = settings_from(options, use_cached=not no_cache)
    listing = list_releases(settings.source, settings.target, options["pre"], options["yanked"])
    versions = [
        v for v in listing.versions if wanted is None or wanted.contains(v, prereleases=True)
    ]
    if not versions:
        within = f" within {version_range}" if version_range else ""
        raise pipeline.UsageError(f"{listing.empty_reason()}{within}")
    from mgradcheck.release_progress import choose

    progress = choose(quiet)
    progress.start(
        f"matrix: {len(entries)} entries x {len(versions)} releases", total=len(versions)
    )

    def finished(version: Version) -> None:
        progress.advance()
        progress.line(f"mlx {version} done")

    try:
        result = matrices.run_matrix(
            entries, versions, settings, how, pattern, jobs, progress.status, finished
        )
    finally:
        progress.stop()
    if json_path is not None:
        _write_json(json_path, result.to_json())
    if to_stdout:
        click.echo(matrices.render_markdown(result), nl=False)
    else:
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=200)
        matrices.render_table(result, console)
    if markdown_path is not None and not to_stdout:
        from mgradcheck.atomic import write_text

        write_text(markdown_path, matrices.render_markdown(result))
    if result.interrupted:
        click.echo("mgradcheck: interrupted; the table holds what finished", err=True)
        sys.exit(128 + result.signum)


def release_command(version: Version, quiet: bool) -> tuple[ChildCommand, Environment]:
    """For ``run --mlx``: the release's environment from the user's index settings, built if needed."""
    from mgradcheck import envs as environments
    from mgradcheck.index import Source, Target
    from mgradcheck.release_progress import choose
    from mgradcheck.release_runs import Settings, open_release

    settings = Settings(Target.current(), Source.from_options(), environments.default_installer())
    progress = choose(quiet)
    shown = False

    def status(text: str) -> None:  # silent when the environment is ready
        nonlocal shown
        if not shown:
            progress.start(f"mlx {version}")
            shown = True
        progress.status(text)

    try:
        return open_release(version, settings, status)
    finally:
        if shown:
            progress.stop()
