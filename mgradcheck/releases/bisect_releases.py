"""``mgradcheck bisect``: which MLX release fixed (or broke) one corpus entry, on real releases.

plan (pick and check the ends) -> the bisection driver (:mod:`mgradcheck.releases.bisection`)
over the releases between, each probe a real run in the release's cached environment
(:mod:`mgradcheck.releases.on_release`) -> report (:mod:`mgradcheck.reports.bisect`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from mgradcheck.builds.builder import ShowStatus
from mgradcheck.builds.commits import tag
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import ReleaseError
from mgradcheck.index.installable import Listing, list_releases
from mgradcheck.releases import bisection
from mgradcheck.releases.bisection import Bisection, End, Kind, Plan
from mgradcheck.releases.on_release import run_release
from mgradcheck.releases.regress import Judged, RegressOn, judge_run, recorded
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.bisect import BisectView
from mgradcheck.run.display import Progress

SCHEMA = "mgradcheck-bisect"
SCHEMA_VERSION = 1


# An end picked from the entry that cannot be judged (not installable, or the entry's code
# does not run there) is replaced by the next candidate, at most this many times.
FALLBACKS = 3


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
) -> Plan[Version]:
    """The ends' candidates among the releases the entry allows (oldest first, as listed)."""
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


@dataclass(frozen=True)
class Releases(Kind[Version, Judged]):
    """Releases as the points of a bisect: each probe runs in the release's cached environment."""

    def end(self, point: Version, probe: Judged) -> End:
        return End(f"mlx {point}", str(point), probe.state, probe.reason)

    def ref(self, point: Version) -> str:
        return str(point)

    def git_ref(self, point: Version) -> str:
        return tag(point)

    def probe(self, point: Version, say: ShowStatus) -> Judged:
        (run,) = run_release(point, [self.entry], self.settings, say)
        return judge_run(self.entry, run, self.regress_on, self.pattern)


@dataclass(frozen=True)
class BisectResult(Bisection[Version, Judged]):
    """A bisect over releases, and where the corpus records the change otherwise."""

    recorded: str | None = None  # what the corpus says about where the change is, if it disagrees

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
            **self._head(SCHEMA, str),
            "releases": [str(v) for v in self.points],
            "boundary": [str(v) for v in self.boundary] if self.boundary else None,
            "unknown_between": [str(v) for v in self.unknown_between],
            "compare": self.compare_url,
            "stopped": self.stopped,
            "headline": self.headline(),
            "recorded": self.recorded,
            "reproduce": self.reproduce,
            "probes": [{"version": str(p.version), **p.to_json()} for p in self.probes],
        }

    def view(self) -> BisectView:
        """The report's values: every release between the ends, the probed ones numbered."""
        legend = None
        if self.boundary is not None:
            older, newer = ("bad", "good") if self.direction == "fix" else ("good", "bad")
            legend = f"<  the boundary: the last {older} and the first {newer} release"
        return BisectView(
            f"bisect {self.entry_id}",
            self.target,
            self.regress_on.meaning,
            ("mlx", "probe", "state", "outcome", "reason"),
            tuple(self._rows(lambda p: p.version, str, _first_line)),
            self.headline(),
            self.reproduce,
            legend=legend,
            compare=self.compare_url,
            unknown=tuple(map(str, self.unknown_between)),
            note=self.recorded,
        )


def _first_line(probe: Judged) -> tuple[str]:
    """A probe's reason in the table: its first line."""
    reason = probe.reason.strip()
    return (reason.splitlines()[0] if reason else "",)


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
    the_plan: Plan[Version],
    settings: Settings,
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
    status: ShowStatus | None = None,
    on_probe: Callable[[Judged, int], None] | None = None,
    extra_args: Sequence[str] = (),
) -> BisectResult:
    """Check both ends, then search between them; every probe is one release, run once at most."""
    kind = Releases(entry, settings, regress_on, pattern, tuple(extra_args))
    result = bisection.bisect(kind, the_plan, BisectResult, status, on_probe)
    if result.boundary is None or regress_on is not RegressOn.SIGNATURE:
        return result
    fix = result.direction == "fix"
    found = _disagreement(entry, settings.target.device, fix, *result.boundary)
    return dataclasses.replace(result, recorded=found)


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


def probe_line(probe: Judged, left: int) -> str:
    """One finished probe, for the progress display."""
    stored = " (stored)" if probe.cached else ""
    more = f"  [at most {left} more]" if left else ""
    return (
        f"mlx {probe.version}: {probe.state.label}: {probe.outcome}: {probe.reason}{stored}{more}"
    )


__all__ = [
    "BisectResult",
    "Releases",
    "bisect",
    "bisect_entry",
    "default_ends",
    "plan",
    "probe_line",
    "tag",
]
