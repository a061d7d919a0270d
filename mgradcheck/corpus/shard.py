"""Split the selected entries across CI jobs: ``run --shard K/N``.

Every job computes the same split from the same selection without talking to
the others, so the split must be a pure function of the entries: no clock, no
randomness, no order of discovery. Entries are balanced by cost (how many
child runs they need, since every child pays MLX's import), longest first,
each to the least loaded shard; ties are broken by id and shard number, so
with equal costs the shards' sizes differ by at most one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mgradcheck.corpus.entry import Entry

MAX_SHARDS = 100_000
_SHAPE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (from 1) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> ``Shard(2, 4)``; raise ValueError saying what is wrong."""
        match = _SHAPE.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not K/N (shard K of N, counting from 1, e.g. 1/4)")
        if len(match[1]) > 6 or len(match[2]) > 6:
            raise ValueError(f"{text!r}: at most {MAX_SHARDS} shards")
        index, count = int(match[1]), int(match[2])
        if count > MAX_SHARDS:
            raise ValueError(f"{text!r}: at most {MAX_SHARDS} shards")
        if count < 1:
            raise ValueError(f"{text!r}: the number of shards must be at least 1")
        if not 1 <= index <= count:
            raise ValueError(f"{text!r}: K must be between 1 and {count} (shards count from 1)")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def cost(entry: Entry, repeat: int | None = None) -> int:
    """The relative cost of an entry: its child runs."""
    return repeat or entry.repeat


def assign(entries: Sequence[Entry], count: int, repeat: int | None = None) -> dict[str, int]:
    """Entry id -> shard number (from 1): longest first to the least loaded shard."""
    loads = [0] * count
    placed: dict[str, int] = {}
    for entry in sorted(entries, key=lambda e: (-cost(e, repeat), e.id)):
        target = min(range(count), key=lambda i: (loads[i], i))
        loads[target] += cost(entry, repeat)
        placed[entry.id] = target + 1
    return placed


def select(entries: Sequence[Entry], shard: Shard, repeat: int | None = None) -> list[Entry]:
    """The entries of one shard, in their corpus order (possibly none)."""
    placed = assign(entries, shard.count, repeat)
    return [e for e in entries if placed[e.id] == shard.index]
