"""Merge the reports of many jobs (shards, backends, MLX releases) into one.

Each result keeps the environment it ran in, so one merged report can hold
the same entry on CPU and on Metal. Merging refuses what it cannot merge
honestly: files of different schema versions, and the same entry twice in the
same environment (overlapping shards, or a file given twice), and a corpus
report with a report of a suite's tests (verdicts and outcomes do not add up).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

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


def merge(reports: Sequence[Report], names: Sequence[str] = ()) -> Report:
    """One report holding every result of ``reports`` (named ``names`` in messages and meta)."""
    names = list(names) or [f"report {i + 1}" for i in range(len(reports))]
    results: list[EntryResult] = []
    first_seen: dict[tuple[str | None, ...], str] = {}
    environments: list[Environment] = []
    for report, name in zip(reports, names, strict=True):
        for env in report.environments:
            if env not in environments:
                environments.append(env)
        for result in report.results:
            key = (result.id, *_where(result.environment))
            if key in first_seen:
                raise ValueError(
                    f"entry {result.id!r} on {result.environment.label} is in both {first_seen[key]} "
                    f"and {name} (overlapping shards, or a file given twice?)"
                )
            first_seen[key] = name
            results.append(result)
            if result.environment not in environments:
                environments.append(result.environment)
    if len({r.judged for r in reports if r.results}) > 1:
        raise ValueError(
            "cannot merge a report of corpus entries with a report of a suite's tests: "
            "one counts verdicts, the other outcomes"
        )
    versions = sorted({r.mgradcheck for r in reports if r.mgradcheck})
    return Report(
        results=tuple(results),
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
                    "environments": [e.label for e in r.environments],
                }
                for r, name in zip(reports, names, strict=True)
            ],
        },
    )


def missing_shards(reports: Sequence[Report]) -> list[str]:
    """Shards absent from a set of sharded reports, per environment: ``"mlx 0.32.4 cpu ...: 2/3"``."""
    seen: dict[tuple[str, int], set[int]] = defaultdict(set)
    for report in reports:
        try:
            shard = Shard.parse(str(report.meta.get("shard")))
        except ValueError:
            continue  # not a sharded run
        for env in report.environments:
            seen[(env.label, shard.count)].add(shard.index)
    return [
        f"{label}: {i}/{count}"
        for (label, count), have in sorted(seen.items())
        for i in range(1, count + 1)
        if i not in have
    ]
