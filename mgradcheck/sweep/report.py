"""What the sweep shows when it is done: a summary, and its JSON."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.reports import json_report
from mgradcheck.run.display import printable
from mgradcheck.sweep.execute import Status
from mgradcheck.sweep.run import SweepReport
from mgradcheck.wording import count, plural


def render(report: SweepReport) -> str:
    lines = [report.summary_line()]
    for finding in report.findings:
        where = f" -> {finding.path}" if finding.path else ""
        confirmed = {True: " (reproduces)", False: " (DID NOT REPRODUCE)", None: ""}[
            finding.reproduced
        ]
        lines.append(
            f"  FINDING {finding.group.title}: {count(len(finding.group.results), 'run')}{where}{confirmed}"
        )
        if finding.reproduced is False:
            lines.append(f"      {finding.reproduction}")
    by_op: dict[str, set[str]] = defaultdict(set)
    partial = 0
    for result in report.results:
        if result.status is Status.UNSUPPORTED:
            by_op[result.task.case.op].add(result.task.dtype)
        elif result.unsupported:
            partial += 1
    if by_op:
        ops = ", ".join(f"{op} [{','.join(sorted(d))}]" for op, d in sorted(by_op.items()))
        lines.append(f"  unsupported (MLX implements no derivative path checked): {ops}")
    if partial:
        lines.append(
            f"  {partial} other {plural(partial, 'run')} skipped a path MLX does not implement (see --json)"
        )
    for result in report.results:
        if result.status is Status.ERROR:
            lines.append(
                f"  ERROR {result.task.key}: {result.message.splitlines()[0] if result.message else ''}"
            )
    not_run = report.counts()[Status.NOT_RUN]
    if not_run:
        lines.append(
            f"  {count(not_run, 'run')} not started: the budget of {report.budget:.0f}s ran out (raise --budget)"
        )
    return printable("\n".join(lines))  # findings quote what MLX printed


def write_json(report: SweepReport, path: Path) -> None:
    write_text(path, json_report.dumps(report.to_json(), indent=1))
