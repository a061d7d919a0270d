"""``mgradcheck list``, ``show`` and ``validate``: the corpus itself, nothing run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from mgradcheck.cli.common import CORPUS_OPTION, handle_errors


@click.command(name="list")
@handle_errors
@CORPUS_OPTION
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag.")
def list_(corpus_paths: Sequence[Path], tags: Sequence[str]) -> None:
    """List the corpus entries: id, expected signature, fix release, title."""
    from mgradcheck.run import stages
    from mgradcheck.run.display import printable

    entries = stages.load_corpus(corpus_paths)
    for e in entries:
        if not all(t in e.tags for t in tags):
            continue
        fixed = sorted({str(v) for v in e.bug.fixed_in.values() if v is not None})
        status = "fixed in " + "/".join(fixed) if fixed else ("open" if e.bug.affects else "guard")
        if e.upstream.report is None:
            status += ", unreported"
        click.echo(f"{e.id:<32} {status:<16} {printable(e.title)}")


@click.command()
@handle_errors
@click.argument("entry_id")
@CORPUS_OPTION
def show(entry_id: str, corpus_paths: Sequence[Path]) -> None:
    """Explain one entry: the bug, its links, its code, its last known status."""
    from mgradcheck.reports.show import render
    from mgradcheck.run import stages

    (entry,) = stages.select(stages.load_corpus(corpus_paths), [entry_id])
    click.echo(render(entry))


@click.command()
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
    click.echo(f"{len(entries)} entries valid")
