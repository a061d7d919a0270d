"""``mgradcheck bisect``: which MLX release fixed (or broke) one corpus entry, on real releases.

plan (pick and check the ends) -> check both ends -> least-satisfying search
(:mod:`mgradcheck.releases.search`) over the releases between, each probe a real run in
the release's cached environment (:mod:`mgradcheck.releases.runs`) -> report.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import ReleaseError
from mgradcheck.releases.commits import release_tag, version_commit
from mgradcheck.releases.index import Listing, list_releases
from mgradcheck.releases.regress import Judged, RegressOn, State, judge_run, recorded
from mgradcheck.releases.runs import Settings, Status, run_release
from mgradcheck.releases.search import Satisfies, least_satisfying, steps_left
from mgradcheck.run.display import Progress, markup_safe

if TYPE_CHECKING:
    from rich.console import Console

COMPARE = "https://github.com/ml-explore/mlx/compare/{}...{}"
SCHEMA = "mgradcheck-bisect"
SCHEMA_VERSION = 1


# An end picked from the entry that cannot be judged (not installable, or the entry's code
# does not run there) is replaced by the next candidate, at most this many times.
FALLBACKS = 3


@dataclass(frozen=True)
class Plan:
    """Candidates for each end, preferred first, and the releases the entry allows, oldest first.

    An end the user names has one candidate; an end taken from the entry has
    a few, tried in order until one can be judged.
    """

    good: tuple[Version, ...]
    bad: tuple[Version, ...]
    allowed: tuple[Version, ...]

    @property
    def direction(self) -> str:
        return direction(self.good[0], self.bad[0])

    def between(self, good: Version, bad: Version) -> tuple[Version, ...]:
        low, high = min(good, bad), max(good, bad)
        return tuple(v for v in self.allowed if low <= v <= high)


def direction(good: Version, bad: Version) -> str:
    """``fix`` when the good end is the newer one, else ``regression``."""
    return "fix" if good > bad else "regression"


def _allowed(entry: Entry, versions: Sequence[Version]) -> list[Version]:
    spec = entry.requires.mlx
    return [v for v in versions if spec is None or spec.contains(v, prereleases=True)]


def default_ends(
    entry: Entry, versions: Sequence[Version], backend: str
) -> tuple[list[Version], list[Version]]:
    """Candidates for (good, bad) from the entry, preferred first.

    A fixed bug: bad is the newest release before ``fixed_in`` (and from
    ``introduced_in``), good the newest release, so a fix recorded too early
    or too late shows up. A regression: good is the newest release before
    ``introduced_in``, bad the newest. Neither: the oldest against the newest.
    """
    fixed = entry.bug.fixed_in.get(backend)
    introduced = entry.bug.introduced_in.get(backend)
    newest_first = sorted(versions, reverse=True)
    if fixed is not None:
        buggy = [v for v in newest_first if v < fixed and (introduced is None or v >= introduced)]
        return newest_first, buggy or sorted(versions)
    if introduced is not None:
        clean = [v for v in newest_first if v < introduced]
        return clean or sorted(versions), newest_first
    return sorted(versions), newest_first


def plan(
    entry: Entry, listing: Listing, good: Version | None = None, bad: Version | None = None
) -> Plan:
    versions = _allowed(entry, listing.versions)
    for end in (good, bad):
        if end is None:
            continue
        listing.require(end)
        if end not in versions:
            raise ReleaseError(f"{entry.id} needs mlx {entry.requires.mlx}; {end} is outside that")
    if len(versions) < 2:
        reason = listing.empty_reason() if not versions else "only one release"
        raise ReleaseError(f"{reason} to bisect {entry.id} on")
    default_good, default_bad = default_ends(entry, versions, listing.target.device)
    goods = [good] if good is not None else [v for v in default_good if v != bad][: FALLBACKS + 1]
    bads = (
        [bad]
        if bad is not None
        else [v for v in default_bad if v not in goods[:1]][: FALLBACKS + 1]
    )
    if not goods or not bads or goods[0] == bads[0]:
        raise ReleaseError("--good and --bad must be two different releases")
    return Plan(tuple(goods), tuple(bads), tuple(versions))


def probe_json(probe: Judged) -> dict[str, Any]:
    return {"version": str(probe.version), **probe.to_json()}


def tag(version: Version) -> str:
    """The upstream git ref of a release, or the commit of a build of one (``+6335c834c``)."""
    return version_commit(version) or release_tag(version)


@dataclass(frozen=True)
class BisectResult:
    entry_id: str
    content_hash: str
    regress_on: RegressOn
    pattern: str | None
    target: str
    good: Version
    bad: Version
    versions: tuple[Version, ...]  # the releases between the ends, oldest first
    probes: tuple[Judged, ...]
    boundary: tuple[Version, Version] | None = None  # (older, newer), adjacent but for unknowns
    stopped: str | None = None  # why there was nothing to search, as a sentence
    recorded: str | None = None  # what the corpus says about where the change is, if it disagrees
    reproduce: str = ""

    @property
    def direction(self) -> str:
        return direction(self.good, self.bad)

    @property
    def unknown_between(self) -> list[Version]:
        if self.boundary is None:
            return []
        older, newer = self.boundary
        return [v for v in self.versions if older < v < newer]

    @property
    def compare_url(self) -> str | None:
        if self.boundary is None:
            return None
        return COMPARE.format(tag(self.boundary[0]), tag(self.boundary[1]))

    def headline(self) -> str:
        if self.stopped is not None or self.boundary is None:
            return self.stopped or "no result"
        older, newer = self.boundary
        gap = f" ({len(self.unknown_between)} unknown between)" if self.unknown_between else ""
        if self.direction == "fix":
            return f"last bad: mlx {older}; first good: mlx {newer}{gap}"
        return f"last good: mlx {older}; first bad: mlx {newer}{gap}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "entry": self.entry_id,
            "content_hash": self.content_hash,
            "regress_on": self.regress_on.label,
            "match": self.pattern,
            "target": self.target,
            "good": str(self.good),
            "bad": str(self.bad),
            "direction": self.direction,
            "releases": [str(v) for v in self.versions],
            "boundary": [str(v) for v in self.boundary] if self.boundary else None,
            "unknown_between": [str(v) for v in self.unknown_between],
            "compare": self.compare_url,
            "stopped": self.stopped,
            "headline": self.headline(),
            "recorded": self.recorded,
            "reproduce": self.reproduce,
            "probes": [probe_json(p) for p in self.probes],
        }


def reproduce_command(
    entry_id: str,
    good: Version,
    bad: Version,
    regress_on: RegressOn,
    pattern: str | None,
    extra: Sequence[str],
) -> str:
    argv = ["mgradcheck", "bisect", entry_id, "--good", str(good), "--bad", str(bad)]
    if regress_on is not RegressOn.SIGNATURE:
        argv += ["--regress-on", regress_on.label]
    if pattern is not None:
        argv += ["--match", pattern]
    return shlex.join([*argv, *extra])


def _disagreement(
    entry: Entry, backend: str, fix: bool, older: Version, newer: Version
) -> str | None:
    """A sentence when the corpus records the change somewhere this bisect did not find it."""
    found = recorded(entry, backend, fix, older, newer)
    if found is None or found.agrees:
        return None
    return (
        f"the corpus records {found.key} {found.version} for {backend}, but this bisect puts the "
        f"change between {older} and {newer}: the entry may need updating"
    )


def bisect(
    entry: Entry,
    the_plan: Plan,
    settings: Settings,
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
    status: Status | None = None,
    on_probe: Callable[[Judged, int], None] | None = None,
    extra_args: Sequence[str] = (),
) -> BisectResult:
    """Check both ends, then search between them; every probe is one release, run once at most."""
    probes: dict[Version, Judged] = {}
    say = status or (lambda text: None)
    estimate = 2 + steps_left(
        len(the_plan.allowed), {0: Satisfies.NO, len(the_plan.allowed) - 1: Satisfies.YES}
    )

    def probe(version: Version, left: int) -> Judged:
        if version not in probes:
            step = f"[{len(probes) + 1}/<={len(probes) + 1 + left}]"
            (run,) = run_release(version, [entry], settings, lambda text: say(f"{step} {text}"))
            probes[version] = judge_run(entry, run, regress_on, pattern)
            if on_probe is not None:
                on_probe(probes[version], left)
        return probes[version]

    def end(candidates: Sequence[Version], left: int) -> Judged:
        """The first candidate that can be judged (the last one tried when none can)."""
        for version in candidates:
            found = probe(version, left)
            if found.state is not State.UNKNOWN:
                break
        return found

    good = end(the_plan.good, estimate - 1)
    bad = end(the_plan.bad, estimate - 2)
    versions = the_plan.between(good.version, bad.version)
    common: dict[str, Any] = {
        "entry_id": entry.id,
        "content_hash": entry.content_hash,
        "regress_on": regress_on,
        "pattern": pattern,
        "target": settings.target.describe(),
        "good": good.version,
        "bad": bad.version,
        "versions": versions,
    }
    stopped = ends_disagree(End.release(good), End.release(bad), regress_on)
    if stopped is not None:
        return BisectResult(probes=tuple(probes.values()), stopped=stopped, **common)

    upper = probes[versions[-1]].state

    def predicate(index: int, left: int) -> Satisfies:
        state = probe(versions[index], left).state
        if state is State.UNKNOWN:
            return Satisfies.UNKNOWN
        return Satisfies.YES if state is upper else Satisfies.NO

    known = {0: Satisfies.NO, len(versions) - 1: Satisfies.YES}
    found, _ = least_satisfying(len(versions), predicate, known)
    older, newer = versions[found.last_no], versions[found.first_yes]
    fix = direction(good.version, bad.version) == "fix"
    good_end, bad_end = (newer, older) if fix else (older, newer)
    recorded = None
    if regress_on is RegressOn.SIGNATURE:
        recorded = _disagreement(entry, settings.target.device, fix, older, newer)
    return BisectResult(
        probes=tuple(probes.values()),
        boundary=(older, newer),
        recorded=recorded,
        reproduce=reproduce_command(entry.id, good_end, bad_end, regress_on, pattern, extra_args),
        **common,
    )


def bisect_entry(
    entry: Entry,
    settings: Settings,
    regress_on: RegressOn,
    pattern: str | None,
    good: Version | None,
    bad: Version | None,
    progress: Progress,
    corpus_args: Sequence[str] = (),
) -> BisectResult:
    """The whole ``bisect`` command below its options: list, plan, search, with progress.

    ``corpus_args`` are the options that name the corpus, for the reproduce command.
    """
    pre = settings.pre or any(v is not None and v.is_prerelease for v in (good, bad))
    listing = list_releases(settings.source, settings.target, pre, settings.yanked)
    the_plan = plan(entry, listing, good, bad)
    progress.start(f"bisect {entry.id}")
    try:
        return bisect(
            entry,
            the_plan,
            settings,
            regress_on,
            pattern,
            status=progress.status,
            on_probe=lambda p, left: progress.line(probe_line(p, left)),
            extra_args=[*corpus_args, *settings.cli_args()],
        )
    finally:
        progress.stop()


@dataclass(frozen=True)
class End:
    """One end of a bisect, judged: ``name`` for sentences ("mlx 0.32.0"), ``ref`` for options."""

    name: str
    ref: str
    state: State
    reason: str

    @classmethod
    def release(cls, probe: Judged) -> End:
        return cls(f"mlx {probe.version}", str(probe.version), probe.state, probe.reason)


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


def probe_line(probe: Judged, left: int) -> str:
    """One finished probe, for the progress display."""
    stored = " (stored)" if probe.cached else ""
    more = f"  [at most {left} more]" if left else ""
    return (
        f"mlx {probe.version}: {probe.state.label}: {probe.outcome}: {probe.reason}{stored}{more}"
    )


def render(result: BisectResult, console: Console) -> None:
    """The report: every probe in release order, then the answer, the compare link and how to rerun."""
    from rich.table import Table

    console.print(
        f"[bold]bisect {result.entry_id}[/] ({result.target}): bad means {result.regress_on.meaning}"
    )
    table = Table(show_lines=False)
    for name in ("mlx", "probe", "state", "outcome", "reason"):
        table.add_column(name, overflow="fold", no_wrap=name in ("mlx", "probe"))
    order = {p.version: i + 1 for i, p in enumerate(result.probes)}
    edges = set(result.boundary or ())
    for version in result.versions:
        probe = next((p for p in result.probes if p.version == version), None)
        if probe is None:
            table.add_row(str(version), "", "[dim]not needed[/]", "", "")
            continue
        edge = " <" if version in edges else ""
        step = f"#{order[version]}" + (" stored" if probe.cached else "")
        state = f"[{probe.state.colour}]{probe.state.label}[/]{edge}"
        reason = probe.reason.strip().splitlines()[0] if probe.reason.strip() else ""
        table.add_row(str(version), step, state, probe.outcome, markup_safe(reason))
    console.print(table)
    if result.boundary is not None:
        older, newer = ("bad", "good") if result.direction == "fix" else ("good", "bad")
        console.print(f"[dim]<  the boundary: the last {older} and the first {newer} release[/]")
    console.print(f"[bold]{result.headline()}[/]")
    if result.compare_url:
        console.print(f"changes between them: {result.compare_url}", soft_wrap=True)
    if result.unknown_between:
        console.print(
            f"could not judge between them: {', '.join(map(str, result.unknown_between))}"
        )
    if result.recorded:
        console.print(f"note: {markup_safe(result.recorded)}", soft_wrap=True)
    if result.reproduce:
        console.print(f"reproduce with: {result.reproduce}", soft_wrap=True, markup=False)
