"""The ``mgradcheck`` command line: thin Click commands over the stage functions.

One module per command group; imports are kept lazy so that ``mgradcheck
--help`` and ``mgradcheck list`` start without loading MLX, NumPy or Rich.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping

import click

from mgradcheck import __version__
from mgradcheck.cli.common import fail, say
from mgradcheck.exitcodes import ExitCode

# Each command, by name, and where it is defined, in the order they were added.
COMMANDS = {
    "run": "mgradcheck.cli.run:run",
    "tests": "mgradcheck.cli.tests:tests",
    "list": "mgradcheck.cli.corpus:list_",
    "show": "mgradcheck.cli.corpus:show",
    "validate": "mgradcheck.cli.corpus:validate",
    "new": "mgradcheck.cli.new:new",
    "report": "mgradcheck.cli.report:report",
    "badge": "mgradcheck.cli.report:badge",
    "envs": "mgradcheck.cli.envs:envs",
    "bisect": "mgradcheck.cli.releases:bisect",
    "matrix": "mgradcheck.cli.releases:matrix",
    "sweep": "mgradcheck.cli.sweep:sweep",
    "schema": "mgradcheck.cli.corpus:schema",
    "completion": "mgradcheck.cli.completion:completion",
}


class Commands(MutableMapping[str, click.Command]):
    """The group's commands, each module imported when its command is first looked up.

    Click lists a group's commands by its mapping's names and finds one with ``get``: a
    ``run`` imports none of the other commands' modules, while
    ``--help``, completion and whatever reads ``cli.commands`` see every command.
    """

    def __init__(self, where: dict[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, _, attribute = self._where[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where.setdefault(name, "")
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, commands=Commands(COMMANDS))
@click.version_option(__version__, prog_name="mgradcheck")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Run the corpus of known MLX autodiff and mx.compile bugs, each in its own process.

    Defaults of --corpus, -j, --timeout and run's report files come from
    [tool.mgradcheck] in the nearest pyproject.toml; the command line wins.

    \b
    Exit status: 0 every verdict as expected, 1 an unexpected verdict,
    2 bad usage or corpus, 3 an environment that cannot be made or used,
    4 an mgradcheck bug, 130 interrupted (143 on SIGTERM).
    """
    from mgradcheck.cli.config import defaults
    from mgradcheck.errors import UsageError

    try:
        ctx.default_map = defaults(cli)  # read before the command's options are parsed
    except UsageError as exc:
        fail(str(exc))


def main() -> None:
    """Run the command line; a Ctrl-C before a command has started still exits 130, quietly.

    Click's own errors (a bad option value, an unknown command) are given as
    every other error is: ``mgradcheck: error: ...``, exit status 2.
    """
    from mgradcheck.run.display import drop_bad_terminal_sizes

    drop_bad_terminal_sizes()
    try:
        os.getcwd()
    except OSError as exc:
        # Every command reads relative paths, pyproject.toml and its defaults from here.
        say(f"error: the working directory is gone ({exc.strerror}): cd to one that exists")
        sys.exit(ExitCode.USAGE)
    try:
        code = cli.main(prog_name="mgradcheck", standalone_mode=False)
    except click.ClickException as exc:
        say(f"error: {exc.format_message()}")
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            say(f"see '{exc.ctx.command_path} --help'")
        sys.exit(ExitCode.USAGE)
    except (click.Abort, KeyboardInterrupt):
        say("interrupted by SIGINT")
        sys.exit(ExitCode.INTERRUPTED)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)


if __name__ == "__main__":
    main()
