"""``sweep --shard``: what is dealt, how the shards' reports merge, their durations and summary.

The unit dealt is an operation with all its cases and dtypes: findings are
grouped by operation (one group per probable bug, shrunk and emitted once), so
a shard that holds every run of an operation finds, shrinks and confirms
exactly what the unsharded sweep does for it. The merge puts the results back
in the order of the unsharded plan and the findings in the order the
unsharded grouping gives them (by their first run), so the merged report is the
unsharded one: the same cases, results and findings.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from mgradcheck import __version__
from mgradcheck.corpus.shard import Unit
from mgradcheck.reports.joined import check_shards, positions, sharded
from mgradcheck.reports.json_report import check_schema
from mgradcheck.reports.markdown import GITHUB_LIMIT, cell
from mgradcheck.run.observation import Environment
from mgradcheck.sweep.case_runs import Status, Task
from mgradcheck.sweep.pipeline import SCHEMA, SCHEMA_VERSION
from mgradcheck.wording import count


def units(tasks: Sequence[Task]) -> list[Unit]:
    """One unit per operation: its runs are its cost, its cases' recorded times its time."""
    runs: Counter[str] = Counter(t.case.op for t in tasks)
    cases: dict[str, dict[str, None]] = defaultdict(dict)
    for task in tasks:
        cases[task.case.op][task.case.id] = None
    return [Unit(op, runs[op], tuple(cases[op])) for op in runs]


def items(tasks: Sequence[Task]) -> list[tuple[str, str]]:
    """Each run of the plan, in order, with the operation it is dealt with."""
    return [(t.key, t.case.op) for t in tasks]


def identity(tasks: Sequence[Task]) -> list[str]:
    """What defines the plan: every run's spec (function, inputs, dtype, seed, points, checks)."""
    return [f"{t.key} {json.dumps(dict(t.spec), sort_keys=True)}" for t in tasks]


def _check(data: Mapping[str, Any], name: str) -> None:
    check_schema(data, name, SCHEMA, SCHEMA_VERSION, "sweep report")


def _label(data: Mapping[str, Any], name: str) -> str:
    try:
        return Environment.from_json(data["environment"]).label
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{name}: not a valid sweep report (its environment: {exc!r})") from None


def _key(result: Mapping[str, Any]) -> str:
    return f"{result['case']}[{result['dtype']}]"  # as Task.key names a run


def merge(
    datas: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """The merged sweep report, and the shards missing from it (a shard or run given twice,
    shards of different plans, sweeps of different environments: ValueError)."""
    labels = []
    for data, name in zip(datas, names, strict=True):
        _check(data, name)
        labels.append(_label(data, name))
    for label, name in zip(labels, names, strict=True):
        if label != labels[0]:
            raise ValueError(
                f"{names[0]} and {name} are sweeps of different environments ({labels[0]} and "
                f"{label}): merge one environment's shards"
            )
    parts = [sharded(n, labels[0], d.get("meta") or {}) for d, n in zip(datas, names, strict=True)]
    missing = check_shards([p for p in parts if p is not None])
    rows: list[tuple[int, int, dict[str, Any]]] = []
    findings: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for data, name in zip(datas, names, strict=True):
        try:
            placed = positions(data.get("meta") or {})
            for result in data.get("results", []):
                key = _key(result)
                if key in seen:
                    raise ValueError(f"run {key} is in both {seen[key]} and {name}")
                seen[key] = name
                rows.append((placed.get(key, -1), len(rows), result))
            found = list(data.get("findings", []))
            for finding in found:
                iter(finding["cases"])  # each names its runs: KeyError or TypeError if not
            findings += found
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{name}: not a valid sweep report ({exc!r})") from None
    results = [result for _, _, result in sorted(rows, key=lambda row: row[:2])]
    # The unsharded grouping orders findings by their first run; a shard's keep their order.
    first = {_key(r): i for i, r in enumerate(results)}
    findings.sort(key=lambda f: min((first.get(str(k), len(first)) for k in f["cases"]), default=0))
    tally = Counter(str(r["status"]) for r in results)
    versions = sorted({str(d["mgradcheck"]) for d in datas if d.get("mgradcheck")})
    merged = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "mgradcheck": ", ".join(versions) or __version__,
        "environment": datas[0]["environment"],
        "cases": sum(int(d.get("cases", 0)) for d in datas),
        "seconds": max(float(d.get("seconds", 0)) for d in datas),  # the shards ran at once
        "budget": max(float(d.get("budget", 0)) for d in datas),
        "interrupted": any(bool(d.get("interrupted")) for d in datas),
        "counts": {s.label: tally[s.label] for s in Status},
        "findings": findings,
        "coverage": datas[0].get("coverage") if len(datas) == 1 else None,
        # Every shard drew the same calls (one seed, one release) and ran its share of them.
        "explored": datas[0].get("explored"),
        "meta": {
            "merged_by": __version__,
            "sources": [
                {
                    "name": name,
                    "shard": (d.get("meta") or {}).get("shard"),
                    "cases": d.get("cases"),
                    "seconds": d.get("seconds"),
                    "interrupted": d.get("interrupted"),
                }
                for d, name in zip(datas, names, strict=True)
            ],
        },
        "results": results,
    }
    return merged, missing


