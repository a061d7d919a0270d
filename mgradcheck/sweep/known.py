"""What a sweep finding is: its probable cause, and the corpus entry that already holds it.

Many finding groups are one bug seen through many operations: the vjp of every
broadcasting operation reduces over the broadcast axes, so one broken
reduction crashes sum, mean, add, matmul and softmax alike. A group's cause is
what it died of and where (a crash: the signal and the check that was running;
an error: MLX's message with its numbers left out), or, for a wrong answer, the
operation and the check, since two wrong values are two bugs until shown to be
one. A composition's wrong answer (the compose check's) is its graph's instead:
the path and the primitives of its eager graph, which the child reads from MLX
(``mx.export_to_dot``), since the operation called may not be in it at all (the
derivative of floor is a broadcast zero, as that of ceil and round is). A drawn graph's finding is about the operations its shrunk run still calls:
shrunk to one, it is that operation's cause, as a single call's would be; still
needing one node returned as two outputs, it is that cause, whichever graph.

A cause is a known bug when an entry of the corpus expects its bug on this
release and backend, expects the finding's outcome (a crash, or a failed
check), is tagged with the transform the check exercises, and names the
operation (in its id, title, summary, tags, code, or the sweep case that
found it; or, for an operation MLX builds from one primitive alone, a
function the entry calls that is that primitive: tril is a ``where``; or, for
a composition, a primitive of its graph that a function the entry is about
builds; or, for an operation MLX builds of others, a primitive of its graph:
median is a sort); one
member of a cause matched is enough, since the entry's reproducer stands for
all of them. A crash in a compiled check names no operation, since one compiler
bug kills many: an entry of a crash tagged with that check holds it, whichever
operation showed it; a crash differentiating by an integer argument is the
operation's jvp or vjp dying. A guard (an entry of documented
behaviour, affecting no backend) that matches says the finding is by design.
The entries' own ``match`` patterns are not used: they match what their
reproducers print, not the sweep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from mgradcheck.child.gradcheck_spec import COMPILED
from mgradcheck.corpus.entry import Entry
from mgradcheck.outcomes import Outcome
from mgradcheck.sweep import mlx_places
from mgradcheck.sweep.case_runs import CaseResult
from mgradcheck.sweep.catalogue import calls
from mgradcheck.sweep.catalogue.elementwise import ALIAS_OF
from mgradcheck.sweep.explore.graphs import returns_twice
from mgradcheck.sweep.findings import Group

# The corpus tags that say an entry is about what a check exercises.
TAGS = {
    "jvp": {"jvp", "forward-mode"}, "vjp": {"vjp", "grad"}, "subsets": {"jvp", "vjp", "grad"},
    "dtype": {"jvp", "vjp", "grad", "dtype", "wrong-shape"}, "compile": {"compile"},
    "views": {"compile", "views"}, "specials": {"compile"}, "shapeless": {"shapeless"},
    "hessian": {"second-order"}, "vmap": {"vmap"}, "checkpoint": {"checkpoint"},
    "custom": {"custom-function"},
}  # fmt: skip
# A breadcrumb's check, and its path where it names one ({"check": "compose", ..., "path": ...}).
_CRUMB = re.compile(r'\| \{"check": "(\w+)"(?:.*"path": "([^"]*)")?')
_GENERATED = re.compile(r"\b(?=\w*[A-Z])(?=\w*[a-z])\w{16,}\b")  # CfNIBroadcastADfNOAdd...
_NUMBERS = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
_SHAPES = re.compile(r"\((N, ?)*N,?\)")  # (N,N,N) after the numbers: a rank is a number too
# Primitives the transforms add to move axes and shapes about, in any composed graph.
PLUMBING = frozenset({"Reshape", "ExpandDims", "Squeeze", "Transpose", "Copy", "AsType"})
# The primitives MLX names by what they compute, not by their class (Reduce::name, Scan::name
# in mlx/primitives.h), as the index of its sources holds them.
CLASS_OF = {
    **dict.fromkeys(("And", "Or", "Sum", "Prod", "Min", "Max"), "Reduce"),
    **dict.fromkeys(("CumSum", "CumProd", "CumMin", "CumMax", "CumLogAddExp"), "Scan"),
}
# The words of a composition's path that an entry about it is tagged with, and only then.
_PATH_WORDS = frozenset({"shapeless", "vmap", "checkpoint"})


@dataclass
class Cause:
    """One probable cause and the groups that show it."""

    key: str
    groups: list[Group] = field(default_factory=list)
    entry: str | None = None  # the corpus entry that holds it, if any
    by_design: bool = False  # that entry is a guard of documented behaviour
    sure: int = 0  # how surely (see _names)

    @property
    def ops(self) -> list[str]:
        return list(dict.fromkeys(g.op for g in self.groups))


def _check(group: Group, shown: CaseResult) -> str:
    """The check that saw it: the group's, or for a crash the last one the child named; a
    crash in a composition that compiles is the compiler's, so the check of that way of
    compiling (``compile(shapeless)(vmap(grad))`` is shapeless)."""
    if group.check:
        return group.check
    named = [f for f in shown.findings if f.get("check")]  # the crash's path
    if named:
        check, path = str(named[-1]["check"]), str(named[-1].get("repro", {}).get("path", ""))
    else:
        check, path = (_CRUMB.findall(shown.message or "") or [("", "")])[-1]
    if check == "compose" and "compile" in path:
        return "shapeless" if "shapeless" in path else "compile"
    return check


def _eager(shown: CaseResult) -> bool:
    """Whether ``shown`` died on the eager side of its check (a reference, an out-of-bounds
    read), which is not dying compiled: no compiled check's entry holds it."""
    return " while running eager " in (shown.message or "").split("\n", 1)[0]


