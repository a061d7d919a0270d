"""One bisection driver for releases and for commits, each a kind of point, and its pure search.

A kind (:class:`Kind`) says how its points are named in sentences and on the
command line, their upstream git ref (for the compare link) and how to probe one:
install a release, or build a commit, then run the entry there and judge the
runs. The driver does the rest once for both: every probe memoised with its
``[n/<=m]`` counter, both ends checked first (an end that cannot be judged gives
way to the next candidate), the search between them, and a result that says where
the entry changed and how to ask again.

The search (:func:`least_satisfying`) is pure and memoised, over Yes / No / Unknown.
Items are ordered from one known end (``No``) to the other (``Yes``); it finds a
``No`` followed by a ``Yes`` with only ``Unknown`` items between them. An Unknown
item (a release that cannot be installed, a commit that does not build, a run that
cannot be judged) is routed around: the next probe is the untested item nearest
the middle of the open range. Every item is asked at most once, and the search does
no I/O: the caller's predicate does.
"""

from __future__ import annotations

import enum
import math
import shlex
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from mgradcheck.builds.builder import ShowStatus
from mgradcheck.builds.commits import COMPARE
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import Interrupted
from mgradcheck.releases.regress import RegressOn, State
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.bisect import Row


class Satisfies(enum.Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Boundary:
    """Where the answer changes: the last No, the first Yes, and the Unknowns between them."""

    last_no: int
    first_yes: int

    @property
    def between(self) -> range:
        return range(self.last_no + 1, self.first_yes)


def _window(count: int, known: Mapping[int, Satisfies]) -> tuple[int, int]:
    """The open range still in question: (rightmost No left of the leftmost Yes, leftmost Yes)."""
    if known.get(0) is not Satisfies.NO or known.get(count - 1) is not Satisfies.YES:
        raise ValueError("the first item must be known No and the last known Yes")
    first_yes = min(i for i, s in known.items() if s is Satisfies.YES)
    last_no = max(i for i, s in known.items() if s is Satisfies.NO and i < first_yes)
    return last_no, first_yes


def next_probe(count: int, known: Mapping[int, Satisfies]) -> int | None:
    """The next item to ask about, or None when the boundary is found."""
    low, high = _window(count, known)
    untested = [i for i in range(low + 1, high) if i not in known]
    if not untested:
        return None
    middle = (low + high) / 2
    return min(untested, key=lambda i: (abs(i - middle), i))


def steps_left(count: int, known: Mapping[int, Satisfies]) -> int:
    """At most this many more probes, if none of them is Unknown."""
    low, high = _window(count, known)
    untested = sum(1 for i in range(low + 1, high) if i not in known)
    return math.ceil(math.log2(untested + 1))


def boundary(count: int, known: Mapping[int, Satisfies]) -> Boundary:
    low, high = _window(count, known)
    return Boundary(low, high)


def least_satisfying(
    count: int,
    predicate: Callable[[int, int], Satisfies],
    known: Mapping[int, Satisfies],
) -> tuple[Boundary, dict[int, Satisfies]]:
    """Search items ``0..count-1``; return the boundary and every answer, asking each item once.

    ``known`` holds the answers already had, at least both ends (No first, Yes
    last); the predicate is asked about the others it needs, with the item and
    how many probes at most remain after that one (for progress displays).
    """
    answers = dict(known)
    while (index := next_probe(count, answers)) is not None:
        answers[index] = predicate(index, steps_left(count, answers) - 1)
    return boundary(count, answers), answers


class Probe(Protocol):
    """What the driver and the report read of a judged probe."""

    @property
    def state(self) -> State: ...
    @property
    def outcome(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def cached(self) -> bool: ...


P = TypeVar("P")  # a point: a release's Version, a Commit
J = TypeVar("J", bound=Probe)  # a point, probed and judged


def direction(points: Sequence[P], good: P, bad: P) -> str:
    """``fix`` when the good end is the newer one, else ``regression``."""
    return "fix" if points.index(good) > points.index(bad) else "regression"


@dataclass(frozen=True)
class Plan(Generic[P]):
    """Candidates for each end, preferred first, among the points either may be, oldest first.

    An end the user names has one candidate; an end taken from the entry has a
    few, tried in order until one can be judged.
    """

    good: tuple[P, ...]
    bad: tuple[P, ...]
    points: tuple[P, ...]
    good_first: bool = True  # which end is probed (and numbered) first

    @property
    def direction(self) -> str:
        return direction(self.points, self.good[0], self.bad[0])

    def between(self, good: P, bad: P) -> tuple[P, ...]:
        low, high = sorted((self.points.index(good), self.points.index(bad)))
        return self.points[low : high + 1]


@dataclass(frozen=True)
class End:
    """One end of a bisect, judged: ``name`` for sentences ("mlx 0.32.0"), ``ref`` for options."""

    name: str
    ref: str
    state: State
    reason: str


def ends_disagree(good: End, bad: End, regress_on: RegressOn, kind: str = "release") -> str | None:
    """None when the good end is good and the bad end bad; else the sentences that stop the bisect.

    What the probes showed and what "bad" means are said apart: the reasons come
    from the runs, the meaning from ``--regress-on``.
    """
    for end, role in ((good, "--good"), (bad, "--bad")):
        if end.state is State.UNKNOWN:
            return f"Cannot judge {end.name} ({role}): {end.reason}. Pick another {role} {kind}."
    if good.state is State.GOOD and bad.state is State.BAD:
        return None
    seen = (
        f"{good.name} (--good): {good.state.label}, {good.reason}; "
        f"{bad.name} (--bad): {bad.state.label}, {bad.reason}. "
        f"Bad means {regress_on.meaning} (--regress-on {regress_on.label})."
    )
    if good.state is State.BAD and bad.state is State.GOOD:
        return (
            f"The ends are the wrong way round: swap them (--good {bad.ref} --bad "
            f"{good.ref}) to find where that changed. {seen}"
        )
    return (
        f"{good.name} and {bad.name} are both {good.state.label}, so there is no "
        f"change between them to find. {seen}"
    )


@dataclass(frozen=True)
class Kind(Generic[P, J]):
    """What is asked of every probe, and what the driver needs to know of one kind of point."""

    entry: Entry
    settings: Settings
    regress_on: RegressOn = RegressOn.SIGNATURE
    pattern: str | None = None
    extra_args: tuple[str, ...] = ()  # options that name the same corpus and MLX, to reproduce

    noun: ClassVar[str] = "release"  # an end, in "Pick another --good release"
    flags: ClassVar[tuple[str, ...]] = ()  # what the reproduce command adds ("--commits")
    resumable: ClassVar[bool] = False  # an interrupt ends it with what finished, else propagates

    def end(self, point: P, probe: J) -> End:
        raise NotImplementedError

    def ref(self, point: P) -> str:
        """How the reproduce command names the point."""
        raise NotImplementedError

    def git_ref(self, point: P) -> str:
        """Upstream's name for the point in its history, for the compare link."""
        raise NotImplementedError

    def probe(self, point: P, say: ShowStatus) -> J:
        """Prepare the point (install, build) and judge the entry's runs there."""
        raise NotImplementedError

    def reproduce(self, good: P, bad: P) -> str:
        argv = ["mgradcheck", "bisect", self.entry.id, *self.flags]
        argv += ["--good", self.ref(good), "--bad", self.ref(bad)]
        if self.regress_on is not RegressOn.SIGNATURE:
            argv += ["--regress-on", self.regress_on.label]
        if self.pattern is not None:
            argv += ["--match", self.pattern]
        return shlex.join([*argv, *self.extra_args])


@dataclass(frozen=True)
class Bisection(Generic[P, J]):
    """What a bisect found, over releases or commits; each kind adds its own fields and JSON."""

    entry_id: str
    content_hash: str
    regress_on: RegressOn
    pattern: str | None
    target: str
    good: P
    bad: P
    points: tuple[P, ...]  # from one end to the other, oldest first
    probes: tuple[J, ...]  # in the order they ran
    boundary: tuple[P, P] | None = None  # (older, newer), adjacent but for unknowns
    compare_url: str | None = None  # upstream's changes across the boundary
    stopped: str | None = None  # why there is no boundary, as sentences
    reproduce: str = ""
    signum: int = (
        0  # the signal that interrupted it (SIGINT, SIGTERM): the probes are what finished
    )

    @property
    def interrupted(self) -> bool:
        return self.signum != 0

    @property
    def direction(self) -> str:
        return direction(self.points, self.good, self.bad)

    @property
    def unknown_between(self) -> list[P]:
        if self.boundary is None:
            return []
        older, newer = (self.points.index(p) for p in self.boundary)
        return list(self.points[older + 1 : newer])

    def _head(self, schema: str, ref: Callable[[P], str]) -> dict[str, Any]:
        """The JSON both kinds begin with."""
        return {
            "schema": schema,
            "schema_version": 1,
            "entry": self.entry_id,
            "content_hash": self.content_hash,
            "regress_on": self.regress_on.label,
            "match": self.pattern,
            "target": self.target,
            "good": ref(self.good),
            "bad": ref(self.bad),
            "direction": self.direction,
        }

    def _rows(
        self,
        point: Callable[[J], P],
        label: Callable[[P], str],
        cells: Callable[[J], tuple[str, ...]],
    ) -> list[Row]:
        """Every point in history order, its probe's number and judgement where it has one:
        ``label`` names a point in the table, ``cells`` are the kind's columns after the outcome."""
        numbered = {point(p): (i + 1, p) for i, p in enumerate(self.probes)}
        edges = set(self.boundary or ())
        rows = []
        for each in self.points:
            if each not in numbered:
                rows.append(Row(label(each)))
                continue
            number, probe = numbered[each]
            state = probe.state
            shown = (probe.outcome, *cells(probe))
            edge = each in edges
            rows.append(
                Row(label(each), number, probe.cached, state.label, state.colour, edge, shown)
            )
        return rows


R = TypeVar("R", bound=Bisection[Any, Any])


def bisect(
    kind: Kind[P, J],
    plan: Plan[P],
    result: type[R],
    status: ShowStatus | None = None,
    on_probe: Callable[[J, int], None] | None = None,
) -> R:
    """Check both ends, then search between them; every probe is one point, run once at most."""
    probes: dict[P, J] = {}
    say = status or (lambda text: None)
    count = len(plan.points)
    estimate = 2 + steps_left(count, {0: Satisfies.NO, count - 1: Satisfies.YES})

    def probe(point: P, left: int) -> J:
        if point not in probes:
            step = f"[{len(probes) + 1}/<={len(probes) + 1 + left}]"
            probes[point] = kind.probe(point, lambda text: say(f"{step} {text}"))
            if on_probe is not None:
                on_probe(probes[point], left)
        return probes[point]

    def end(candidates: Sequence[P], left: int) -> P:
        """The first candidate that can be judged (the last one tried when none can)."""
        for point in candidates:
            if probe(point, left).state is not State.UNKNOWN:
                break
        return point

    def finish(good: P, bad: P, **found: Any) -> R:
        return result(
            entry_id=kind.entry.id,
            content_hash=kind.entry.content_hash,
            regress_on=kind.regress_on,
            pattern=kind.pattern,
            target=kind.settings.target.describe(),
            good=good,
            bad=bad,
            points=plan.between(good, bad),
            probes=tuple(probes.values()),
            **found,
        )

    try:
        first = end(plan.good if plan.good_first else plan.bad, estimate - 1)
        second = end(plan.bad if plan.good_first else plan.good, estimate - 2)
        good, bad = (first, second) if plan.good_first else (second, first)
        points = plan.between(good, bad)
        ends = (kind.end(good, probes[good]), kind.end(bad, probes[bad]))
        stopped = ends_disagree(*ends, kind.regress_on, kind.noun)
        if stopped is not None:
            return finish(good, bad, stopped=stopped)
        upper = probes[points[-1]].state

        def predicate(index: int, left: int) -> Satisfies:
            state = probe(points[index], left).state
            if state is State.UNKNOWN:
                return Satisfies.UNKNOWN
            return Satisfies.YES if state is upper else Satisfies.NO

        known = {0: Satisfies.NO, len(points) - 1: Satisfies.YES}
        found, _ = least_satisfying(len(points), predicate, known)
    except (Interrupted, KeyboardInterrupt) as exc:
        if not kind.resumable:
            raise
        # A kind whose probes are costly (hours of builds) shows what finished. Nothing is
        # lost for the next run either: what was built, and the judged runs, are all kept.
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        name = signal.Signals(signum).name
        stopped = (
            f"interrupted by {name} after {len(probes)} probes; the same command goes on from there"
        )
        return finish(plan.good[0], plan.bad[0], stopped=stopped, signum=signum)
    older, newer = points[found.last_no], points[found.first_yes]
    good_side, bad_side = (
        (newer, older) if direction(points, good, bad) == "fix" else (older, newer)
    )
    return finish(
        good,
        bad,
        boundary=(older, newer),
        compare_url=COMPARE.format(kind.git_ref(older), kind.git_ref(newer)),
        reproduce=kind.reproduce(good_side, bad_side),
    )


__all__ = ["Bisection", "End", "Kind", "Plan", "bisect", "direction", "ends_disagree"]
