"""``mgradcheck bisect --commits``: below the releases, the commit (and pull request) that changed an entry.

MLX publishes no builds of single commits, so each probe is a wheel built here
(:mod:`mgradcheck.builds`), installed into an environment made like a
release's and run like one (:mod:`mgradcheck.releases.on_release`). The driver is the
release bisect's (:mod:`mgradcheck.releases.bisection`), over the first-parent
history between the ends (:mod:`mgradcheck.builds.commits`); a commit that
does not build is Unknown and routed around, as an uninstallable release is.
An end named as a release is judged on the release itself (from the results
store after a release bisect); an end named as a tag or hash is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mgradcheck.builds import commits, toolchain, wheels
from mgradcheck.builds.builder import BuildFailed, BuildOptions, ShowStatus, build
from mgradcheck.builds.commits import Commit
from mgradcheck.builds.compiler_cache import NONE, Counts
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import UsageError
from mgradcheck.releases import bisection, choice
from mgradcheck.releases.bisect_releases import BisectResult
from mgradcheck.releases.bisection import Bisection, End, Kind, Plan, Satisfies, steps_left
from mgradcheck.releases.on_release import run_release
from mgradcheck.releases.regress import RegressOn, State, judge_run
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.bisect import BisectView, Changed
from mgradcheck.run.display import Progress

SCHEMA = "mgradcheck-commit-bisect"
SCHEMA_VERSION = 1


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest:02d}s" if minutes else f"{rest}s"


@dataclass(frozen=True)
class CommitProbe:
    """One commit, judged: on its release, or on a wheel built from it."""

    commit: Commit
    state: State
    outcome: str
    reason: str
    mlx: str | None = None  # the version that ran: the release, or the wheel's
    how: str = (
        ""  # "release 0.32.0", "built in 4m 12s (97 steps; ...)", "wheel cached", "does not build"
    )
    built: bool = False  # a build ran for this probe
    seconds: float = 0.0  # how long that build took
    cached: bool = False  # the run came from the results store
    steps: int = 0  # the build steps that ran (ninja's count)
    compiled: Counts = NONE  # what ccache served of the compilations that ran

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit.sha,
            "subject": self.commit.subject,
            "state": self.state.label,
            "outcome": self.outcome,
            "reason": self.reason,
            "mlx": self.mlx,
            "how": self.how,
            "built": self.built,
            "build_seconds": round(self.seconds, 1),
            "build_steps": self.steps,
            **self.compiled.to_json(),
            "cached": self.cached,
        }


@dataclass(frozen=True)
class CommitBisect(Bisection[Commit, CommitProbe]):
    """A bisect over commits: the commit found, what its builds cost, the release bisect before."""

    releases: BisectResult | None = None  # the release bisect this one narrowed down
    recorded: str | None = None  # how the entry's fixed_by/introduced_by stands to the answer

    @property
    def changed(self) -> Commit | None:
        """The commit where the entry changed: the fix, or the break."""
        return self.boundary[1] if self.boundary else None

    @property
    def builds(self) -> int:
        return sum(1 for p in self.probes if p.built)

    @property
    def build_seconds(self) -> float:
        return sum(p.seconds for p in self.probes)

    def headline(self) -> str:
        if self.stopped is not None or self.boundary is None:
            return self.stopped or "no result"
        older, newer = self.boundary
        gap = f" ({len(self.unknown_between)} unknown between)" if self.unknown_between else ""
        first, last = ("good", "bad") if self.direction == "fix" else ("bad", "good")
        return f"first {first}: {newer.line()}{gap}\nlast {last}: {older.line()}"

    def to_json(self) -> dict[str, Any]:
        return {
            **self._head(SCHEMA, lambda c: c.sha),
            "commits": len(self.points),
            "boundary": [c.to_json() for c in self.boundary] if self.boundary else None,
            "changed": self.changed.to_json() if self.changed else None,
            "unknown_between": [c.sha for c in self.unknown_between],
            "compare": self.compare_url,
            "stopped": self.stopped,
            "interrupted": self.interrupted,
            "headline": self.headline(),
            "builds": self.builds,
            "build_seconds": round(self.build_seconds, 1),
            "reproduce": self.reproduce,
            "probes": [p.to_json() for p in self.probes],
            "releases": self.releases.to_json() if self.releases else None,
            "recorded": self.recorded,
        }

    def view(self) -> BisectView:
        """The report's values: the probed commits in history order, the commit found, the cost."""
        summary = (
            f"{len(self.points) - 2} commits between the ends, {len(self.probes)} probes, "
            f"{self.builds} builds"
        )
        if self.builds:
            summary += f" ({_duration(self.build_seconds)} building)"
        commit = self.changed
        changed = (
            Changed(commit.url, commit.pull_url, commit.author, commit.date) if commit else None
        )
        rows = self._rows(
            lambda p: p.commit, lambda c: c.short, lambda p: (p.how, p.commit.subject)
        )
        return BisectView(
            f"bisect {self.entry_id} over commits",
            self.target,
            self.regress_on.meaning,
            ("commit", "probe", "state", "outcome", "from", "subject"),
            tuple(r for r in rows if r.number),
            self.headline(),
            self.reproduce,
            summary=summary,
            changed=changed,
            compare=self.compare_url if self.unknown_between else None,
            note=self.recorded,
        )


def searches_at_most(count: int) -> int:
    """Probes between the ends at most (if none is Unknown): one per halving of the commits between."""
    return steps_left(count, {0: Satisfies.NO, count - 1: Satisfies.YES})