def operations(group: Group, shown: CaseResult) -> list[str]:
    """What ``group`` is about: its operation, or, for a drawn graph, those its shrunk run
    ``shown`` still calls (a graph shrunk to one operation is that operation's finding)."""
    if shown.task.case.graph is None:
        return [group.op]
    fn = str(shown.task.spec["fn"])
    if returns_twice(fn):  # shrinking kept it: MLX got one node as two outputs wrong
        return ["an output returned twice"]
    called = [name.split(".", 1)[1] for name in calls(fn)]
    return called or [group.op]  # only views are left, which are no call


def _who(group: Group, shown: CaseResult) -> str:
    ops = operations(group, shown)
    return ALIAS_OF.get(ops[0], ops[0]) if len(ops) == 1 else group.op


def cause_of(group: Group, shown: CaseResult) -> str:
    """The cause of ``group`` as seen in ``shown`` (its shrunk run, or a member)."""
    if group.kind in ("crash", "timeout"):
        check = _check(group, shown)
        side = " (eager)" if _eager(shown) else ""
        # Memory a primitive corrupts kills with SIGSEGV one time and SIGABRT another.
        died = "a hang" if group.kind == "timeout" else "a crash"
        # Compiled checks share the compiler, where one bug kills many operations; a
        # transform's crash is its primitive's (each has its own jvp, vjp, vmap).
        who = "" if check in COMPILED else f"{_who(group, shown)}: "
        return f"{who}{died} in the {check} check{side}" if check else f"{who}{died}"
    if group.kind == "error":
        seen = group.matching(shown)
        text = seen[0].get("detail", "") if seen else ""
        return f"{group.check} raises {_said(str(text))}"
    seen = group.matching(shown)
    repro = seen[0].get("repro", {}) if seen else {}
    if group.check == "specials" and "special" in repro:  # one constant or input, many ops
        how = "captured" if repro.get("constant") else "as an input"
        return f"specials: compiled differs from eager with {repro['special']} {how}"
    graph = composed(group, shown)
    if graph is not None and graph.path:  # a composition's wrong answer is its graph's
        return f"{graph.path}: {group.kind} through {'+'.join(graph.primitives)}"
    if group.check == "integers" and group.kind == "wrong-value":
        # MLX differentiates an integer or bool input as if it were a float, then casts the
        # derivative to its dtype, in every operation: one cause, not one per operation.
        return "integers: a derivative by an integer or bool argument is not zero"
    return f"{_who(group, shown)}: {group.kind} ({group.check})"


@dataclass(frozen=True)
class Composed:
    """The graph a composed check went wrong in: its path of transforms and its primitives,
    the transforms' own moves (vmap's and grad's reshapes and expansions) left out, sorted."""

    path: str
    primitives: tuple[str, ...]

    def about(self, entry: Entry) -> bool:
        """Whether ``entry`` is about this graph: tagged with the same ways of compiling and
        mapping as the path, and about a function built of one of its primitives."""
        if {w for w in _PATH_WORDS if w in self.path} != _PATH_WORDS & set(entry.tags):
            return False
        return bool({CLASS_OF.get(p, p) for p in self.primitives} & _primitives(entry))


