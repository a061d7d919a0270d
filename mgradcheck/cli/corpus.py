"""``mgradcheck list``, ``show`` and ``validate``: the corpus itself, nothing run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from mgradcheck.cli.common import CORPUS_OPTION, ID_ARGUMENT, TAG_OPTION, handle_errors
from mgradcheck.corpus import BACKENDS
from mgradcheck.exitcodes import describe
from mgradcheck.wording import count


def backend_here() -> str:
    """The backend this machine's MLX runs on, read from what is installed (MLX is not imported)."""
    import sys
    from importlib import metadata

    for name in ("mlx-cuda-13", "mlx-cuda-12", "mlx-cuda"):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return "cuda"
    return "metal" if sys.platform == "darwin" else "cpu"


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
    type=click.Choice(BACKENDS),
    help="Show what the corpus expects on this backend. Default: the one installed here.",
)
def list_(corpus_paths: Sequence[Path], tags: Sequence[str], backend: str | None) -> None:
    """List the corpus entries: id, what the corpus expects on this backend, title."""
    from mgradcheck.run import stages
    from mgradcheck.run.display import printable

    backend = backend or backend_here()
    entries = stages.load_corpus(corpus_paths)
    if tags:
        entries = stages.select(entries, (), tags)
    rows = [
        (
            e.id,
            e.bug.expectation(backend) + (", unreported" if e.upstream.report is None else ""),
            e.title,
        )
        for e in entries
    ]
    id_width = max(len(entry_id) for entry_id, _, _ in rows)
    status_width = max(len(status) for _, status, _ in rows)
    for entry_id, status, title in rows:
        click.echo(f"{entry_id:<{id_width}}  {status:<{status_width}}  {printable(title)}")


@click.command(
    short_help="Explain one entry: bug, links, code, last status.",
    epilog=describe("shown", environment=False),
)
@handle_errors
@ID_ARGUMENT
@CORPUS_OPTION
def show(entry_id: str, corpus_paths: Sequence[Path]) -> None:
    """Explain one entry: the bug, its links, its code, its last known status."""
    from mgradcheck.reports.show import render
    from mgradcheck.run import stages

    (entry,) = stages.select(stages.load_corpus(corpus_paths), [entry_id])
    click.echo(render(entry))


@click.command(
    short_help="Check corpus files without running anything.",
    epilog=describe("every file valid", environment=False),
)
@handle_errors
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def validate(paths: Sequence[Path]) -> None:
    """Check corpus files (default: the bundled corpus) without running anything."""
    from mgradcheck.cli.common import say
    from mgradcheck.run import stages

    warnings: list[Exception] = []
    entries = stages.load_corpus(paths, warnings)
    for warning in warnings:
        say(f"warning: {warning}")
    click.echo(f"{count(len(entries), 'entry')} valid")


@click.command(
    short_help="Print the JSON Schema of corpus entries or of the JSON report.",
    epilog=describe("printed", environment=False),
)
@handle_errors
@click.argument("which", type=click.Choice(["entry", "report"]))
def schema(which: str) -> None:
    """Print the JSON Schema of a corpus entry (for editors: yaml-language-server) or of the JSON report.

    Both ship inside the package (mgradcheck/schemas/); 'mgradcheck validate'
    stays the authority on entries, and checks what a schema cannot.
    """
    from mgradcheck.schemas import schema_text

    click.echo(schema_text(which), nl=False)
