"""What the sweep shows when it is done: a summary, and its JSON."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.child.gradcheck_spec import CHECKS
from mgradcheck.reports import json_report
from mgradcheck.run.display import printable
from mgradcheck.sweep.case_runs import Status
from mgradcheck.sweep.catalogue.excluded import EXCLUDED
from mgradcheck.sweep.coverage import CHECKED, FINDING, NOT_COVERED, UNSUPPORTED
from mgradcheck.sweep.pipeline import FindingReport, SweepReport
from mgradcheck.wording import count, plural, wrap

DETAIL = "      "


def render(report: SweepReport, width: int | None = None) -> str:
    """The summary, wrapped between words at ``width`` (None: each line whole, for a pipe); an
    emitted entry's path stands whole on a line of its own, for copying."""
    lines = wrap(report.summary_line(), width, "  ", first="")
    for finding in report.findings:
        confirmed = {True: " (reproduces)", False: " (DID NOT REPRODUCE)", None: ""}[
            finding.reproduced
        ]
        label, known = (
            ("BY DESIGN", f" (documented: {finding.known})")
            if finding.by_design
            else ("FINDING", f" (known: {finding.known})" if finding.known else "")
        )
        head = f"{label} {finding.group.title}: {count(len(finding.group.results), 'run')}"
        lines += wrap(f"{head}{known}{confirmed}", width, DETAIL, first="  ")
        if finding.path:
            lines.append(f"{DETAIL}-> {finding.path}")
        lines += wrap(_detail(finding), width, DETAIL)
        if finding.reproduced is False:
            lines += wrap(finding.reproduction, width, DETAIL)
    if report.findings:
        lines += wrap(
            "each finding in full (every run, the shrunk point): --json FILE; "
            "as corpus entries: --emit DIR", width, "    ", first="  "
        )  # fmt: skip
    by_op: dict[str, set[str]] = defaultdict(set)
    partial = 0
    for result in report.results:
        if result.status is Status.UNSUPPORTED:
            by_op[result.task.case.op].add(result.task.dtype)
        elif result.unsupported:
            partial += 1
    if by_op:
        ops = ", ".join(f"{op} [{','.join(sorted(d))}]" for op, d in sorted(by_op.items()))
        text = f"unsupported (MLX implements no derivative path checked): {ops}"
        lines += wrap(text, width, "    ", first="  ")
    if partial:
        text = f"{partial} other {plural(partial, 'run')} skipped a path MLX does not implement"
        lines += wrap(f"{text} (see --json)", width, "    ", first="  ")
    for result in report.results:
        if result.status is Status.ERROR:
            first_line = result.message.splitlines()[0] if result.message else ""
            lines += wrap(f"ERROR {result.task.key}: {first_line}", width, "    ", first="  ")
    spared = sum(1 for f in report.findings if f.shrunk.spared)
    if spared:
        text = (
            f"{count(spared, 'finding')} of known causes not shrunk: one finding of each cause was"
        )
        lines += wrap(text, width, "    ", first="  ")
    not_run = report.counts()[Status.NOT_RUN]
    if not_run or report.unshrunk:
        why = (
            f"interrupted by {report.interrupted}"
            if report.interrupted
            else f"the budget of {report.budget:.0f}s ran out (raise --budget)"
        )
        left = [f"{count(not_run, 'run')} not started"] if not_run else []
        if report.unshrunk:
            left.append(f"{count(report.unshrunk, 'finding')} left unshrunk (reported as found)")
        lines += wrap(f"{', '.join(left)}: {why}", width, "    ", first="  ")
    return printable("\n".join(lines))  # findings quote what MLX printed


def _detail(finding: FindingReport) -> str:
    """What the smallest failing run showed: the case, its dtype and shapes, and what differed
    (observed against expected) or how the child died."""
    run = finding.shrunk.result
    shapes = ", ".join(
        str(tuple(i["shape"])) if isinstance(i.get("shape"), list) else "scalar"
        for i in run.task.spec.get("inputs", [])
    )
    seen = finding.group.matching(run)
    if seen:
        what = f"{seen[0].get('paths', '')}: {seen[0].get('detail', '')}"
    else:
        what = run.message or run.status.label
    first = what.strip().splitlines()[0] if what.strip() else ""
    text = f"{run.task.case.id} [{run.task.dtype}] at {shapes or 'no inputs'}: {first}"
    return text if len(text) <= 300 else text[:297] + "..."


def write_json(report: SweepReport, path: Path) -> None:
    write_text(path, json_report.dumps(report.to_json(), indent=1))


MARKS = {CHECKED: "+", FINDING: "X", UNSUPPORTED: "u", NOT_COVERED: "."}
SHORT = {"subsets": "subst", "compile": "comp", "hessian": "2nd", "shapeless": "shpls",
         "specials": "spec", "checkpoint": "ckpt", "custom": "cust", "integers": "int",
         "adjoint": "adj", "export": "exprt", "compose": "comps"}  # fmt: skip


def coverage_table(report: SweepReport) -> str:
    """The op x transform table, the accounting per namespace, and MLX's refusals."""
    table = report.coverage
    if table is None:
        return ""
    cov = table.coverage
    lines = [
        f"coverage of mlx {report.environment.mlx}: {len(cov.covered)} of "
        f"{len(cov.differentiable)} differentiable operations ({100 * cov.share:.1f}%)",
        "  namespace  covered  excluded  differentiable-left-out  not-accounted",
    ]
    for ns, (covered, excluded, left, missing) in cov.by_namespace().items():
        lines.append(f"  {ns:<9}  {covered:>7}  {excluded:>8}  {left:>23}  {missing:>13}")
    for name in cov.excluded:
        if EXCLUDED[name].differentiable:
            lines.append(f"  left out: {name}: {EXCLUDED[name].reason}")
    for name in cov.missing:
        lines.append(f"  NOT ACCOUNTED FOR: {name} (neither in the catalogue nor excluded)")
    width = max((len(op) for op in table.cells), default=2)
    lines.append("")
    lines.append(f"  {'operation':<{width}}  " + " ".join(f"{SHORT.get(c, c):>5}" for c in CHECKS))
    refusals: dict[str, list[str]] = defaultdict(list)
    for op, row in table.cells.items():
        marks = " ".join(f"{MARKS[row[c].status]:>5}" for c in CHECKS)
        lines.append(f"  {op:<{width}}  {marks}")
        for check, cell in row.items():
            if cell.status == UNSUPPORTED:
                refusals[cell.message.splitlines()[0][:160] if cell.message else ""].append(
                    f"{op} {check}"
                )
    lines.append(
        f"  {MARKS[CHECKED]} checked, {MARKS[FINDING]} finding, {MARKS[UNSUPPORTED]} unsupported "
        f"by this MLX, {MARKS[NOT_COVERED]} not covered"
    )
    if refusals:
        lines.append("  unsupported by this MLX, with its message:")
        for message, where in sorted(refusals.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"    {message or '(no message)'}: {', '.join(where)}")
    return printable("\n".join(lines))  # MLX's refusals are quoted
