"""``mgradcheck show``: one entry explained to someone who never read the thread."""

from __future__ import annotations

import textwrap

from mgradcheck.corpus.entry import BACKENDS, Entry
from mgradcheck.run.display import printable


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
    return lines


def _last_known(entry: Entry) -> list[str]:
    from mgradcheck.paths import last_report
    from mgradcheck.reports.json_report import read

    path = last_report()
    if not path.exists():
        return ["no run recorded yet (mgradcheck run records one)"]
    try:
        report = read(path)
    except ValueError:
        return ["the last recorded run could not be read"]
    for result in report.results:
        if result.id == entry.id:
            env = result.environment
            return [
                f"{result.outcome_text} -> {result.verdict.label} on {env.label} ({report.finished})",
                f"  {result.reason}",
            ]
    return ["not in the last recorded run"]


def render(entry: Entry) -> str:
    out = [f"{entry.id}: {entry.title}", ""]
    out += [*textwrap.wrap(entry.summary, 88), ""]
    if entry.upstream.report:
        out.append(f"report:   {entry.upstream.report}")
    if entry.found_by is not None:
        unreported = "" if entry.upstream.report else "not reported upstream yet; "
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
            *textwrap.wrap(entry.notes, 88, initial_indent="  ", subsequent_indent="  "),
        ]
    out += ["", "Last known status:"] + [f"  {line}" for line in _last_known(entry)]
    repeat = f", {entry.repeat} runs" if entry.repeat > 1 else ""
    out += ["", f"Reproducer (timeout {entry.timeout:g}s{repeat}):"]
    if entry.code is not None:
        out += ["  " + line for line in entry.code.rstrip().splitlines()]
    elif entry.gradcheck is not None:
        out += [f"  gradcheck: {dict(entry.gradcheck)}"]
    return printable("\n".join(out))
