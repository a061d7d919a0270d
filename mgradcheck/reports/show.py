"""``mgradcheck show``: one entry explained to someone who never read the thread.

As text within a width (the reproducer's code excepted: it is shown as written) and as
JSON (``mgradcheck schema show`` holds its keys).
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING, Any

from mgradcheck.corpus.entry import BACKENDS, Change, Entry
from mgradcheck.paths import last_report
from mgradcheck.reports.json_report import read
from mgradcheck.run.display import PIPE_WIDTH, printable

if TYPE_CHECKING:
    from mgradcheck.run.results import EntryResult

SCHEMA = "mgradcheck-show"
SCHEMA_VERSION = 1
# What a wrapped line's next lines are indented under: a field's value ("report:   URL"), an
# evidence line's outcome ("  mlx 0.32.0 cpu: crash  (...)").
_LABEL = re.compile(r" *(?:[a-z]+: +|mlx \S+ \S+: )?")


def _expectation(entry: Entry) -> list[str]:
    bug = entry.bug
    if not bug.affects:
        return [
            "never seen in MLX: a guard against a bug class found elsewhere; expected to pass everywhere"
        ]
    lines = []
    for backend in BACKENDS:
        if backend not in bug.affects:
            lines.append(f"{backend}: not affected (expected to pass)")
            continue
        fixed = bug.fixed_in.get(backend)
        start = bug.introduced_in.get(backend)
        span = f"from {start} " if start else ""
        lines.append(
            f"{backend}: present {span}"
            + (f"until {fixed} (fixed in {fixed})" if fixed else "(still open)")
        )
    for verb, change in (("fixed", bug.fixed_by), ("introduced", bug.introduced_by)):
        if change is not None:
            lines.append(f"{verb} by commit {change.describe()}: {change.url}")
    return lines


def _last_run(entry: Entry) -> tuple[EntryResult, str] | str:
    """The entry's result in the last recorded run and when that finished, or why there is none."""
    path = last_report()
    if not path.exists():
        return "no run recorded yet (mgradcheck run records one)"
    try:
        report = read(path)
    except ValueError:
        return "the last recorded run could not be read"
    for result in report.results:
        if result.id == entry.id:
            return result, report.finished
    return "not in the last recorded run"


def _last_known(entry: Entry) -> list[str]:
    found = _last_run(entry)
    if isinstance(found, str):
        return [found]
    result, finished = found
    env = result.environment
    return [
        f"{result.outcome_text} -> {result.verdict.label} on {env.label} ({finished})",
        f"  {result.reason}",
    ]


def _fit(line: str, width: int) -> list[str]:
    """``line`` wrapped at ``width``, its next lines under its value; a URL is never broken."""
    line = printable(line)
    if len(line) <= width:
        return [line]
    found = _LABEL.match(line)
    label = found.group() if found else ""
    hang = len(label) if label.strip() else len(line) - len(line.lstrip()) + 2
    return textwrap.wrap(
        line, width, subsequent_indent=" " * min(hang, width // 2),
        break_long_words=False, break_on_hyphens=False,
    ) or [line]  # fmt: skip


def render(entry: Entry, width: int = PIPE_WIDTH) -> str:
    out = [f"{entry.id}: {entry.title}", ""]
    out += [*textwrap.wrap(entry.summary, width), ""]
    if entry.upstream.report:
        out.append(f"report:   {entry.upstream.report}")
    if entry.found_by is not None:
        unreported = (
            "" if entry.upstream.report or not entry.bug.affects else "not reported upstream yet; "
        )
        out.append(f"found:    {unreported}{entry.found_by.describe()}")
    if entry.upstream.fix:
        out.append(f"fix:      {entry.upstream.fix}")
    out += [f"related:  {url}" for url in entry.upstream.related]
    if entry.origin:
        out.append(f"origin:   first reported in {entry.origin}")
    if entry.tags:
        out.append(f"tags:     {', '.join(entry.tags)}")
    out.append(f"file:     {entry.path}:{entry.line}")
    out += ["", f"When present the bug shows as: {entry.bug.signature_label()}"]
    if entry.bug.reported_on:
        out.append(f"Reported on: {', '.join(entry.bug.reported_on)}")
    out += ["Expected:"] + [f"  {line}" for line in _expectation(entry)]
    if entry.evidence:
        out += ["", "Seen on real releases:"]
        for ev in entry.evidence:
            note = f"  ({ev.note})" if ev.note else ""
            out.append(f"  mlx {ev.mlx} {ev.backend}: {ev.outcome}{note}")
    if entry.notes:
        out += [
            "",
            "Notes:",
            *textwrap.wrap(entry.notes, width, initial_indent="  ", subsequent_indent="  "),
        ]
    out += ["", "Last known status:"] + [f"  {line}" for line in _last_known(entry)]
    repeat = f", {entry.repeat} runs" if entry.repeat > 1 else ""
    out += ["", f"Reproducer (timeout {entry.timeout:g}s{repeat}):"]
    out = [piece for text in out for line in text.split("\n") for piece in _fit(line, width)]
    if entry.code is not None:
        out += ["  " + line for line in entry.code.rstrip().splitlines()]
    elif entry.gradcheck is not None:
        out += [f"  gradcheck: {dict(entry.gradcheck)}"]
    return printable("\n".join(out))


def _change(change: Change | None) -> dict[str, Any] | None:
    return None if change is None else {"commit": change.commit, "pr": change.pr, "url": change.url}


def to_json(entry: Entry) -> dict[str, Any]:
    """The entry as ``show --json`` writes it: what the text shows, keyed."""
    bug, found, last = entry.bug, entry.found_by, _last_run(entry)
    found_by = None
    if found is not None:
        found_by = {"tool": found.tool, "mlx": found.mlx, "date": found.date,
                    "backend": found.backend, "case": found.case}  # fmt: skip
    last_run = None
    if not isinstance(last, str):
        result, finished = last
        last_run = {"outcome": result.outcome_text, "verdict": result.verdict.label,
                    "environment": result.environment.label, "finished": finished,
                    "reason": result.reason}  # fmt: skip
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "id": entry.id,
        "title": entry.title,
        "summary": entry.summary,
        "path": entry.path,
        "line": entry.line,
        "tags": list(entry.tags),
        "origin": entry.origin,
        "upstream": {
            "report": entry.upstream.report,
            "fix": entry.upstream.fix,
            "related": list(entry.upstream.related),
        },
        "found_by": found_by,
        "signature": bug.signature_label(),
        "expected": {backend: bug.expectation(backend) for backend in BACKENDS},
        "fixed_in": {b: str(v) if v else None for b, v in bug.fixed_in.items()},
        "introduced_in": {b: str(v) if v else None for b, v in bug.introduced_in.items()},
        "fixed_by": _change(bug.fixed_by),
        "introduced_by": _change(bug.introduced_by),
        "evidence": [
            {"mlx": e.mlx, "backend": e.backend, "outcome": e.outcome, "note": e.note}
            for e in entry.evidence
        ],
        "notes": entry.notes,
        "last_run": last_run,
        "timeout": entry.timeout,
        "repeat": entry.repeat,
        "requires": entry.requires.to_json(),
        "code": entry.code,
        "gradcheck": dict(entry.gradcheck) if entry.gradcheck is not None else None,
    }
