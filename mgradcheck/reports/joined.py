"""The reports of many jobs (shards, backends, MLX releases) joined into one.

Each result keeps the environment it ran in, so one merged report can hold
the same entry on CPU and on Metal. Merging refuses what it cannot merge
honestly: files of different schema versions, and the same entry twice in the
same environment (overlapping shards, or a file given twice), and a corpus
report with a report of a suite's tests (verdicts and outcomes do not add up).

Shards are checked as lit and PyTorch cannot (they never merge): within one
run's shards (those of one environment), a shard given twice and shards of
different selections (their fingerprints differ: another corpus, other options,
another durations file) are refused, and a missing shard is named. The merged
results stand in the order of the unsharded selection, environment by
environment. :func:`check_shards` does the same for the sweep's and the
matrix's reports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck import __version__
from mgradcheck.corpus.shard import Shard
from mgradcheck.reports import json_report
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report


def read(paths: Sequence[Path]) -> list[Report]:
    """Read report files for merging; ValueError on any unreadable file or mixed schema versions."""
    raw = [(path, json_report.load(path)) for path in paths]
    versions: dict[str, list[str]] = defaultdict(list)
    for path, data in raw:
        versions[repr(data.get("schema_version"))].append(str(path))
    if len(versions) > 1:
        listing = "; ".join(f"version {v}: {', '.join(files)}" for v, files in versions.items())
        raise ValueError(
            f"cannot merge reports of different schema versions ({listing}); "
            "write them all with one mgradcheck release"
        )
    return [json_report.parse(data, path) for path, data in raw]


def _where(env: Environment) -> tuple[str | None, ...]:
    # What makes two runs of an entry different runs; the interpreter's path does not.
    return (env.mlx, env.backend, env.device, env.python, env.platform)


@dataclass(frozen=True)
class Sharded:
    """One report's place in a sharded run: ``group`` names the run (its environment, say)."""

    name: str
    group: str
    shard: Shard
    fingerprint: str | None  # None: written before selections were fingerprinted


def sharded(name: str, group: str, meta: Mapping[str, Any]) -> Sharded | None:
    """The shard a report's ``meta`` records (see :func:`~mgradcheck.corpus.shard.selection_meta`)."""
    try:
        shard = Shard.parse(str(meta.get("shard")))
    except ValueError:
        return None  # not a sharded run
    found = _selection(meta).get("fingerprint")
    return Sharded(name, group, shard, str(found) if found is not None else None)


def _selection(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    selection = meta.get("selection")
    return selection if isinstance(selection, dict) else {}


def positions(meta: Mapping[str, Any]) -> dict[str, int]:
    """Where each item of a sharded report stands in the whole selection (empty: unknown)."""
    found = _selection(meta).get("positions")
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}


def check_shards(parts: Sequence[Sharded]) -> list[str]:
    """Refuse (ValueError) a shard given twice or shards of different selections; return the
    missing shards of each run, named as ``"<group>: 2/3"``."""
    fingerprints: dict[str, dict[str, str]] = defaultdict(dict)
    seen: dict[tuple[str, int], dict[int, str]] = defaultdict(dict)
    for part in parts:
        if part.fingerprint is not None:
            others = fingerprints[part.group]
            if others and part.fingerprint not in others:
                fingerprint, first = next(iter(others.items()))
                raise ValueError(
                    f"{first} and {part.name} are shards of different selections ({part.group}: "
                    f"{fingerprint} and {part.fingerprint}); run every shard with the same "
                    "selection, options, mgradcheck and durations file"
                )
            others.setdefault(part.fingerprint, part.name)
        have = seen[(part.group, part.shard.count)]
        if part.shard.index in have:
            raise ValueError(
                f"shard {part.shard} of {part.group} is in both {have[part.shard.index]} "
                f"and {part.name}"
            )
        have[part.shard.index] = part.name
    return [
        f"{group}: {i}/{count}"
        for (group, count), have in sorted(seen.items())
        for i in range(1, count + 1)
        if i not in have
    ]


def _shards(reports: Sequence[Report], names: Sequence[str]) -> list[Sharded]:
    """Each sharded report once per environment it ran in (one, for a job's own report)."""
    parts = []
    for report, name in zip(reports, names, strict=True):
        for env in report.environments:
            part = sharded(name, env.label, report.meta)
            if part is not None:
                parts.append(part)
    return parts


def _names(reports: Sequence[Report], names: Sequence[str]) -> list[str]:
    return list(names) or [f"report {i + 1}" for i in range(len(reports))]


def merge(reports: Sequence[Report], names: Sequence[str] = ()) -> Report:
    """One report holding every result of ``reports`` (named ``names`` in messages and meta)."""
    names = _names(reports, names)
    check_shards(_shards(reports, names))
    results: list[EntryResult] = []
    order: list[tuple[int, int]] = []  # where each result stands within its report's selection
    first_seen: dict[tuple[str | None, ...], str] = {}
    environments: list[Environment] = []
    for report, name in zip(reports, names, strict=True):
        for env in report.environments:
            if env not in environments:
                environments.append(env)
        placed = positions(report.meta)
        for result in report.results:
            key = (result.id, *_where(result.environment))
            if key in first_seen:
                raise ValueError(
                    f"entry {result.id!r} on {result.environment.label} is in both {first_seen[key]} "
                    f"and {name} (overlapping shards, or a file given twice?)"
                )
            first_seen[key] = name
            results.append(result)
            order.append((placed.get(result.id, -1), len(order)))
            if result.environment not in environments:
                environments.append(result.environment)
    # Environment by environment, each in the order of its unsharded selection where known.
    ranks = sorted(
        range(len(results)),
        key=lambda i: (environments.index(results[i].environment), *order[i]),
    )
    if len({r.judged for r in reports if r.results}) > 1:
        raise ValueError(
            "cannot merge a report of corpus entries with a report of a suite's tests: "
            "one counts verdicts, the other outcomes"
        )
    versions = sorted({r.mgradcheck for r in reports if r.mgradcheck})
    return Report(
        results=tuple(results[i] for i in ranks),
        environments=tuple(environments),
        started=min((r.started for r in reports if r.started), default=""),
        finished=max((r.finished for r in reports if r.finished), default=""),
        interrupted=any(r.interrupted for r in reports),
        mgradcheck=", ".join(versions) or __version__,
        meta={
            "merged_by": __version__,
            "sources": [
                {
                    "name": name,
                    "entries": len(r.results),
                    "started": r.started,
                    "interrupted": r.interrupted,
                    "shard": r.meta.get("shard"),
                    "selection": _selection(r.meta).get("fingerprint"),
                    "environments": [e.label for e in r.environments],
                }
                for r, name in zip(reports, names, strict=True)
            ],
        },
    )


def missing_shards(reports: Sequence[Report], names: Sequence[str] = ()) -> list[str]:
    """Shards absent from a set of sharded reports, per environment: ``"mlx 0.32.4 cpu ...: 2/3"``."""
    return check_shards(_shards(reports, _names(reports, names)))
