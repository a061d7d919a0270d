"""What a gradcheck finds: each disagreement between two paths, and the whole result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Finding:
    """One disagreement between two ways of computing the same thing."""

    kind: str  # wrong-value, wrong-dtype, wrong-shape, error
    check: str  # one of CHECKS
    paths: str  # which paths disagree, e.g. "jvp vs finite differences"
    traced: tuple[str, ...]
    dtype: str
    point: int
    detail: str
    inputs: str

    def line(self) -> str:
        traced = ", ".join(self.traced)
        return (
            f"[{self.kind}] {self.paths} | traced ({traced}) | {self.dtype} | point {self.point}: "
            f"{self.detail}\n    inputs: {self.inputs}"
        )


@dataclass
class Result:
    """What one gradcheck found; ``ok`` when no two paths disagreed."""

    fn: str
    seed: int
    findings: list[Finding] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    checked: int = 0  # points where at least one comparison was made

    @property
    def ok(self) -> bool:
        return not self.findings

    def report(self, limit: int = 8) -> str:
        head = f"gradcheck of {self.fn} (seed {self.seed}): "
        if self.ok:
            head += f"{self.checked} points agree"
        else:
            head += f"{len(self.findings)} disagreements"
        lines = [head] + [f.line() for f in self.findings[:limit]]
        if len(self.findings) > limit:
            lines.append(f"... and {len(self.findings) - limit} more")
        lines += [f"unsupported: {u}" for u in self.unsupported[:3]]
        lines += [f"not checked: {n}" for n in self.not_checked[:3]]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data
