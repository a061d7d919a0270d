"""``--shard K/N`` and ``--durations FILE``: how ``run``, ``tests``, ``sweep`` and ``matrix`` split
their selection across CI jobs (the dealing itself is :mod:`mgradcheck.corpus.shard`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from mgradcheck.errors import UsageError

if TYPE_CHECKING:
    from mgradcheck.corpus.shard import Shard, Split, Unit

F = TypeVar("F", bound=Callable[..., Any])


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
    """Parse ``--shard K/N``, or say what is wrong."""
    if value is None:
        return None
    from mgradcheck.corpus.shard import Shard

    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def shard_options(what: str) -> Callable[[F], F]:
    """``--shard`` and ``--durations``, saying ``what`` is dealt ("entries", "tests"...)."""

    def decorate(func: F) -> F:
        func = click.option(
            "--durations",
            "durations_path",
            type=click.Path(dir_okay=False, path_type=Path),
            metavar="FILE",
            help=f"With --shard: deal the {what} by the seconds recorded in FILE (a JSON object "
            "of id -> seconds, as 'mgradcheck report durations' writes it), slowest first to "
            "the least-loaded shard, those with no time round-robin.",
        )(func)
        return click.option(
            "--shard",
            callback=_shard,
            metavar="K/N",
            help=f"Run only shard K of N (from 1): the same split of the {what} in every job, "
            "balanced by runs (or by --durations); 'report merge' joins the shards' reports.",
        )(func)

    return decorate


def this_shard(
    shard: Shard | None,
    durations_path: Path | None,
    selection: Callable[[], tuple[Sequence[Unit], Sequence[tuple[str, str]], Sequence[str]]],
) -> Split | None:
    """This job's part of the selection (see :func:`mgradcheck.corpus.shard.split`), or None
    when not sharded; a bad durations file is bad usage, in one line naming it.

    ``selection`` gives the units, items and identity to deal, and is called only when
    sharded: the identity hashes every entry, which an unsharded run has no use for."""
    if shard is None:
        if durations_path is not None:
            raise UsageError("--durations goes with --shard")
        return None
    from mgradcheck.corpus.shard import load_durations, split

    durations = None
    if durations_path is not None:
        try:
            durations = load_durations(durations_path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return split(shard, *selection(), durations)


class Dealt(Protocol):
    """What ``run``, ``tests`` and ``matrix`` deal: an entry or a test, known by its content."""

    @property
    def id(self) -> str: ...

    @property
    def content_hash(self) -> str: ...


D = TypeVar("D", bound=Dealt)


def shard_items(
    shard: Shard | None,
    durations_path: Path | None,
    items: Sequence[D],
    runs: Callable[[D], int] | None = None,
) -> tuple[list[D], dict[str, Any]]:
    """This job's items, in order (all of them when not sharded), and what its report records
    of the split (see :func:`this_shard`). Each item is dealt whole, weighed by its ``runs``
    (by default one), and identified by its content."""
    part = this_shard(shard, durations_path, lambda: _dealt(items, runs))
    if part is None:
        return list(items), {}
    return [i for i in items if i.id in part.units], part.meta


def _dealt(
    items: Sequence[D], runs: Callable[[D], int] | None
) -> tuple[list[Unit], list[tuple[str, str]], list[str]]:
    from mgradcheck.corpus.shard import Unit

    units = [Unit(i.id, runs(i) if runs is not None else 1) for i in items]
    return units, [(i.id, i.id) for i in items], [f"{i.id} {i.content_hash}" for i in items]
