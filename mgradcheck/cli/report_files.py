"""The files ``report merge`` and ``report durations`` read: each of the three kinds told
apart by its ``schema``, a sweep's and a matrix's merged, and any kind's durations.

A run's or a suite's report is merged by :mod:`mgradcheck.reports.joined`, a sweep's by
:mod:`mgradcheck.sweep.shards`, a matrix's by :mod:`mgradcheck.releases.matrix_report`.
Files of different kinds are refused together: their results do not add up.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from mgradcheck.cli.common import say
from mgradcheck.errors import UsageError
from mgradcheck.wording import count

REPORT, SWEEP, MATRIX = "mgradcheck-report", "mgradcheck-sweep", "mgradcheck-matrix"
KINDS = {REPORT: "run or tests report", SWEEP: "sweep report", MATRIX: "matrix report"}
WRITTEN = ("json", "summary")  # the report formats a merged sweep or matrix is written in


def load(files: Sequence[Path]) -> tuple[str, list[dict[str, Any]]]:
    """Every file's JSON and their one kind (schema); bad usage on an unreadable file or a mix."""
    from mgradcheck.reports import json_report

    try:
        datas = [json_report.load(path) for path in files]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    kinds: dict[str, list[str]] = defaultdict(list)
    for path, data in zip(files, datas, strict=True):
        kinds[KINDS.get(str(data.get("schema")), "unknown")].append(str(path))
    if "unknown" in kinds:
        raise UsageError(f"{kinds['unknown'][0]}: not an mgradcheck report, sweep or matrix")
    if len(kinds) > 1:
        listing = "; ".join(f"{kind}: {', '.join(paths)}" for kind, paths in kinds.items())
        raise UsageError(f"cannot merge reports of different kinds ({listing})")
    return str(datas[0]["schema"]), datas


def shards_missing(missing: Sequence[str], allow_missing: bool) -> None:
    """Refuse a merge that lacks a shard, unless asked to merge what there is (then a warning)."""
    if not missing:
        return
    listing = "; ".join(missing)
    if not allow_missing:
        raise UsageError(
            f"no report for shard {listing} (give every shard's report, or --allow-missing)"
        )
    say(f"warning: no report for shard {listing}")


def merge_runs(
    kind: str,
    datas: Sequence[dict[str, Any]],
    files: Sequence[Path],
    reports: Mapping[str, Path | None],
    allow_missing: bool,
) -> None:
    """Merge sweep or matrix reports into ``--json`` and a Markdown ``--summary``."""
    from mgradcheck.atomic import write_text
    from mgradcheck.reports.json_report import dumps
    from mgradcheck.reports.outputs import report_outputs

    others = [f"--{n}" for n, path in reports.items() if path is not None and n not in WRITTEN]
    if others:
        raise UsageError(
            f"{' and '.join(others)}: not for a {KINDS[kind]}; give --json or --summary"
        )
    names = [str(f) for f in files]
    try:
        if kind == SWEEP:
            from mgradcheck.sweep import shards

            merged, missing = shards.merge(datas, names)
        else:
            from mgradcheck.releases import matrix_report

            merged, missing = matrix_report.merge(datas, names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:  # a field of the wrong shape
        raise UsageError(f"not a valid {KINDS[kind]}: {exc!r} ({', '.join(names)})") from None
    shards_missing(missing, allow_missing)
    if missing:
        merged["meta"]["missing_shards"] = list(missing)
    outputs = report_outputs(**{name: reports[name] for name in WRITTEN})
    if not outputs.paths():
        raise UsageError("nothing to write: give --json or --summary ('-' for standard output)")
    outputs.check(inputs=files)
    if (json := outputs.get("json")) is not None:
        write_text(json.path, dumps(merged, indent=1))
    if (summary := outputs.get("summary")) is not None:
        write_text(summary.path, summary.prefix + _markdown(kind, merged))
    line = f"merged {count(len(files), KINDS[kind])}: {_line(kind, merged)}"
    click.echo(line, err=outputs.to_stdout)


def _markdown(kind: str, merged: dict[str, Any]) -> str:
    if kind == SWEEP:
        from mgradcheck.sweep.shards import summary

        return summary(merged)
    from mgradcheck.releases.matrix_report import from_json, matrix_view
    from mgradcheck.reports.matrix import render_markdown

    matrix = from_json(merged)
    if merged["meta"].get("kind") == "tests":
        from mgradcheck.suites.matrix import markdown

        return markdown(matrix)
    return render_markdown(matrix_view(matrix))


def _line(kind: str, merged: dict[str, Any]) -> str:
    if kind == SWEEP:
        found = count(len(merged["findings"]), "distinct finding")
        return f"{count(merged['cases'], 'catalogue case')}, {count(len(merged['results']), 'run')}; {found}"
    return f"{count(len(merged['entries']), 'entry')} x {count(len(merged['releases']), 'release')}"


def durations(files: Sequence[Path]) -> dict[str, float]:
    """Item id -> seconds, from reports of any kind: the mean of each id's recorded times."""
    from mgradcheck.reports import json_report

    times: dict[str, list[float]] = defaultdict(list)
    for path in files:
        try:
            found = _recorded(json_report.load(path), path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise UsageError(f"{path}: not a valid mgradcheck report ({exc!r})") from None
        if not found:
            say(f"warning: {path} records no durations")
        for key, seconds in found:
            times[key].append(seconds)
    return {key: round(sum(v) / len(v), 3) for key, v in sorted(times.items())}


def _recorded(data: dict[str, Any], path: Path) -> list[tuple[str, float]]:
    """The (id, seconds) a report of any kind records."""
    schema = data.get("schema")
    if schema == SWEEP:
        from mgradcheck.sweep import shards

        return list(shards.durations(data).items())
    if schema == MATRIX:
        from mgradcheck.releases import matrix_report

        matrix_report.read(data, str(path))  # well formed, or ValueError naming it
        return list(matrix_report.durations(data).items())
    from mgradcheck.reports import json_report

    report = json_report.parse(data, path)
    return [(r.id, r.duration) for r in report.results if r.runs]  # not run: no time recorded


def write_durations(found: dict[str, float], output: Path, files: Sequence[Path]) -> None:
    """Write ``found`` as JSON to ``output``, replacing only an earlier durations file."""
    from mgradcheck.atomic import STDOUT, check_writable, write_text
    from mgradcheck.corpus.shard import load_durations
    from mgradcheck.reports.outputs import refuse_input

    if output != STDOUT:
        refuse_input(output, files)
        if output.is_file():
            try:
                load_durations(output)
            except ValueError:
                raise UsageError(
                    f"cannot write {output}: it exists and is not a durations file; "
                    "move it away or choose another path"
                ) from None
    check_writable(output)
    write_text(output, json.dumps(found, indent=1) + "\n")
    where = "standard output" if output == STDOUT else output
    click.echo(
        f"{count(len(found), 'duration')} from {count(len(files), 'report')} written to {where}",
        err=True,
    )
