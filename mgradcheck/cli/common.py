"""What every ``mgradcheck`` command shares: the one error and interrupt path, and common options.

The command modules import this, never :mod:`mgradcheck.cli`, which imports them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from mgradcheck.cli.completion import entry_ids, release_versions, tags
from mgradcheck.errors import MgradcheckError, ReleaseError, UsageError
from mgradcheck.exitcodes import ExitCode
from mgradcheck.index import BACKENDS

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings
    from mgradcheck.run.child_process import ChildCommand
    from mgradcheck.run.display import Progress
    from mgradcheck.run.observation import Environment

F = TypeVar("F", bound=Callable[..., Any])

CORPUS_OPTION = click.option(
    "--corpus",
    "corpus_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Corpus file or directory (repeatable). Default: the bundled corpus.",
)
TAG_OPTION = click.option(
    "--tag",
    "tags",
    multiple=True,
    shell_complete=tags,
    help="Only entries with this tag (repeatable: all must match).",
)
IDS_ARGUMENT = click.argument("ids", nargs=-1, shell_complete=entry_ids)
ID_ARGUMENT = click.argument("entry_id", metavar="ID", shell_complete=entry_ids)


def say(message: str) -> None:
    """One line to the user on stderr, with the program's name, as every message is given."""
    click.echo(f"mgradcheck: {message}", err=True)


def fail(message: str, code: int = ExitCode.USAGE) -> NoReturn:
    say(f"error: {message}")
    sys.exit(code)


def handle_errors(func: F) -> F:
    """The one way a command ends on an error or an interrupt.

    SIGINT and SIGTERM become :class:`~mgradcheck.errors.Interrupted` while the
    command runs; every :class:`~mgradcheck.errors.MgradcheckError` is printed
    as plain lines and exits with its own status (130/143 for an interrupt);
    never a traceback. A command that has something to save when interrupted
    (``run``'s partial report, ``matrix``'s partial table) catches the
    interrupt itself first.
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mgradcheck.errors import Interrupted, signals_interrupt

        try:
            with signals_interrupt():
                return func(*args, **kwargs)
        except Interrupted as exc:
            for line in exc.lines():
                say(line)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            say("interrupted by SIGINT")
            sys.exit(ExitCode.INTERRUPTED)
        except MgradcheckError as exc:
            for line in exc.lines():
                say(f"error: {line}")
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


JOBS_VARIABLE = "MGRADCHECK_JOBS"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, as a container or taskset limits it)."""
    import os

    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_jobs() -> int:
    """``$MGRADCHECK_JOBS`` when set (CI, the test suite), else the usable cores."""
    import os

    value = os.environ.get(JOBS_VARIABLE, "")
    if value.strip():
        try:
            jobs = int(value)
        except ValueError:
            raise UsageError(f"${JOBS_VARIABLE}={value!r} is not a whole number") from None
        if not 1 <= jobs <= MAX_JOBS:
            raise UsageError(f"${JOBS_VARIABLE}={jobs} is outside 1..{MAX_JOBS}")
        return jobs
    return min(usable_cores(), MAX_JOBS)


MAX_JOBS = 512


def note_kernel_build(command: ChildCommand, environment: Environment, compiles: bool) -> None:
    """Say once, as it starts, that this run builds mx.compile's CPU kernels (cached afterwards).

    On the CPU backend MLX compiles each new fused kernel with the system's C++
    compiler, and mgradcheck keeps them per release: the first run of a release
    that uses ``mx.compile`` spends a minute there, later ones none.
    """
    kernels = command.kernels
    if not compiles or environment.backend != "cpu" or kernels is None:
        return
    if any(kernels.rglob("*.so")):
        return
    say(
        f"note: first mx.compile run on mlx {environment.mlx}: building its CPU kernels "
        f"(C++ compiles, a minute or so), kept in {kernels} for the next runs"
    )


def jobs_option(what: str) -> Callable[[F], F]:
    """-j/--jobs: one default for every command; ``what``, its help, says what runs at once."""

    def default() -> int:
        try:
            return default_jobs()
        except UsageError as exc:
            raise click.BadParameter(str(exc), param_hint="-j/--jobs") from None

    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1, MAX_JOBS),
        default=default,
        show_default=f"${JOBS_VARIABLE}, else the usable cores",
        help=what,
    )


