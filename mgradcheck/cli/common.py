"""What every ``mgradcheck`` command shares: its messages, and the one error and interrupt path.

The command modules import this, never :mod:`mgradcheck.cli`, which imports them. The options
they share are in :mod:`~mgradcheck.cli.options` and :mod:`~mgradcheck.cli.release_options`;
the interpreter the children run under is opened by :mod:`~mgradcheck.cli.target`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from functools import wraps
from typing import IO, Any, NoReturn, TypeVar

import click

from mgradcheck.errors import MgradcheckError
from mgradcheck.exitcodes import ExitCode

F = TypeVar("F", bound=Callable[..., Any])


def say(message: str) -> None:
    """One line to the user on stderr, with the program's name, as every message is given."""
    click.echo(f"mgradcheck: {message}", err=True)


def fail(message: str, code: int = ExitCode.USAGE) -> NoReturn:
    say(f"error: {message}")
    sys.exit(code)


@contextlib.contextmanager
def reader_may_leave(stream: IO[str]) -> Iterator[None]:
    """For what a command shows once its work is done: when the reader of ``stream`` goes away
    (``| head``, ``| true``), the rest goes nowhere, and the command's exit status stands."""
    try:
        yield
    except BrokenPipeError:
        from mgradcheck.atomic import send_nowhere  # only once a pipe broke

        send_nowhere(stream)


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


__all__ = [
    "F",
    "fail",
    "handle_errors",
    "say",
]
