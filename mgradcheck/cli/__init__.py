"""The ``mgradcheck`` command line: thin Click commands over the stage functions.

One module per command group; imports are kept lazy so that ``mgradcheck
--help`` and ``mgradcheck list`` start without loading MLX, NumPy or Rich.
"""

from __future__ import annotations

import sys

import click

from mgradcheck import __version__
from mgradcheck.cli.common import fail, say
from mgradcheck.cli.completion import completion
from mgradcheck.cli.corpus import list_, schema, show, validate
from mgradcheck.cli.envs import envs
from mgradcheck.cli.new import new
from mgradcheck.cli.releases import bisect, matrix
from mgradcheck.cli.report import badge, report
from mgradcheck.cli.run import run
from mgradcheck.cli.sweep import sweep
from mgradcheck.cli.tests import tests
from mgradcheck.exitcodes import ExitCode


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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


for command in (
    run,
    tests,
    list_,
    show,
    validate,
    new,
    report,
    badge,
    envs,
    bisect,
    matrix,
    sweep,
    schema,
    completion,
):
    cli.add_command(command)


def main() -> None:
    """Run the command line; a Ctrl-C before a command has started still exits 130, quietly.

    Click's own errors (a bad option value, an unknown command) are given as
    every other error is: ``mgradcheck: error: ...``, exit status 2.
    """
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