def version_option(ctx: click.Context, param: click.Parameter, value: str | None) -> Version | None:
    """Checked at parse time: nothing runs with a version that is not plain PEP 440."""
    if value is None:
        return None
    from mgradcheck.index.installable import parse_version

    try:
        return parse_version(value)
    except ReleaseError as exc:
        raise click.BadParameter(str(exc)) from None


def release_or_commit(ctx: click.Context, param: click.Parameter, value: str | None) -> Mlx | None:
    """A release (a PEP 440 version), or a commit hash (seven or more hex digits)."""
    if value is None:
        return None
    from mgradcheck.builds.commits import is_commit
    from mgradcheck.releases.choice import Commit, Release

    if is_commit(value):
        return Commit(value)
    version = version_option(ctx, param, value)
    assert version is not None
    return Release(version)


def release_or_ref(ctx: click.Context, param: click.Parameter, value: str | None) -> Mlx | None:
    """For bisect's ends: a release, else a git tag or commit (checked like a revision)."""
    if value is None:
        return None
    from mgradcheck.builds.commits import is_commit
    from mgradcheck.index.installable import parse_version
    from mgradcheck.releases.choice import Commit, Release

    if not is_commit(value):
        try:
            return Release(parse_version(value))
        except ReleaseError:
            pass
    if (
        not value
        or value.startswith("-")
        or any(c.isspace() or ord(c) < 32 for c in value)
        or len(value) > 200
    ):
        raise click.BadParameter(f"{value!r} is neither an MLX version nor a git tag or commit")
    return Commit(value)


