"""Split a selection across CI jobs: ``--shard K/N`` of ``run``, ``tests``, ``sweep`` and ``matrix``.

Every job computes the same split from the same selection without talking to
the others, so the split must be a pure function of the selection (and of the
durations file, the same in every job): no clock, no randomness, no order of
discovery. What is dealt is a :class:`Unit` (an entry, a test, a sweep
operation with its cases). Without recorded times, units are balanced by cost
(child runs, since every child pays MLX's import), longest first, each to the
least loaded shard. With ``--durations``, as PyTorch's ``run_test.py`` and
pytest-split do, units with a recorded time go slowest first to the shard with
the least time so far, and units with none are dealt round-robin. Ties go by
key and shard number, so with equal costs the shards' sizes differ by at most one.

Each job records a fingerprint of the selection and of the whole split in its
report; ``report merge`` refuses shards whose fingerprints differ (another
corpus, other options, another durations file), since their union would miss
or repeat items.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_SHARDS = 100_000
_SHAPE = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
DURATIONS_BYTES = 64 << 20  # a durations file of a million tests is a few tens of MiB


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (from 1) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> ``Shard(2, 4)``; raise ValueError saying what is wrong."""
        match = _SHAPE.fullmatch(text)
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


@dataclass(frozen=True)
class Unit:
    """What is dealt to one shard whole: ``key``, its cost without recorded times, and the ids
    whose recorded times add up to its own (``members``; by default the key alone)."""

    key: str
    cost: float = 1.0
    members: tuple[str, ...] = ()

    def seconds(self, durations: Mapping[str, float]) -> float | None:
        """Its recorded time: the sum of its members', or None unless every one is recorded."""
        times = [durations.get(m) for m in self.members or (self.key,)]
        return None if any(t is None for t in times) else sum(t for t in times if t is not None)


def deal(
    units: Sequence[Unit], count: int, durations: Mapping[str, float] | None = None
) -> dict[str, int]:
    """Unit key -> shard number (from 1); see the module's docstring for the rule."""
    loads = [0.0] * count
    placed: dict[str, int] = {}

    def to_least_loaded(key: str, weight: float) -> None:
        target = min(range(count), key=lambda i: (loads[i], i))
        loads[target] += weight
        placed[key] = target + 1

    if durations is None:
        for unit in sorted(units, key=lambda u: (-u.cost, u.key)):
            to_least_loaded(unit.key, unit.cost)
        return placed
    timed = {u.key: s for u in units if (s := u.seconds(durations)) is not None}
    for key in sorted(timed, key=lambda k: (-timed[k], k)):
        to_least_loaded(key, timed[key])
    untimed = sorted(u.key for u in units if u.key not in timed)
    for i, key in enumerate(untimed):
        placed[key] = i % count + 1
    return placed


def fingerprint(identity: Sequence[str], placed: Mapping[str, int]) -> str:
    """A short hash of a selection (``identity``: what defines each item, in order) and its split."""
    text = json.dumps([list(identity), sorted(placed.items())], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Split:
    """One shard's part of a selection, and what its report records about it."""

    units: frozenset[str]  # the keys of the units dealt to this shard
    meta: dict[str, Any]


def split(
    shard: Shard,
    units: Sequence[Unit],
    items: Sequence[tuple[str, str]],
    identity: Sequence[str],
    durations: Mapping[str, float] | None = None,
) -> Split:
    """Deal ``units`` and take this shard's.

    ``items`` is the whole selection in order, each item's id with its unit's key (an entry
    is its own unit; a sweep case's unit is its operation); ``identity`` is what defines
    the selection (ids, content hashes, options), fingerprinted with the split. The meta
    records the shard, the fingerprint and size, and where each of this shard's items
    stands in the whole selection, so that a merge restores the unsharded order.
    """
    placed = deal(units, shard.count, durations)
    positions = {item: i for i, (item, unit) in enumerate(items) if placed[unit] == shard.index}
    selection = {"fingerprint": fingerprint(identity, placed), "size": len(items),
                 "positions": positions}  # fmt: skip
    mine = frozenset(key for key, index in placed.items() if index == shard.index)
    return Split(mine, {"shard": str(shard), "selection": selection})


def load_durations(path: Path) -> dict[str, float]:
    """A JSON object of id -> seconds (``report durations`` writes one; pytest-split's
    ``.test_durations`` is one); ValueError naming the file on anything else."""
    try:
        with Path(path).open("rb") as f:
            raw = f.read(DURATIONS_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the durations: {exc.strerror or exc}") from None
    if len(raw) > DURATIONS_BYTES:
        raise ValueError(f"{path}: not a durations file (over {DURATIONS_BYTES >> 20} MiB)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not a durations file: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a durations file: not a JSON object of id -> seconds")
    seconds = {}
    for key, value in data.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        try:
            seconds[str(key)] = float(value) if number else math.nan
        except OverflowError:  # an integer of hundreds of digits: no float holds it
            seconds[str(key)] = math.inf
        if not math.isfinite(seconds[str(key)]) or seconds[str(key)] < 0:
            raise ValueError(
                f"{path}: not a durations file: {key!r} -> {reprlib.repr(value)} "
                "is not a number of seconds"
            )
    return seconds
