"""What a gradcheck finds: each disagreement between two paths, and the whole result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Finding:
    """One disagreement between two ways of computing the same thing.

    ``repro`` says, as plain data, which transform combination showed it (the
    path, the traced arguments, vmap's axes, the view or special value...), and
    ``values`` holds the exact inputs of the point, so that a standalone script
    can replay it without gradcheck.
    """

    kind: str  # wrong-value, wrong-dtype, wrong-shape, error
    check: str  # one of CHECKS
    paths: str  # which paths disagree, e.g. "jvp vs finite differences"
    traced: tuple[str, ...]
    dtype: str
    point: int
    detail: str
    inputs: str
    repro: dict[str, Any] = field(default_factory=dict)
    values: list[Any] = field(default_factory=list)
    # The primitives of the path's eager graph (compile left out), from its results back:
    # where a composition went wrong, whichever operation the case called (graphs.makers);
    # for another check, those of the function itself.
    made_by: list[str] = field(default_factory=list)

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
    ran: dict[str, int] = field(default_factory=dict)  # check -> comparisons made
    refused: dict[str, str] = field(default_factory=dict)  # check -> MLX's first refusal

    @property
    def ok(self) -> bool:
        return not self.findings

    def compared(self, check: str, n: int = 1) -> None:
        self.ran[check] = self.ran.get(check, 0) + n

    def refuse(self, check: str, what: str, message: str) -> None:
        """Record one of MLX's refusals (not implemented, use stop_gradient...) for ``check``."""
        self.unsupported.append(f"{what}: {message}"[:300])
        self.refused.setdefault(check, message[:300])

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
