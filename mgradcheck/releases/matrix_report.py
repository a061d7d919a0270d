"""A matrix as its reports hold it: what its table shows, its JSON read back, and the JSON of
``matrix --shard`` (and ``tests --matrix --shard``) jobs joined and timed.

What the report shows (:class:`~mgradcheck.reports.matrix.MatrixView`) is judged here, above
the report: which cells are a flip or unknown, how an entry that never flips is summed up,
and what the corpus records about a flip.

A sharded matrix deals the entries (or tests), each shard running its own on
every release, so a merge is the shards' entries side by side, in the order of
the unsharded selection; each entry's flips are its own and carry over. Shards
that ran on different releases (one listed the index before a release came
out, another after) are refused, as are shards of different selections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck import __version__
from mgradcheck.backends import family
from mgradcheck.corpus.entry import Entry
from mgradcheck.releases.regress import Judged, RegressOn, State, recorded
from mgradcheck.releases.release_matrix import SCHEMA, SCHEMA_VERSION, Flip, Matrix
from mgradcheck.releases.store import Runnable
from mgradcheck.reports.joined import check_shards, positions, sharded
from mgradcheck.reports.json_report import check_schema
from mgradcheck.reports.matrix import Cell, FlipLine, Item, MatrixView


def matrix_view(matrix: Matrix) -> MatrixView:
    """The report's values: every entry's cells on every release, and its flips worded."""
    return MatrixView(
        matrix.target,
        matrix.regress_on.meaning,
        tuple(str(v) for v in matrix.versions),
        tuple(_item(matrix, entry) for entry in matrix.entries),
        matrix.interrupted,
    )


def _item(matrix: Matrix, entry: Runnable) -> Item:
    flipped = matrix.flip_versions(entry.id)
    judged = {v: matrix.cell(entry.id, v) for v in matrix.versions}
    cells = tuple(
        Cell(
            "n/a" if cell.outcome == "unavailable" else cell.outcome,
            cell.state.colour,
            flip=version in flipped,
            unknown=cell.state is State.UNKNOWN,
            state=cell.state.label,
            reason=cell.reason,
            seconds=cell.seconds,
        )
        for version, cell in judged.items()
    )
    flips = tuple(
        FlipLine(flip.sentence(), flip.compare_url, _recorded(matrix, entry, flip), str(flip.after))
        for flip in matrix.flips(entry.id)
    )
    tags = entry.tags if isinstance(entry, Entry) else ()
    steady = "" if flips else _steady(judged.values())
    return Item(entry.id, cells, flips, steady, entry.title, tags)


def _steady(cells: Iterable[Judged]) -> str:
    """An entry that never flips, summed up."""
    states = {cell.state for cell in cells} - {State.UNKNOWN}
    return states.pop().label + " on every release judged" if len(states) == 1 else "nothing judged"


def _recorded(matrix: Matrix, entry: Runnable, flip: Flip) -> str:
    """The corpus's record of this flip, as a note after it: the fix or the introduction."""
    if matrix.regress_on is not RegressOn.SIGNATURE or not isinstance(entry, Entry):
        return ""
    found = recorded(entry, family(matrix.backend), flip.now is State.GOOD, flip.before, flip.after)
    if found is None:
        return ""
    change = entry.bug.fixed_by if flip.now is State.GOOD else entry.bug.introduced_by
    by = f", by {change.describe()}" if change is not None and found.agrees else ""
    return (
        f" (corpus: {found.key} {found.version}{by}{'' if found.agrees else ', which disagrees'})"
    )


__all__ = ["matrix_view"]


@dataclass(frozen=True)
class Row:
    """An entry (or test) of a matrix read back from its JSON: what the renderers need of it."""

    id: str
    title: str
    content_hash: str


def _check(data: Mapping[str, Any], name: str) -> None:
    check_schema(data, name, SCHEMA, SCHEMA_VERSION, "matrix")


