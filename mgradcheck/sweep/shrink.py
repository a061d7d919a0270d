"""Shrink a finding: fewest traced arguments, smallest shapes, simplest values that still fail.

Greedy and bounded: each step proposes a few candidate specs, runs them all in
children (crash-isolated like the sweep itself), and keeps the first candidate,
in order of preference, that still shows the group's failure.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mgradcheck.child.gradcheck_spec import CHECKS, FLOATS
from mgradcheck.sweep.execute import CaseResult, Executor
from mgradcheck.sweep.findings import Group, arg_names

Spec = dict[str, Any]
FILLS = (1.0, 0.5, -0.5, 2.0, -1.5)


@dataclass
class Shrunk:
    result: CaseResult  # the smallest run that still fails
    steps: list[str] = field(default_factory=list)

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.result.task.spec


def _floats(spec: Mapping[str, Any]) -> list[int]:
    """Indices of the arguments that may be traced (floating, not const)."""
    return [
        i for i, s in enumerate(spec["inputs"])
        if s.get("dtype") in (None, "float16", "bfloat16", "float32", "float64") and not s.get("const")
    ]  # fmt: skip


def _with(spec: Mapping[str, Any], **changes: Any) -> Spec:
    out = copy.deepcopy(dict(spec))
    out.update(changes)
    return out


def _traced_only(spec: Mapping[str, Any], keep: Iterable[int]) -> Spec:
    keep = set(keep)
    out = copy.deepcopy(dict(spec))
    for i in _floats(spec):
        if i not in keep:
            out["inputs"][i]["const"] = True
    return out


def narrow(group: Group, result: CaseResult) -> list[tuple[str, Spec]]:
    """Candidates tracing fewer arguments and running only the check that failed."""
    spec = result.task.spec
    floats = _floats(spec)
    names = arg_names(spec["fn"])
    name = {i: names[i] if i < len(names) else f"arg{i}" for i in floats}
    if group.check:  # a wrong answer names the arguments it was traced with
        found = group.matching(result)
        traced = min((f["traced"] for f in found), key=len) if found else []
        keep = [i for i in floats if name[i] in traced]
        only = _with(_traced_only(spec, keep), checks=[group.check])
        return [
            (f"traced {','.join(traced)}, {group.check} only", only),
            (f"{group.check} only", _with(spec, checks=[group.check])),
        ]
    # A crash names nothing: try each argument alone, then each check alone.
    singles = [(f"only {name[i]} traced", _traced_only(spec, [i])) for i in floats]
    checks = [(f"{c} only", _with(spec, checks=[c])) for c in CHECKS]
    return [*(singles if len(floats) > 1 else []), *checks]


# Index positions written into a case's function: slice(1, 3), x[2:], mx.array([1, 0]) as a start.
WRITTEN_INDICES = re.compile(r"slice\(|\[-?\d|mx\.array\(\[")


def smaller_shapes(result: CaseResult) -> list[tuple[str, Spec]]:
    spec = result.task.spec
    out: list[tuple[str, Spec]] = []
    if any("value" in s and s.get("dtype") not in (None, *FLOATS) for s in spec["inputs"]):
        return out  # literal indices into the other arguments: a smaller shape reads out of bounds
    if WRITTEN_INDICES.search(spec["fn"]):
        return out  # so are starts and slices written into the function
    shaped = [
        i
        for i, s in enumerate(spec["inputs"])
        if "value" not in s and any(n > 1 for n in s.get("shape", []))
    ]
    if shaped:
        every = copy.deepcopy(dict(spec))
        for i in shaped:
            every["inputs"][i]["shape"] = [1] * len(every["inputs"][i]["shape"])
        out.append(("every dimension 1", every))
    for i in shaped:
        for how, size in (("1", lambda n: 1), ("halved", lambda n: max(1, n // 2))):
            one = copy.deepcopy(dict(spec))
            one["inputs"][i]["shape"] = [size(n) for n in one["inputs"][i]["shape"]]
            out.append((f"input {i} dimensions {how}", one))
    return out


def simpler_values(result: CaseResult) -> list[tuple[str, Spec]]:
    spec = result.task.spec
    drawn = [
        i
        for i, s in enumerate(spec["inputs"])
        if "value" not in s and "fill" not in s and i in _floats(spec)
    ]
    out: list[tuple[str, Spec]] = []
    if not drawn:
        return out
    for value in FILLS:
        filled = copy.deepcopy(dict(spec))
        for i in drawn:
            filled["inputs"][i].pop("range", None)
            filled["inputs"][i]["fill"] = value
        out.append((f"inputs filled with {value}", filled))
    return out


def shrink(group: Group, executor: Executor, deadline: float | None = None) -> Shrunk:
    """The smallest spec that still shows ``group``'s failure (the representative if nothing smaller does)."""
    best = Shrunk(group.representative())
    batch = 1 if group.kind in ("crash", "timeout") else None
    proposals: list[Callable[[CaseResult], list[tuple[str, Spec]]]] = [
        lambda r: narrow(group, r),
        lambda r: (
            [("one point", _with(r.task.spec, points=1))]
            if r.task.spec.get("points", 2) > 1
            else []
        ),
        smaller_shapes,
        smaller_shapes,  # a second round: halved shapes may halve again
        simpler_values,
    ]
    for propose in proposals:
        if deadline is not None and time.monotonic() > deadline:
            best.steps.append("stopped: out of time")
            break
        candidates = propose(best.result)
        if not candidates:
            continue
        tasks = [replace(best.result.task, spec=spec) for _, spec in candidates]
        runs = executor.run(tasks, deadline, batch_size=batch)
        if executor.interrupted is not None:
            best.steps.append(f"stopped: interrupted by {executor.interrupted}")
            break
        for (what, _), run in zip(candidates, runs, strict=True):
            if group.shown_by(run):
                best = Shrunk(run, [*best.steps, what])
                break
    return best
