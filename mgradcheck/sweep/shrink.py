"""Shrink findings: fewest operations (of a drawn graph), fewest traced arguments, fewest
written arguments, smallest shapes, simplest values that still fail.

Greedy and bounded: each step proposes a few candidate specs, runs them all in
children (crash-isolated like the sweep itself), and keeps the first candidate,
in order of preference, that still shows the group's failure.

Every finding shrinks at once, in rounds: a round runs the next step of each
finding still shrinking, all its candidates together, up to ``-j`` children.
Work is shared where it is free: a candidate proposed twice (findings of one
operation start from one representative) runs once, and the candidates of one
operation share children, as the sweep's cases do; a crash's or a hang's each
run alone, since each of them is likely to die. When the deadline passes, a
finding keeps the smallest run found so far, and says it stopped.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mgradcheck.child.gradcheck_spec import CHECKS, FLOATS
from mgradcheck.run.display import Progress, Silent
from mgradcheck.sweep.case_runs import CaseResult, Executor, Status, Task
from mgradcheck.sweep.explore.graphs import Graph
from mgradcheck.sweep.findings import Group, arg_names
from mgradcheck.wording import count

Spec = dict[str, Any]
FILLS = (1.0, 0.5, -0.5, 2.0, -1.5)


@dataclass
class Shrunk:
    result: CaseResult  # the smallest run that still fails
    steps: list[str] = field(default_factory=list)
    stopped: str = ""  # why shrinking stopped before its last step ("out of time", ...), if it did
    seconds: float = 0.0  # what its candidates' runs took (with their share of their children)
    spared: str = ""  # why it was not shrunk at all (a known cause, shrunk once), if it was not

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


# Index positions written into a case's function: slice(1, 3), x[2:], mx.array([1, 0]) as a
# start, and the shape and strides of mx.as_strided, which address the array's memory.
WRITTEN_INDICES = re.compile(r"slice\(|\[-?\d|mx\.array\(\[|as_strided\(")


def smaller_shapes(result: CaseResult) -> list[tuple[str, Spec]]:
    spec = result.task.spec
    out: list[tuple[str, Spec]] = []
    if any(_indices(s) for s in spec["inputs"]):
        return out  # indices into the other arguments: a smaller shape reads out of bounds
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


def _indices(spec: Mapping[str, Any]) -> bool:
    """Whether an input may index into the others: a literal that is not floating, or an
    integer array drawn in range of the axes it indexes (``take_along_axis(a, indices)``)."""
    dtype = spec.get("dtype")
    if "value" in spec:
        return dtype not in (None, *FLOATS)
    return dtype not in (None, "bool", *FLOATS)


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


Propose = Callable[[CaseResult], list[tuple[str, Spec]]]


def fewer_operations(group: Group) -> list[Propose]:
    """For a drawn graph, steps that each drop one of its outputs or operations (none for a
    call)."""
    graph = group.representative().task.case.graph
    if not isinstance(graph, Graph):
        return []
    graphs = {graph.render()[0]: graph}  # each candidate's graph, by its fn

    def drop(result: CaseResult) -> list[tuple[str, Spec]]:
        current = graphs.get(result.task.spec["fn"])
        found = []
        for what, smaller in current.smaller() if current is not None else []:
            fn, inputs = smaller.render()
            graphs[fn] = smaller
            found.append((what, _with(result.task.spec, fn=fn, inputs=inputs)))
        return found

    return [drop] * (len(graph.ops) + len(graph.outputs) - 2)


def simpler_arguments(result: CaseResult) -> list[tuple[str, Spec]]:
    """For a drawn call or graph, candidates that each leave one written argument of an MLX
    call to its default (a keyword whose value is a literal: ``axis=(0, -1)``,
    ``keepdims=True``) or keep the first item of a literal tuple of several (``axes=(0,
    2)`` to ``axes=(0,)``); arguments that are inputs stay."""
    case = result.task.case
    if not (case.drawn or case.graph is not None):
        return []  # a catalogue case's arguments are what its writer chose to check
    fn = str(result.task.spec["fn"])
    try:
        calls = _mlx_calls(ast.parse(fn, mode="eval"))
    except SyntaxError:
        return []
    found = []
    for c, call in enumerate(calls):
        name = ast.unparse(call.func)
        for k, keyword in enumerate(call.keywords):
            if keyword.arg is None or not _literal(keyword.value):
                continue
            found.append((f"{name} without {keyword.arg}=", _changed(fn, c, k, drop=True)))
            if isinstance(keyword.value, ast.Tuple) and len(keyword.value.elts) > 1:
                found.append((f"{name} with one of {keyword.arg}", _changed(fn, c, k, drop=False)))
    return [(what, _with(result.task.spec, fn=changed)) for what, changed in found]


def _mlx_calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_mlx(n.func)]


def _changed(fn: str, c: int, k: int, drop: bool) -> str:
    """``fn`` with keyword ``k`` of its MLX call ``c`` left out, or cut to its first item."""
    tree = ast.parse(fn, mode="eval")
    keywords = _mlx_calls(tree)[c].keywords
    if drop:
        del keywords[k]
    else:
        value = keywords[k].value
        assert isinstance(value, ast.Tuple)
        value.elts[1:] = []
    return ast.unparse(tree)


def _is_mlx(func: ast.AST) -> bool:
    """``mx.f`` or ``mx.fft.f``."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id == "mx"


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def proposals(group: Group) -> list[Propose]:
    """The steps of shrinking ``group``'s finding, in order: each proposes candidates from the best run."""
    return [
        *fewer_operations(group),
        lambda r: narrow(group, r),
        lambda r: (
            [("one point", _with(r.task.spec, points=1))]
            if r.task.spec.get("points", 2) > 1
            else []
        ),
        simpler_arguments,
        simpler_arguments,  # each round leaves one more argument to its default
        smaller_shapes,
        smaller_shapes,  # a second round: halved shapes may halve again
        simpler_values,
    ]


