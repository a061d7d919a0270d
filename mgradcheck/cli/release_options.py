"""Which MLX the children run and where releases come from: --python, --mlx, the index and
build options, folded into one ``settings`` argument, each value checked as it is parsed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from mgradcheck.backends import BY_NAME, NAMES
from mgradcheck.cli.common import F, say
from mgradcheck.cli.completion import release_versions
from mgradcheck.errors import ReleaseError, UsageError

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.releases.choice import Mlx


# A branch or tag name as ``run --mlx`` takes it: git's rules, in a narrower alphabet
# (compiled when first used, not at start-up).
_REF = r"[A-Za-z][A-Za-z0-9._/-]*"
_BAD_REF = r"\.\.|//|/\.|\.$|/$|\.lock(?:/|$)"


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
    """A release (a PEP 440 version), a commit (a hash, a tag or a branch: ``main``), or a
    directory holding an MLX work tree, built as it stands (its uncommitted changes too).

    A version is a release even where a directory of that name exists; any other name
    of a directory that exists is a work tree before it is a branch. The rest is read as
    bisect's ends are (:func:`release_or_ref`); what is neither is refused here, before a
    clone is read or made, and said as a mistyped version."""
    if value is None:
        return None  # a run of the installed MLX loads none of the release machinery
    from mgradcheck.releases.choice import Release, WorkTree

    refused: click.BadParameter | None = None
    try:
        chosen = release_or_ref(ctx, param, value)
    except click.BadParameter as exc:
        chosen, refused = None, exc
    path = _directory(value) if not isinstance(chosen, Release) else None
    if path is not None:
        if not (path / ".git").exists():
            raise click.BadParameter(
                f"{value}: not a version, and a directory that is not the top of a git work tree"
            )
        return WorkTree(path)
    if refused is not None:
        version_option(ctx, param, value)  # raises, saying what a version looks like
        raise refused
    return chosen


def _directory(value: str) -> Path | None:
    """The directory ``value`` names, resolved, or None. An empty name is no directory, though
    the empty path is the working directory; ``~`` without a home names none."""
    if not value.strip():
        return None
    try:
        path = Path(value).expanduser()
        return path.resolve() if path.is_dir() else None
    except (RuntimeError, OSError, ValueError):  # no home directory; a NUL; a name too long
        return None


def _ref_name(value: str) -> bool:
    """Whether ``value`` can name one of MLX's branches or tags."""
    return len(value) <= 200 and bool(re.fullmatch(_REF, value)) and not re.search(_BAD_REF, value)


def release_or_ref(ctx: click.Context, param: click.Parameter, value: str | None) -> Mlx | None:
    """For bisect's ends: a release, else a commit hash or a tag (named as ``run --mlx``'s)."""
    if value is None:
        return None
    from mgradcheck.index.installable import parse_version
    from mgradcheck.releases.choice import Commit, Release
    from mgradcheck.upstream import is_commit

    if not is_commit(value):
        try:
            return Release(parse_version(value))
        except ReleaseError:
            pass
    if not (is_commit(value) or _ref_name(value)):
        raise click.BadParameter(f"{value!r} is neither an MLX version nor a git tag or commit")
    return Commit(value)


def interpreter(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """A path, or a name without a slash found on PATH as the shell finds a command."""
    if value is None:
        return None
    import shutil

    if os.sep not in value and "/" not in value:
        found = shutil.which(value)
        if found is None:
            raise click.BadParameter(f"{value!r}: no such command on PATH")
        return Path(found)
    path = Path(value)
    if not path.exists():
        raise click.BadParameter(f"{value}: no such file")
    if path.is_dir():
        raise click.BadParameter(f"{value}: a directory, not an interpreter")
    return path


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
            metavar="VERSION|REF|PATH",
            help=f"{verb} under this MLX release, in its cached environment (installed on first use), "
            "or under a commit (a hash, a tag, or a branch such as main: its tip), built here "
            "once, or under the MLX work tree in directory PATH as it stands, uncommitted changes "
            "included (built once per set of changes). Not with --python.",
        )(decorated)
        decorated = click.option(
            "--python",
            "python",
            callback=interpreter,
            metavar="PATH|NAME",
            help=f"{verb} under this interpreter (another environment's MLX): a path, or a "
            "command name (python3.12) looked up on PATH.",
        )(decorated)
        return cast(F, decorated)

    return decorate


def _index_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from mgradcheck.index.urls import check_index_url  # light: no index machinery

    try:
        return check_index_url(value)
    except ReleaseError as exc:
        raise click.BadParameter(str(exc)) from None


def requirements(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """Each ``--with`` a PEP 508 requirement, refused here: the installer never reads a string
    that could pass for one of its options, and a typo costs no environment."""
    if not values:
        return ()  # a plain run imports none of packaging's parsers
    from packaging.requirements import InvalidRequirement, Requirement

    checked = []
    for value in values:
        try:
            checked.append(str(Requirement(value)))
        except InvalidRequirement:
            raise click.BadParameter(
                f"{value!r} is not a requirement (name[extras] specifiers)"
            ) from None
    return tuple(checked)


# Passed by interpreter_options to release_options: nothing is installed, settings are None.
_NO_RELEASE = "_no_release"
_RELEASE_KEYS = ("index_url", "find_links", "no_index", "backend", "installer", "pre", "yanked",
                 "retry_failed", "with")  # fmt: skip
_BUILD_KEYS = ("mlx_repo", "mlx_deps", "build_jobs")
_EXTRAS = [f"mlx[{BY_NAME[name].extra}]" for name in NAMES if BY_NAME[name].extra]


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
        given["extras"] = given.pop("with")  # a keyword in Python, a fine word on a command line
        given.update((key, kwargs.pop(key)) for key in _BUILD_KEYS if key in kwargs)
        if kwargs.pop(_NO_RELEASE, False):
            kwargs["settings"] = None
        else:
            from mgradcheck.releases.settings import Settings

            settings = Settings.from_options(**given)
            notice = settings.fallback() if given.get("installer") is None else None
            if notice is not None:
                say(notice)  # a progress status would cut it to the terminal's width, then erase it
            kwargs["settings"] = settings
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
            type=click.Choice(NAMES),
            help=f"Backend to install for: {', '.join(_EXTRAS[:-1])} or {_EXTRAS[-1]} on Linux "
            "(a CUDA build checks the NVIDIA driver first), plain mlx (metal) on macOS. "
            "Default: metal on macOS, cpu elsewhere.",
        ),
        click.option(
            "--installer",
            type=click.Choice(["uv", "pip"]),
            help="Build environments with uv (default when available) or venv + pip.",
        ),
        click.option(
            "--with",
            "with",
            multiple=True,
            callback=requirements,
            metavar="REQUIREMENT",
            help="Also install this in each release's environment (repeatable): what the "
            "tests import beside MLX, e.g. --with pytensor==2.38.3 --with pytest. Such "
            "environments, and their stored results, are apart from the plain ones.",
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


__all__ = [
    "BUILD_OPTIONS",
    "build_options",
    "interpreter_options",
    "release_options",
    "release_or_commit",
    "release_or_ref",
    "requirements",
    "version_option",
]
