"""What every ``mgradcheck`` command shares: error handling and common options.

The command modules import this, never :mod:`mgradcheck.cli`, which imports them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from mgradcheck.exitcodes import ExitCode

F = TypeVar("F", bound=Callable[..., Any])

CORPUS_OPTION = click.option(
    "--corpus",
    "corpus_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Corpus file or directory (repeatable). Default: the bundled corpus.",
)


def jobs_option(default: int, what: str) -> Callable[[F], F]:
    """-j/--jobs: how many children (or releases) run at once."""
    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1, 512),
        default=default,
        show_default=True,
        help=f"{what} at once.",
    )


def interpreter_options(verb: str) -> Callable[[F], F]:
    """--python and --mlx: which MLX the children run (checked by ``pipeline.choose_interpreter``)."""

    def decorate(func: F) -> F:
        func = click.option(
            "--mlx",
            "mlx_version",
            metavar="VERSION",
            help=f"{verb} under this MLX release, in its cached environment (installed on first use). Not with --python.",
        )(func)
        return click.option(
            "--python",
            "python",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help=f"{verb} under this interpreter (another environment's MLX).",
        )(func)

    return decorate


def report_options(func: F) -> F:
    """--junit, --summary and --badge: the report files every result-producing command writes."""
    options = [
        click.option(
            "--junit",
            "junit_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a JUnit XML report here.",
        ),
        click.option(
            "--summary",
            "summary_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a Markdown summary here. Default in GitHub Actions: append to $GITHUB_STEP_SUMMARY.",
        ),
        click.option(
            "--badge",
            "badge_path",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Write a status badge: FILE (.svg added if missing) and FILE's stem + .shields.json beside it.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def fail(message: str, code: int = ExitCode.USAGE) -> NoReturn:
    click.echo(f"mgradcheck: error: {message}", err=True)
    sys.exit(code)


def user_errors(func: F) -> F:
    """Print bad input as plain lines and exit 2; never a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mgradcheck.atomic import WriteError
        from mgradcheck.loader import CorpusError
        from mgradcheck.pipeline import UsageError

        try:
            return func(*args, **kwargs)
        except CorpusError as exc:
            for problem in exc.problems:
                click.echo(f"mgradcheck: error: {problem}", err=True)
            sys.exit(ExitCode.USAGE)
        except (UsageError, WriteError) as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]