def _mlx_repo(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Checked at parse time, so a bisect does not find out after its releases have run."""
    if value is None:
        return None
    from mgradcheck.builds.sources import git_dir

    try:
        git_dir(value)
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.resolve()


BUILD_OPTIONS = (
    click.option(
        "--mlx-repo",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        callback=_mlx_repo,
        metavar="PATH",
        help="A clone of MLX to build commits from. Default: a clone of upstream kept in the cache.",
    ),
    click.option(
        "--mlx-deps",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        metavar="DIR",
        help="Clones of the repositories MLX's build fetches (DIR/nanobind, DIR/fmt, ...), for building offline.",
    ),
    click.option(
        "--build-jobs",
        type=click.IntRange(1, 512),
        metavar="N",
        help="Compiler processes per build of a commit. Default: one per core.",
    ),
)


def build_options(func: F) -> F:
    """--mlx-repo, --mlx-deps, --build-jobs: how commits are built; folded into ``settings``
    by :func:`release_options`, which must be applied above this."""
    for option in reversed(BUILD_OPTIONS):
        func = option(func)
    return func


def interpreter_options(verb: str, releases_flag: str = "") -> Callable[[F], F]:
    """--python and --mlx: which MLX the children run (never both), and how a commit is built.

    The release options apply only when releases are installed: with --mlx, or with the
    command's own ``releases_flag`` (``tests --matrix``) when it has one. A command without
    such a flag gets ``settings=None`` when nothing is installed, so that its start-up imports
    none of the release machinery (and reads no index settings); one with a flag always gets
    them, for its build options (``tests --mlx-tests`` reads ``--mlx-repo``).
    """

    def decorate(func: F) -> F:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("python") is not None and kwargs.get("mlx_version") is not None:
                raise UsageError("--mlx and --python cannot be used together")
            given = [key for key in _RELEASE_KEYS if kwargs.get(key)]
            installs = kwargs.get("mlx_version") is not None or (
                releases_flag and kwargs.get(releases_flag)
            )
            if given and not installs:
                names = ", ".join("--" + key.replace("_", "-") for key in given)
                verb = "applies" if len(given) == 1 else "apply"
                also = f" or --{releases_flag.replace('_', '-')}" if releases_flag else ""
                raise UsageError(
                    f"{names} {verb} only with --mlx VERSION{also} (which release to install)"
                )
            if not installs and not releases_flag:
                kwargs[_NO_RELEASE] = True
            return func(*args, **kwargs)

        decorated: Any = build_options(wrapper)
        decorated = click.option(
            "--mlx",
            "mlx_version",
            callback=release_or_commit,
            shell_complete=release_versions,
            metavar="VERSION|COMMIT",
            help=f"{verb} under this MLX release, in its cached environment (installed on first use), "
            "or under a commit (a hash), built here once. Not with --python.",
        )(decorated)
        decorated = click.option(
            "--python",
            "python",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help=f"{verb} under this interpreter (another environment's MLX).",
        )(decorated)
        return cast(F, decorated)

    return decorate


def open_target(
    python: Path | None,
    release: Mlx | None,
    settings: Settings | None,
    progress: Progress,
) -> tuple[ChildCommand, Environment]:
    """:func:`mgradcheck.releases.runs.open_target`, which this interpreter or ``--python``
    reaches without importing the release machinery (half a plain run's start-up)."""
    if release is None:
        from mgradcheck.run.stages import prepare

        return prepare(str(python) if python else sys.executable)
    from mgradcheck.releases import on_release as runs

    assert settings is not None  # release_options makes them whenever --mlx is given
    return runs.open_target(python, release, settings, progress)


def _index_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from mgradcheck.index.urls import check_index_url  # light: no index machinery

    try:
        return check_index_url(value)
    except ReleaseError as exc:
        raise click.BadParameter(str(exc)) from None


# Passed by interpreter_options to release_options: nothing is installed, settings are None.
_NO_RELEASE = "_no_release"
_RELEASE_KEYS = ("index_url", "find_links", "no_index", "backend", "installer", "pre", "yanked",
                 "retry_failed")  # fmt: skip
_BUILD_KEYS = ("mlx_repo", "mlx_deps", "build_jobs")


def release_options(func: F) -> F:
    """Where releases come from and what they are built for, as one ``settings`` argument.

    Shared by every command that installs releases (``run --mlx``, ``sweep
    --mlx``, ``bisect``, ``matrix``, ``envs``), so they take the same options
    and mean the same by them. ``settings`` is None when :func:`interpreter_options`
    says nothing is installed (a plain ``run``).
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {key: kwargs.pop(key) for key in _RELEASE_KEYS}
        given.update((key, kwargs.pop(key)) for key in _BUILD_KEYS if key in kwargs)
        if kwargs.pop(_NO_RELEASE, False):
            kwargs["settings"] = None
        else:
            from mgradcheck.releases.settings import Settings

            kwargs["settings"] = Settings.from_options(**given)
        return func(*args, **kwargs)

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
            type=click.Choice(BACKENDS),
            help="Backend to install for: mlx[cpu], mlx[cuda], mlx[cuda12] or mlx[cuda13] on Linux "
            "(a CUDA build checks the NVIDIA driver first), plain mlx (metal) on macOS. "
            "Default: metal on macOS, cpu elsewhere.",
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
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def on_stdout(*paths: Path | None) -> bool:
    """Whether one of these report paths is ``-``: then tables and summaries go to stderr."""
    return any(p is not None and p == Path("-") for p in paths)


def json_option(what: str = "the JSON report") -> Callable[[F], F]:
    """--json FILE, named the same by every command that writes JSON."""
    return click.option(
        "--json",
        "json_path",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help=f"Write {what} here ('-': standard output, the table then to stderr).",
    )


def report_options(func: F) -> F:
    """--junit, --summary and --badge: the report files every result-producing command writes."""
    options = [
        click.option(
            "--junit",
            "junit_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a JUnit XML report here ('-': standard output).",
        ),
        click.option(
            "--summary",
            "summary_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a Markdown summary here ('-': standard output). Default in GitHub Actions: "
            "append to $GITHUB_STEP_SUMMARY.",
        ),
        click.option(
            "--badge",
            "badge_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a status badge: FILE (.svg added if missing) and FILE's stem + .shields.json "
            "beside it ('-': the SVG to standard output).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


__all__ = [
    "CORPUS_OPTION",
    "IDS_ARGUMENT",
    "ID_ARGUMENT",
    "TAG_OPTION",
    "Settings",
    "build_options",
    "default_jobs",
    "fail",
    "handle_errors",
    "interpreter_options",
    "jobs_option",
    "json_option",
    "note_kernel_build",
    "on_stdout",
    "open_target",
    "release_options",
    "release_or_commit",
    "release_or_ref",
    "report_options",
    "say",
    "version_option",
]
