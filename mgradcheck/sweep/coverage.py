"""``sweep --coverage``: MLX's operations by transform, from the target MLX and the sweep's results.

The target interpreter lists its own public callables (one small child), so
the table describes the release swept, not the one mgradcheck runs under.
Each covered operation gets, per check: *checked* (a case calling it made
that comparison), *finding* (and disagreed), *unsupported* (MLX refused it,
with MLX's message), or *not covered* (no case ran that check on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.child.gradcheck_spec import CHECKS
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.observation import Environment
from mgradcheck.sweep.case_runs import CaseResult, Status
from mgradcheck.sweep.catalogue import Case
from mgradcheck.sweep.catalogue.excluded import EXCLUDED, Coverage, account, public
from mgradcheck.sweep.explore.signatures import ask_target

CHECKED, FINDING, UNSUPPORTED, NOT_COVERED = "checked", "finding", "unsupported", "not covered"


def public_names(command: ChildCommand, env: Environment) -> list[str]:
    """The target MLX's public callables, qualified (``mx.sin``, ``linalg.inv``)."""
    return public(ask_target(command, env, "public_callables", "operations"))


@dataclass
class Cell:
    status: str = NOT_COVERED
    message: str = ""  # MLX's refusal, for unsupported


@dataclass
class Table:
    """The op x check table, and how the target MLX's callables are accounted for."""

    coverage: Coverage
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)  # op -> check -> cell

    def to_json(self) -> dict[str, Any]:
        spaces = self.coverage.by_namespace()
        return {
            "share": round(self.coverage.share, 4),
            "namespaces": {
                ns: dict(
                    zip(
                        ("covered", "excluded", "differentiable_left_out", "missing"),
                        counts,
                        strict=True,
                    )
                )
                for ns, counts in spaces.items()
            },
            "excluded": {n: EXCLUDED[n].reason for n in self.coverage.excluded},
            "missing": list(self.coverage.missing),
            "ops": {
                op: {
                    c: {
                        "status": cell.status,
                        **({"message": cell.message} if cell.message else {}),
                    }
                    for c, cell in row.items()
                }
                for op, row in self.cells.items()
            },
        }


def tabulate(
    names: Sequence[str],
    cases: Sequence[Case],
    results: Sequence[CaseResult],
    catalogue: Sequence[Case] | None = None,
) -> Table:
    """The table of the operations among ``names`` that ``cases`` cover, from their results;
    the accounting is that of the whole ``catalogue`` (default: ``cases``)."""
    table = Table(account(names, catalogue if catalogue is not None else cases))
    run = {op for case in cases for op in case.covers}
    table.cells = {op: {c: Cell() for c in CHECKS} for op in table.coverage.covered if op in run}
    for result in results:
        if result.status is Status.NOT_RUN:
            continue
        ran = result.ran
        found = {f["check"] for f in result.findings}
        for op in result.task.case.covers:
            row = table.cells.get(op)
            if row is None:
                continue
            for check in CHECKS:
                cell = row[check]
                if check in found:
                    cell.status, cell.message = FINDING, ""
                elif ran.get(check) and cell.status != FINDING:
                    cell.status, cell.message = CHECKED, ""
                elif cell.status == NOT_COVERED and check in result.task.spec.get("checks", ()):
                    refusal = result.refused.get(check) or result.refused.get("primal")
                    if refusal or result.status is Status.UNSUPPORTED:
                        cell.status = UNSUPPORTED
                        cell.message = refusal or result.message
    return table