def composed(group: Group, shown: CaseResult) -> Composed | None:
    """The graph ``group``'s finding in ``shown`` is about: a composed check's, its path and
    primitives; or a single call's of an operation MLX builds of others (median of a sort, a
    complex norm of an abs), its primitives under an empty path. None for another finding: a
    graph's, a call of an operation that is a primitive of its own (sort is a Sort: its
    finding is its own), or one whose graph the child could not read."""
    seen = (
        group.matching(shown) if shown.task.case.graph is None or group.check == "compose" else []
    )
    if not seen or not seen[0].get("made_by"):
        return None
    made = set(seen[0]["made_by"])
    if group.check == "compose":
        return Composed(
            str(seen[0].get("repro", {}).get("path", "")), tuple(sorted(made - PLUMBING))
        )
    own = ALIAS_OF.get(group.op, group.op).replace("_", "").lower()
    if any(name.lower() == own for name in made) or not made - PLUMBING:
        return None
    return Composed("", tuple(sorted(made - PLUMBING)))


def _said(text: str) -> str:
    """MLX's message without what varies between operations and runs: numbers, generated
    names (a kernel's), and what follows a quote (a command line)."""
    text = _GENERATED.sub("K", text.split('"', 1)[0])
    return _SHAPES.sub("(shape)", _NUMBERS.sub("N", text)).strip()[:160]


def _names(entry: Entry, group: Group, ops: Sequence[str], graph: Composed | None = None) -> int:
    """How surely ``entry`` is about ``group``'s operation: 3 when one of its sweep cases
    found it, 2 when it is tagged with it, 1 when its code names it (``mx.op``,
    ``mx.fft.op``, a method call ``x.op(``) or when it is about the ``graph`` of a
    composition (see :meth:`Composed.about`), else 0. Prose is not read: "each slice" is
    not ``x[2]``."""
    if entry.found_by is not None and entry.found_by.case in {
        r.task.case.id for r in group.results
    }:
        return 3
    names = {name for op in ops for name in _spellings(op)}
    if names & set(entry.tags):
        return 2
    for name in names:
        call = rf"mx\.(?:\w+\.)?{re.escape(name)}\b|\.{re.escape(name)}\s*\("
        if re.search(call, entry.code or "") or re.search(call, str(entry.gradcheck or "")):
            return 1
    if graph is not None and graph.about(entry):
        return 1
    return 1 if any(_built_as(op, entry) for op in ops) else 0


def _primitives(entry: Entry) -> set[str]:
    """The primitives of the MLX functions ``entry`` is about, from the shipped index."""
    index = mlx_places.shipped()
    return {cls for function in mlx_places.called(entry, index) for cls in index.nearest(function)}


def _built_as(op: str, entry: Entry) -> bool:
    """Whether MLX builds ``op`` from one primitive alone, and a function the entry is about
    (named by its tags or title) is that primitive: tril, triu and nan_to_num are a
    ``Select``, which is ``where``. From the index of MLX's sources shipped in the package."""
    index = mlx_places.shipped()
    function = ALIAS_OF.get(op, op)
    levels = index.functions.get(function, ())
    own = [*index.nearest(function)]
    if not levels or levels[0] or len(own) != 1:
        return False  # a primitive of its own, or built of several
    return any(index.functions[f][:1] == [own] for f in mlx_places.named(entry, index))


# Causes that are no operation, and the tag an entry about each carries.
CAUSE_TAGS = {"an output returned twice": "repeated-output"}


def _spellings(op: str) -> set[str]:
    """The catalogue's ``op``, the function an alias of it names, and for a cause that is
    no operation, the tag its entry carries."""
    return {op, ALIAS_OF.get(op, op)} | ({CAUSE_TAGS[op]} if op in CAUSE_TAGS else set())