class _Shrinking:
    """One finding on its way down: its best run so far, and the steps it has yet to try."""

    def __init__(self, group: Group) -> None:
        self.group = group
        self.best = Shrunk(group.representative())
        self.steps = proposals(group)
        self.candidates: list[tuple[str, Spec]] = []
        self.seconds = 0.0  # what the candidates it proposed first took

    def propose(self) -> bool:
        """Take the next step that proposes something; False when none is left."""
        while self.steps:
            self.candidates = self.steps.pop(0)(self.best.result)
            if self.candidates:
                return True
        return False

    def keep(self, runs: Sequence[CaseResult | None]) -> None:
        """Keep the first candidate that still fails (None: not run, for want of time)."""
        for (what, _), run in zip(self.candidates, runs, strict=True):
            if run is not None and self.group.shown_by(run):
                self.best = Shrunk(run, [*self.best.steps, what])
                return


def _key(spec: Mapping[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True)


def shrink_all(
    groups: Sequence[Group],
    executor: Executor,
    deadline: float | None = None,
    progress: Progress | None = None,
) -> list[Shrunk]:
    """Each group's smallest run that still shows its failure (its representative if nothing
    smaller does), in order. ``progress`` is told of each finding as it is done."""
    progress = progress or Silent()
    states = [_Shrinking(g) for g in groups]
    left = list(states)
    ran: dict[str, CaseResult] = {}  # each candidate's run, by its spec
    step = 0
    while left:
        for state in [s for s in left if not s.propose()]:
            _done(state, progress)
            left.remove(state)
        if not left:
            break
        if deadline is not None and time.monotonic() >= deadline:
            _stop(left, "out of time", progress)
            break
        step += 1
        tasks, groups_of, owners = _candidates(left, ran)
        progress.status(
            f"step {step}: {count(len(tasks), 'candidate')} for {count(len(left), 'finding')}"
        )
        runs = executor.run(tasks, deadline, group=groups_of) if tasks else []
        for task, run, owner in zip(tasks, runs, owners, strict=True):
            if run.status is not Status.NOT_RUN:
                ran[_key(task.spec)] = run
                owner.seconds += run.seconds or 0.0
        for state in left:
            state.keep([ran.get(_key(spec)) for _, spec in state.candidates])
        if executor.interrupted is not None:
            _stop(left, f"interrupted by {executor.interrupted}", progress)
            break
        # A step whose candidates did not all run was cut short by the deadline.
        cut = [s for s in left if any(_key(spec) not in ran for _, spec in s.candidates)]
        _stop(cut, "out of time", progress)
        left = [s for s in left if s not in cut]
    for state in states:
        state.best.seconds = state.seconds
    return [state.best for state in states]


def _candidates(
    left: Sequence[_Shrinking], ran: Mapping[str, CaseResult]
) -> tuple[list[Task], list[str], list[_Shrinking]]:
    """The candidates of this round not run yet, each once, the group of each (its
    operation's, to share children; its own, for a crash's or a hang's), and the finding
    that proposed it first."""
    tasks: list[Task] = []
    groups_of: list[str] = []
    owners: list[_Shrinking] = []
    seen: set[str] = set()
    for state in left:
        alone = state.group.kind in ("crash", "timeout")
        for _, spec in state.candidates:
            key = _key(spec)
            if key in ran or key in seen:
                continue
            seen.add(key)
            tasks.append(replace(state.best.result.task, spec=spec))
            groups_of.append(f"{len(tasks)}" if alone else f"op {state.group.op}")
            owners.append(state)
    return tasks, groups_of, owners


def _done(state: _Shrinking, progress: Progress) -> None:
    steps = "; ".join(state.best.steps) if state.best.steps else "nothing smaller fails"
    progress.line(f"{state.group.title}: {steps}")
    progress.advance()


def _stop(left: Sequence[_Shrinking], why: str, progress: Progress) -> None:
    for state in left:
        state.best.stopped = why
        progress.advance()