def _same(datas: Sequence[Mapping[str, Any]], names: Sequence[str], key: str, what: str) -> None:
    first = datas[0].get(key)
    for data, name in zip(datas, names, strict=True):
        if data.get(key) != first:
            raise ValueError(
                f"{names[0]} and {name} are matrices of different {what} "
                f"({first} and {data.get(key)}): one matrix is one run's"
            )


def merge(
    datas: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """The merged matrix JSON, and the shards missing from it (a shard given twice, shards of
    different selections, releases, backends or meanings of bad: ValueError)."""
    for data, name in zip(datas, names, strict=True):
        read(data, name)  # each one whole and well formed before any is merged
    _same(datas, names, "backend", "backends")
    _same(datas, names, "regress_on", "meanings of bad (--regress-on)")
    _same(datas, names, "releases", "releases")
    parts = [
        sharded(name, str(data.get("target")), data.get("meta") or {})
        for data, name in zip(datas, names, strict=True)
    ]
    missing = check_shards([p for p in parts if p is not None])
    rows: list[tuple[int, int, dict[str, Any]]] = []
    seen: dict[str, str] = {}
    for data, name in zip(datas, names, strict=True):
        placed = positions(data.get("meta") or {})
        for entry in data.get("entries", []):
            if entry["id"] in seen:
                raise ValueError(f"{entry['id']!r} is in both {seen[entry['id']]} and {name}")
            seen[entry["id"]] = name
            rows.append((placed.get(entry["id"], -1), len(rows), entry))
    kinds = {(d.get("meta") or {}).get("kind") for d in datas} - {None}
    first = datas[0]
    merged = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "target": first.get("target"),
        "backend": first.get("backend"),
        "regress_on": first.get("regress_on"),
        "interrupted": any(bool(d.get("interrupted")) for d in datas),
        "releases": first.get("releases", []),
        "entries": [entry for _, _, entry in sorted(rows, key=lambda row: row[:2])],
        "meta": {
            **({"kind": kinds.pop()} if len(kinds) == 1 else {}),
            "merged_by": __version__,
            "sources": [
                {
                    "name": name,
                    "entries": len(d.get("entries", [])),
                    "shard": (d.get("meta") or {}).get("shard"),
                    "interrupted": d.get("interrupted"),
                }
                for d, name in zip(datas, names, strict=True)
            ],
        },
    }
    return merged, missing


def from_json(data: Mapping[str, Any]) -> Matrix:
    """A matrix read back from its JSON, for the renderers (no corpus: no recorded fix notes)."""
    versions = {text: Version(text) for text in data["releases"]}
    states = {s.label: s for s in State}
    cells: dict[tuple[str, Version], Judged] = {}
    entries = []
    for entry in data["entries"]:
        entries.append(Row(entry["id"], entry.get("title", ""), entry.get("content_hash", "")))
        for text, cell in entry["cells"].items():
            version = versions[text]
            cells[(entry["id"], version)] = Judged(
                version, states[cell["state"]], cell["outcome"], cell["reason"],
                bool(cell.get("cached")), cell.get("seconds"),
            )  # fmt: skip
    return Matrix(
        str(data["target"]),
        str(data["backend"]),
        RegressOn.from_label(data["regress_on"]),
        tuple(versions.values()),
        tuple(entries),
        cells,
        bool(data.get("interrupted")),
    )


def read(data: Mapping[str, Any], name: str) -> Matrix:
    """:func:`from_json`, with ValueError naming the file on anything malformed."""
    _check(data, name)
    try:
        return from_json(data)
    except (KeyError, TypeError, AttributeError, ValueError, InvalidVersion) as exc:
        raise ValueError(f"{name}: not a valid mgradcheck matrix ({exc!r})") from None


def durations(data: Mapping[str, Any]) -> dict[str, float]:
    """Entry id -> the seconds its runs took over every release (those with a recorded time)."""
    found: dict[str, float] = {}
    for entry in data.get("entries", []):
        times = [
            c["seconds"] for c in entry.get("cells", {}).values() if c.get("seconds") is not None
        ]
        if times:
            found[entry["id"]] = float(sum(times))
    return found
