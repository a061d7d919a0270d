"""``mgradcheck new``: a reproducer script becomes a corpus entry, judged on real releases.

Thin: the work is :func:`mgradcheck.releases.entry_from_script.make`; every option is
checked, and the entry's file and id too, before any release is installed.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.options import jobs_option
from mgradcheck.cli.release_options import release_options, version_option
from mgradcheck.exitcodes import ExitCode, describe

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.releases.settings import Settings


def _versions(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> list[Version]:
    return [v for value in values if (v := version_option(ctx, param, value)) is not None]


@click.command(epilog=describe("the entry written (a script that shows no bug is 2)"))
@handle_errors
@click.argument("script", type=click.Path(path_type=Path))
@click.option(
    "--id", "entry_id", metavar="ID", help="The entry's id (default: from SCRIPT's name)."
)
@click.option(
    "--issue",
    metavar="URL",
    help="The upstream report (https://); without it the entry is marked unreported.",
)
@click.option(
    "--expect",
    metavar="TEXT",
    help="For a script that shows its bug by printing a wrong value: what it prints when the "
    "bug is absent (numbers compared within tolerance).",
)
@click.option(
    "--corpus",
    "corpus_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The corpus directory the entry joins. Default: the corpus run and list read, "
    "./corpus here or in the nearest parent (up to the repository's root); else ./corpus, made.",
)
@click.option("--force", is_flag=True, help="Overwrite an entry file of the same name.")
@click.option(
    "--versions",
    "version_range",
    metavar="RANGE",
    help="Every release in this range, e.g. '>=0.29'. Default: the newest of each minor "
    "series, then a bisect where the outcome flips.",
)
@click.option(
    "--mlx",
    "exact",
    multiple=True,
    callback=_versions,
    metavar="VERSION",
    help="Only this release (repeatable), instead of a range.",
)
@click.option(
    "--requires-mlx",
    metavar="RANGE",
    help="Write requires.mlx: releases outside RANGE skip the entry. Default: none, as the "
    "releases tried say nothing of those not tried.",
)
@release_options
@jobs_option("How many releases run the reproducer at once.")
@click.option("--no-cache", is_flag=True, help="Run again instead of reusing stored results.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display (the result still prints).")
def new(
    script: Path,
    entry_id: str | None,
    issue: str | None,
    expect: str | None,
    corpus_dir: Path | None,
    force: bool,
    version_range: str | None,
    exact: Sequence[Version],
    requires_mlx: str | None,
    settings: Settings,
    jobs: int,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Make a corpus entry of a reproducer script.

    SCRIPT shows its bug by failing a check, raising, crashing or printing a
    wrong value (then give --expect). The script runs as the entry's code on the
    newest release of each minor series (or the releases chosen), in the
    release's cached environment, and is bisected where its outcome flips; what
    that installs, and its size, is said first. The bug's outcome and message, where it
    was introduced or fixed, and the evidence are filled in from what the runs
    showed, and the entry is validated and written to the corpus. What only a
    person can write (title, summary, a review of the oracle) is listed at the end.
    """
    import dataclasses

    from mgradcheck.corpus import scaffold
    from mgradcheck.corpus.files import local_corpus
    from mgradcheck.errors import UsageError
    from mgradcheck.index.installable import parse_range
    from mgradcheck.releases import entry_from_script, script_releases
    from mgradcheck.run.display import choose, known_width, printable
    from mgradcheck.run.stages import display_path
    from mgradcheck.wording import wrap

    if version_range and exact:
        raise UsageError("--versions and --mlx cannot be used together")
    if version_range:
        parse_range(version_range)
    if requires_mlx:
        requires_mlx = str(parse_range(requires_mlx))
    request = entry_from_script.Request(
        scaffold.read_script(script),
        scaffold.check_id(entry_id or scaffold.id_from(script)),
        # Named as the loader names its files; by default where run, list and validate look.
        Path(display_path(corpus_dir or local_corpus(Path.cwd()) or Path("corpus"))),
        scaffold.check_issue(issue),
        expect,
        force,
        requires_mlx,
    )
    entry_from_script.check_target(request)
    settings = dataclasses.replace(settings, use_cached=not no_cache)
    chosen = script_releases.choose(settings, version_range, exact)
    say(f"new: {chosen.cost(settings)}")
    result = entry_from_script.make(request, settings, chosen, jobs, choose(quiet))
    for cell in result.cells:
        reason = cell.reason.strip().splitlines()[0] if cell.reason.strip() else ""
        click.echo(
            printable(f"mlx {cell.version}: {cell.state.label}: {cell.outcome}: {reason}"[:200])
        )
    if result.interrupted:
        say("interrupted; nothing written (what finished is stored: run the command again)")
        sys.exit(ExitCode.for_signal(result.signum))
    made = not request.corpus.exists()
    entry_from_script.write(result, force)
    if made:
        where = "" if corpus_dir else f" in {Path.cwd()} (--corpus DIR for another)"
        click.echo(printable(f"made {request.corpus}/{where}"))
    bug = result.entry.bug
    flips = "; ".join(f.sentence() for f in result.flips) or "the same on every release judged"
    # Prose wraps between words at the terminal's width; the path and the commands stand
    # whole on lines of their own, so that a terminal's soft wrap never breaks what is copied.
    width = known_width(sys.stdout)
    click.echo(printable(f"wrote {result.path}"))
    say_all(wrap(f"{bug.signature_label()}; {flips}", width, "  ", first="  "))
    click.echo("Still to write by hand:")
    for line in result.todo:
        say_all(wrap(line, width, "    ", first="  - "))
    corpus = shlex.quote(str(request.corpus))
    found = local_corpus(Path.cwd())  # run finds it itself; else it must be named
    named = "" if found and found.resolve() == request.corpus.resolve() else f" --corpus {corpus}"
    click.echo("Then:")
    click.echo(f"  mgradcheck validate {corpus} && mgradcheck run {request.entry_id}{named}")


def say_all(lines: list[str]) -> None:
    from mgradcheck.run.display import printable

    for line in lines:
        click.echo(printable(line))