def matches(
    entry: Entry,
    group: Group,
    check: str,
    mlx: Version,
    backend: str,
    ops: Sequence[str] | None = None,
    graph: Composed | None = None,
) -> int:
    """How surely ``entry`` is the known bug (or guard) behind ``group``, seen by ``check``
    (see :func:`_names`; ``ops``: what it is about, by default its operation; ``graph``:
    a composition's); 0 when it is not."""
    if entry.bug.affects and not entry.bug.expected(mlx, backend):
        return 0  # a bug this release should not have
    if entry.requires.mlx is not None and not entry.requires.mlx.contains(mlx, prereleases=True):
        return 0  # nor one whose reproducer it cannot run (max of an empty array before 0.32.1)
    crash = group.kind in ("crash", "timeout")
    wanted = {Outcome.CRASH, Outcome.TIMEOUT} if crash else {Outcome.FAIL}
    if not wanted & set(entry.bug.outcomes):
        return 0
    if "complex" in entry.tags and "1j" not in str(group.results[0].task.spec.get("fn", "")):
        return 0  # an entry about complex input, and a real call (complex ones are a + 1j * b)
    # A crash differentiating by an integer argument (the integers check) is the operation's
    # jvp or vjp dying, which an entry tagged with either holds; its wrong value is not.
    tags = TAGS.get(check, {check}) | (TAGS["subsets"] if crash and check == "integers" else set())
    if "second-order" in entry.tags:
        tags -= {"grad"}  # there "grad" is the grad of a grad: a first-order check is not it
    if check and not tags & set(entry.tags):
        return 0
    sure = _names(entry, group, ops or [group.op], graph)
    if not sure and crash and entry.bug.affects and check in _compiled_checks(entry):
        # Such a crash's cause is the compiled check alone (see cause_of): an open crash of
        # that check is it, whichever operation the entry's reproducer happens to use.
        return 1
    return sure


def _compiled_checks(entry: Entry) -> set[str]:
    """The compiled checks ``entry`` is about: the most specific its tags name (an entry
    tagged shapeless is tagged compile too, and is no plain compile bug)."""
    tagged = set(entry.tags) & set(COMPILED)
    return tagged - {"compile"} or tagged


def causes(
    groups: Sequence[Group],
    shown: Sequence[CaseResult],
    entries: Sequence[Entry],
    mlx: str | None,
    backend: str | None,
) -> list[Cause]:
    """The groups by cause, in first-seen order, each with the corpus entry it matches."""
    try:
        version = Version(mlx or "")
    except InvalidVersion:
        version = None
    found: dict[str, Cause] = {}
    for group, run in zip(groups, shown, strict=True):
        key = cause_of(group, run)
        cause = found.setdefault(key, Cause(key))
        cause.groups.append(group)
        if version is not None and backend:
            check, ops = _check(group, run), operations(group, run)
            graph = composed(group, run)
            held, least = entries, 1
            if _eager(run):
                # The operation's own crash, neither the check's nor the compiler's: an entry
                # tagged with the operation holds it, not one whose code happens to call it.
                check, least = "", 2
                held = [e for e in entries if not set(COMPILED) & set(e.tags)]
            for entry in held:  # the surest match of any of the cause's groups
                sure = matches(entry, group, check, version, backend, ops, graph)
                # Documented behaviour explains a finding before a bug does: of two entries
                # as sure (a graph's divmod and matmul), the guard.
                guard = not entry.bug.affects
                better = sure > cause.sure or (sure == cause.sure and guard and not cause.by_design)
                if sure >= least and better:
                    cause.entry, cause.by_design, cause.sure = entry.id, guard, sure
    return list(found.values())


def settled(
    groups: Sequence[Group], entries: Sequence[Entry], mlx: str | None, backend: str | None
) -> tuple[dict[int, str], set[int]]:
    """How ``groups`` (by index) are shrunk: those that need no shrinking, each with why, and
    those whose cause no entry holds, shrunk first. A cause a corpus entry holds is shrunk
    once, in its first group; its other groups are spared where shrinking cannot change
    their cause (a call's, an error's, a compiled crash's), so that the budget goes to what
    is new rather than to a known bug seen again, and what may be new goes before the known
    so that a budget running out leaves a known cause unshrunk first."""
    shown = [g.representative() for g in groups]
    where = {id(g): i for i, g in enumerate(groups)}
    spared: dict[int, str] = {}
    unheld: set[int] = set()
    for cause in causes(groups, shown, entries, mlx, backend):
        if cause.entry is None:
            unheld |= {where[id(g)] for g in cause.groups}
            continue
        for g in cause.groups[1:]:
            i = where[id(g)]
            if _steady(g, shown[i]):
                spared[i] = f"its cause is {cause.entry}'s, shrunk in another finding"
    return spared, unheld


def _steady(group: Group, shown: CaseResult) -> bool:
    """Whether shrinking leaves ``group``'s cause as it is: only a graph's can change, as it
    drops operations, unless what it died of or raised names no operation."""
    if shown.task.case.graph is None or group.kind == "error" or group.check == "integers":
        return True
    crash = group.kind in ("crash", "timeout")
    return crash and not _eager(shown) and _check(group, shown) in COMPILED
