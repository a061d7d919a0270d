"""``mgradcheck list``, ``show`` and ``validate``: the corpus itself, nothing run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from mgradcheck.backends import NAMES, installed_family
from mgradcheck.cli.common import handle_errors, say
from mgradcheck.cli.options import CORPUS_OPTION, ID_ARGUMENT, TAG_OPTION
from mgradcheck.exitcodes import describe
from mgradcheck.wording import count

F = TypeVar("F", bound=Callable[..., Any])


def _optional_file(name: str, help: str) -> Callable[[F], F]:
    """--NAME [FILE]: as every command's --NAME FILE ('-': standard output), the FILE optional."""
    return click.option(
        f"--{name}",
        f"{name}_path",
        type=click.Path(path_type=Path),
        is_flag=False,
        flag_value="-",
        metavar="[FILE]",
        help=help,
    )


def _json_option(what: str) -> Callable[[F], F]:
    return _optional_file(
        "json",
        f"Write {what} as JSON to FILE; to standard output instead of the text when FILE is "
        "'-' or left out (then put --json after the other arguments, or give it '-').",
    )


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from mgradcheck.atomic import write_text
    from mgradcheck.reports.json_report import dumps

    if path == Path("-"):
        click.echo(dumps(data), nl=False)
    else:
        write_text(path, dumps(data))


def _check_writable(corpus_paths: Sequence[Path], *paths: Path | None) -> None:
    from mgradcheck.reports.outputs import check_writable_paths
    from mgradcheck.run import stages

    check_writable_paths(*paths, inputs=stages.corpus_inputs(corpus_paths))


def backend_here() -> str:
    """The backend this machine's MLX runs on, read from what is installed (MLX is not imported)."""
    import platform
    from importlib import metadata

    def installed(name: str) -> bool:
        try:
            return bool(metadata.version(name))
        except metadata.PackageNotFoundError:
            return False

    return installed_family(platform.system(), installed)


@click.command(
    name="list",
    short_help="List the entries and what each expects on this backend.",
    epilog=describe("listed", environment=False),
)
@handle_errors
@CORPUS_OPTION
@TAG_OPTION
@click.option(
    "--backend",
    type=click.Choice(NAMES),
    help="Show what the corpus expects on this backend (every CUDA build is cuda to the "
    "corpus). Default: the one installed here.",
)
@_json_option("the listing")
@_optional_file(
    "markdown",
    "Write the manual's corpus table to FILE: the entries grouped by subject, each with "
    "its report and where it stands on Linux by its evidence; to standard output instead of "
    "the text when FILE is '-' or left out.",
)
def list_(
    corpus_paths: Sequence[Path],
    tags: Sequence[str],
    backend: str | None,
    json_path: Path | None,
    markdown_path: Path | None,
) -> None:
    """List the corpus entries: id, what the corpus expects on this backend, title.

    The title wraps within the width ($COLUMNS, the terminal's, else 100), beside
    the rest while it has room, else below its id.
    """
    from mgradcheck.reports import listing
    from mgradcheck.run import stages
    from mgradcheck.run.display import output_width

    backend = backend or backend_here()
    entries = stages.load_corpus(corpus_paths, say=say)
    if tags:
        entries = stages.select(entries, (), tags)
    if json_path is not None or markdown_path is not None:
        _check_writable(corpus_paths, json_path, markdown_path)
    if json_path is not None:
        _write_json(json_path, listing.to_json(entries, backend))
    if markdown_path is not None:
        from mgradcheck.atomic import write_text
        from mgradcheck.reports import corpus_table

        write_text(markdown_path, corpus_table.render(entries))
    if Path("-") in (json_path, markdown_path):
        return
    click.echo(listing.render(entries, backend, output_width()))


@click.command(
    short_help="Explain one entry: bug, links, code, last status.",
    epilog=describe("shown", environment=False),
)
@handle_errors
@ID_ARGUMENT
@CORPUS_OPTION
@_json_option("the entry")
def show(entry_id: str, corpus_paths: Sequence[Path], json_path: Path | None) -> None:
    """Explain one entry: the bug, its links, its code, its last known status."""
    from mgradcheck.reports.show import render, to_json
    from mgradcheck.run import stages
    from mgradcheck.run.display import output_width

    (entry,) = stages.load_selected(corpus_paths, [entry_id], say=say)
    if json_path is not None:
        _check_writable(corpus_paths, json_path)
        _write_json(json_path, to_json(entry))
        if json_path == Path("-"):
            return
    click.echo(render(entry, output_width()))


@click.command(
    short_help="Check corpus files without running anything.",
    epilog=describe("every file valid", environment=False),
)
@handle_errors
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@CORPUS_OPTION
def validate(paths: Sequence[Path], corpus_paths: Sequence[Path]) -> None:
    """Check corpus files (PATHS and --corpus alike; default: as --corpus) without running anything."""
    from mgradcheck.run import stages

    source = click.get_current_context().get_parameter_source("corpus_paths")
    if paths and source is not click.core.ParameterSource.COMMANDLINE:
        corpus_paths = ()  # PATHS given: a default corpus (from pyproject.toml) is not checked too
    warnings: list[Exception] = []
    entries = stages.load_corpus([*paths, *corpus_paths], warnings, say=say)
    for warning in warnings:
        say(f"warning: {warning}")
    click.echo(f"{count(len(entries), 'entry')} valid")


@click.command(
    short_help="Print the JSON Schema of corpus entries or of a JSON output.",
    epilog=describe("printed", environment=False),
)
@handle_errors
@click.argument("which", type=click.Choice(["entry", "report", "list", "show"]))
def schema(which: str) -> None:
    """Print the JSON Schema of a corpus entry (for editors: yaml-language-server), of the JSON
    report, or of what 'list --json' and 'show --json' write.

    All ship inside the package (mgradcheck/schemas/); 'mgradcheck validate'
    stays the authority on entries, and checks what a schema cannot.
    """
    from mgradcheck.schemas import schema_text

    click.echo(schema_text(which), nl=False)
