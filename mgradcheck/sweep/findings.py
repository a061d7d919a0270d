"""Group the sweep's findings by operation and failure kind, one group per probable bug."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.sweep.case_runs import CaseResult, Status

DTYPE_ORDER = ("float32", "float64", "float16", "bfloat16")
# Which of several kinds seen on the same runs names the bug best.
KIND_ORDER = ("crash", "timeout", "error", "wrong-value", "wrong-dtype", "wrong-shape")
CHECK_ORDER = ("", "jvp", "vjp", "subsets", "compile", "hessian", "vmap", "views", "specials",
               "shapeless", "checkpoint", "custom", "dtype")  # fmt: skip


@dataclass
class Group:
    """Every case result that shows one failure kind of one operation."""

    op: str
    kind: str  # wrong-value, wrong-dtype, wrong-shape, error (a derivative path raised), crash, timeout
    check: str  # the gradcheck check that saw it ("" for crashes and timeouts)
    results: list[CaseResult] = field(default_factory=list)
    also: list[tuple[str, str]] = field(default_factory=list)  # other kinds seen on the same runs

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.kind, self.check)

    @property
    def title(self) -> str:
        what = {"error": "a derivative raises", "crash": "crash", "timeout": "hang"}.get(
            self.kind, self.kind
        )
        via = f" ({self.check})" if self.check else ""
        also = f", also {', '.join(c or k for k, c in self.also)}" if self.also else ""
        return f"{self.op}: {what}{via}{also}"

    def representative(self) -> CaseResult:
        """The simplest member: float32 first, then fewest inputs, then fewest elements."""

        def size(r: CaseResult) -> tuple[int, int, int]:
            inputs = r.task.spec["inputs"]
            elements = sum(_count(i) for i in inputs)
            order = DTYPE_ORDER.index(r.task.dtype) if r.task.dtype in DTYPE_ORDER else 9
            return (order, len(inputs), elements)

        return min(self.results, key=size)

    def matching(self, result: CaseResult) -> list[dict[str, Any]]:
        """The findings of ``result`` that belong to this group (empty for crash and timeout)."""
        return [f for f in result.findings if f["kind"] == self.kind and f["check"] == self.check]

    def shown_by(self, result: CaseResult) -> bool:
        """Whether ``result`` (a re-run, a shrunk candidate) still shows this group's failure."""
        if self.kind == "crash":
            return result.status is Status.CRASH
        if self.kind == "timeout":
            return result.status is Status.TIMEOUT
        return result.status is Status.WRONG and bool(self.matching(result))

    def summary(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "kind": self.kind,
            "check": self.check,
            "title": self.title,
            "cases": sorted({r.task.key for r in self.results}),
            "also": [f"{kind} ({check})" if check else kind for kind, check in self.also],
        }


def _count(spec: Mapping[str, Any]) -> int:
    shape = spec.get("shape", [])
    total = 1
    for n in shape:
        total *= int(n)
    return total


def group(results: Sequence[CaseResult]) -> list[Group]:
    """Deduplicate: one group per (operation, failure kind, check), in first-seen order."""
    groups: dict[tuple[str, str, str], Group] = {}
    for result in results:
        op = result.task.case.op
        if result.status is Status.CRASH:
            # Not named by the path it died in: memory that MLX corrupted in one path can
            # kill a later one. Shrinking runs each check alone to find the one that crashes.
            keys = [(op, "crash", "")]
        elif result.status is Status.TIMEOUT:
            keys = [(op, "timeout", "")]
        elif result.status is Status.WRONG:
            keys = list(dict.fromkeys((op, f["kind"], f["check"]) for f in result.findings))
        else:
            continue
        for key in keys:
            groups.setdefault(key, Group(*key)).results.append(result)
    # Several kinds seen on exactly the same runs of one op are one bug seen several ways
    # (a wrong jvp also breaks <J^T c, t> = <c, J t>): keep the kind that names it best.
    same: dict[tuple[str, frozenset[str]], list[Group]] = {}
    for g in groups.values():
        same.setdefault((g.op, frozenset(r.task.key for r in g.results)), []).append(g)
    merged = []
    for members in same.values():
        members.sort(key=_rank)
        members[0].also = [(g.kind, g.check) for g in members[1:]]
        merged.append(members[0])
    return merged


def _rank(g: Group) -> tuple[int, int]:
    kind = KIND_ORDER.index(g.kind) if g.kind in KIND_ORDER else len(KIND_ORDER)
    check = CHECK_ORDER.index(g.check) if g.check in CHECK_ORDER else len(CHECK_ORDER)
    return (kind, check)


def arg_names(fn: str) -> list[str]:
    """The parameter names of a ``lambda`` expression (the names gradcheck reports)."""
    try:
        node = ast.parse(fn, mode="eval").body
    except SyntaxError:
        return []
    return [a.arg for a in node.args.args] if isinstance(node, ast.Lambda) else []