@dataclass(frozen=True)
class Commits(Kind[Commit, CommitProbe]):
    """Commits as the points of a bisect: each probe a wheel built here (an end named as a
    release is judged on that release)."""

    options: BuildOptions = field(kw_only=True)
    ends: Mapping[Commit, choice.Mlx] = field(kw_only=True)  # as the user named them

    noun: ClassVar[str] = "end"
    flags: ClassVar[tuple[str, ...]] = ("--commits",)
    resumable: ClassVar[bool] = True  # hours of builds may lie behind an interrupt

    def end(self, point: Commit, probe: CommitProbe) -> End:
        given = self.ends[point]
        name = f"mlx {given}" if isinstance(given, choice.Release) else f"commit {point.short}"
        return End(name, str(given), probe.state, probe.reason)

    def ref(self, point: Commit) -> str:
        return point.sha

    def git_ref(self, point: Commit) -> str:
        return point.sha

    def probe(self, point: Commit, say: ShowStatus) -> CommitProbe:
        given = self.ends.get(point)
        if isinstance(given, choice.Release):
            version, settings, how = given.version, self.settings, f"release {given}"
            wheel = None
        else:
            try:
                wheel = build(
                    point.sha, self.settings.target, self.options, self.settings.source, say
                )
            except BuildFailed as failed:
                how = "does not build" if failed.seconds else "does not build (remembered)"
                return CommitProbe(point, State.UNKNOWN, "not built", failed.cause, how=how,
                                   built=failed.seconds > 0, seconds=failed.seconds)  # fmt: skip
            version, settings = wheel.version, self.settings.with_build(wheel)
            how = (
                "wheel cached"
                if wheel.cached
                else f"built in {_duration(wheel.seconds)} ({wheel.steps} steps; "
                f"{wheel.compiled.line()})"
            )
        (run,) = run_release(version, [self.entry], settings, say)
        judged = judge_run(self.entry, run, self.regress_on, self.pattern)
        return CommitProbe(
            point,
            judged.state,
            judged.outcome,
            judged.reason,
            str(version),
            how,
            built=wheel is not None and not wheel.cached,
            seconds=wheel.seconds if wheel is not None else 0.0,
            cached=judged.cached,
            steps=wheel.steps if wheel is not None else 0,  # 0 for a cached wheel
            compiled=wheel.compiled if wheel is not None else NONE,
        )


def probe_line(probe: CommitProbe, left: int) -> str:
    """One finished probe, for the progress display."""
    more = f"  [at most {left} more]" if left else ""
    stored = ", stored run" if probe.cached else ""
    return (
        f"{probe.commit.short}: {probe.state.label}: {probe.outcome}: {probe.reason} "
        f"({probe.how}{stored}){more}"
    )


def bisect_commits(
    entry: Entry,
    settings: Settings,
    good: choice.Mlx,
    bad: choice.Mlx,
    progress: Progress,
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
    releases: BisectResult | None = None,
    corpus_args: Sequence[str] = (),
) -> CommitBisect:
    """Bisect the first-parent history between two ends (releases, tags or hashes), probing built commits."""
    options = settings.build_options()
    repo = options.repo
    good_sha, bad_sha = (commits.resolve_ref(repo, str(end)) for end in (good, bad))
    fix = commits.is_ancestor(repo, bad_sha, good_sha)
    if not fix and not commits.is_ancestor(repo, good_sha, bad_sha):
        raise UsageError(
            f"{good} and {bad} are not on one history: neither is an ancestor of the other"
        )
    history = commits.first_parent_range(
        repo, *((bad_sha, good_sha) if fix else (good_sha, bad_sha))
    )
    good_commit, bad_commit = (history[-1], history[0]) if fix else (history[0], history[-1])
    toolchain.check(
        toolchain.Needs.of(repo, history[-1].sha), settings.target.device, settings.target.system
    )
    extra = (*corpus_args, *settings.cli_args(), *settings.build_cli_args())
    ends = {good_commit: good, bad_commit: bad}
    kind = Commits(entry, settings, regress_on, pattern, extra, options=options, ends=ends)
    unbuilt = sum(
        1
        for commit, end in ends.items()
        if isinstance(end, choice.Commit) and wheels.built(settings.target, commit.sha) is None
    )
    search = searches_at_most(len(history))
    progress.start(f"bisect {entry.id} over {len(history) - 2} commits")
    progress.line(
        f"{len(history) - 2} commits between {history[0].short} and {history[-1].short} "
        f"(first-parent): at most {search + 2} probes, the ends and {search} between them; "
        f"at most {search + unbuilt} builds (a wheel built before is reused)"
    )
    # The newer end is probed (and numbered) first, whichever end it is.
    the_plan = Plan((good_commit,), (bad_commit,), history, good_first=fix)
    try:
        found = bisection.bisect(
            kind,
            the_plan,
            CommitBisect,
            progress.status,
            lambda probe, left: progress.line(probe_line(probe, left)),
        )
    finally:
        progress.stop()
    return dataclasses.replace(found, releases=releases, recorded=recorded(entry, found))


def recorded(entry: Entry, result: CommitBisect) -> str | None:
    """What the entry says of the commit found: nothing yet (the line to add), or otherwise."""
    commit = result.changed
    if commit is None or result.regress_on is not RegressOn.SIGNATURE:
        return None
    key = "fixed_by" if result.direction == "fix" else "introduced_by"
    said = entry.bug.fixed_by if key == "fixed_by" else entry.bug.introduced_by
    if said is None:
        pr = f", pr: {commit.pull_request}" if commit.pull_request is not None else ""
        return f"the entry names no commit; under bug, add: {key}: {{commit: {commit.sha}{pr}}}"
    if commit.sha.startswith(said.commit):
        return None
    return f"the corpus says {key} {said.describe()}, which disagrees"


__all__ = [
    "CommitBisect",
    "CommitProbe",
    "Commits",
    "bisect_commits",
    "probe_line",
    "recorded",
    "searches_at_most",
]