def durations(data: Mapping[str, Any]) -> dict[str, float]:
    """Case id -> the seconds of its runs, where the report records them (``seconds``), and
    of shrinking the findings it was the simplest failing case of (``shrink_seconds``): the
    shard that holds its operation finds and shrinks them."""
    found: dict[str, float] = defaultdict(float)
    for result in data.get("results", []):
        if isinstance(result.get("seconds"), (int, float)):
            found[str(result["case"])] += float(result["seconds"])
    for finding in data.get("findings", []):
        shrinking = finding.get("shrink_seconds")
        case = (finding.get("evidence") or {}).get("case")
        if isinstance(shrinking, (int, float)) and isinstance(case, str) and case in found:
            found[case] += float(shrinking)
    return dict(found)


def summary(data: Mapping[str, Any], limit: int = GITHUB_LIMIT) -> str:
    """A Markdown job summary of a sweep report: its counts, then each finding."""
    env = Environment.from_json(data["environment"])
    counts = ", ".join(f"{n} {label}" for label, n in data["counts"].items() if n)
    findings = data.get("findings", [])
    lines = [
        f"## mgradcheck: sweep on {cell(env.label)}",
        "",
        f"{count(int(data['cases']), 'catalogue case')}, "
        f"{count(len(data.get('results', [])), 'run')}: {counts or 'nothing ran'}; "
        f"**{count(len(findings), 'distinct finding')}**"
        + (" (interrupted)" if data.get("interrupted") else ""),
        "",
    ]
    if findings:
        lines += [
            "| finding | runs | in the corpus | confirmed | emitted |",
            "|---|---|---|---|---|",
        ]
    size = sum(len(line.encode("utf-8")) + 1 for line in lines)
    for shown, finding in enumerate(findings):
        confirmed = {True: "reproduces", False: "**did not reproduce**", None: ""}
        known = str(finding.get("known") or "")
        corpus = (
            f"by design: `{known}`"
            if finding.get("by_design")
            else (f"`{known}`" if known else "new")
        )
        row = (
            f"| {cell(str(finding['title']))} | {len(finding['cases'])} | {cell(corpus)} | "
            f"{confirmed.get(finding.get('reproduced'), '')} | {cell(finding.get('emitted') or '')} |"
        )
        if size + len(row.encode("utf-8")) + 200 > limit:
            lines.append(f"\n_{len(findings) - shown} more findings are in the JSON report._")
            break
        lines.append(row)
        size += len(row.encode("utf-8")) + 1
    not_run = data["counts"].get(Status.NOT_RUN.label, 0)
    if not_run:
        lines += ["", f"{count(not_run, 'run')} not started (the budget ran out, or interrupted)."]
    return "\n".join(lines) + "\n"
