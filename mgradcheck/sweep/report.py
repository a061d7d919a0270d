"""What the sweep shows: progress lines while it runs, a summary after, and its JSON."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from mgradcheck.atomic import write_text
from mgradcheck.sweep.execute import CaseResult, Status
from mgradcheck.sweep.run import SweepReport


class Progress:
    """One line per finished batch of cases, naming every finding as it appears."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, done: int, total: int, finished: Sequence[CaseResult]) -> None:
        for result in finished:
            if result.status.is_finding or result.status is Status.ERROR:
                print(f"  {result.task.key}: {result.status.label}", file=self.stream, flush=True)
        print(f"[{done}/{total}] cases run", file=self.stream, flush=True)


def render(report: SweepReport) -> str:
    lines = [report.summary_line()]
    for finding in report.findings:
        where = f" -> {finding.path}" if finding.path else ""
        confirmed = {True: " (reproduces)", False: " (DID NOT REPRODUCE)", None: ""}[
            finding.reproduced
        ]
        lines.append(
            f"  FINDING {finding.group.title}: {len(finding.group.results)} runs{where}{confirmed}"
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
        lines.append(f"  {partial} other runs skipped a path MLX does not implement (see --json)")
    for result in report.results:
        if result.status is Status.ERROR:
            lines.append(
                f"  ERROR {result.task.key}: {result.message.splitlines()[0] if result.message else ''}"
            )
    not_run = report.counts()[Status.NOT_RUN]
    if not_run:
        lines.append(
            f"  {not_run} runs not started: the budget of {report.budget:.0f}s ran out (raise --budget)"
        )
    return "\n".join(lines)


def write_json(report: SweepReport, path: Path) -> None:
    write_text(path, json.dumps(report.to_json(), indent=1) + "\n")
