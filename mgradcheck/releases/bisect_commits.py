"""``mgradcheck bisect --commits``: below the releases, the commit (and pull request) that changed an entry.

MLX publishes no builds of single commits, so each probe is a wheel built here
(:mod:`mgradcheck.releases.builds`), installed into an environment made like a
release's and run like one (:mod:`mgradcheck.releases.runs`). The search is
the release bisect's (:mod:`mgradcheck.releases.search`) over the first-parent
history between the ends (:mod:`mgradcheck.releases.commits`); a commit that
does not build is Unknown and routed around, as an uninstallable release is.
An end named as a release is judged on the release itself (from the results
store after a release bisect); an end named as a tag or hash is built.
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import Interrupted, UsageError
from mgradcheck.releases import builds, commits, toolchain
from mgradcheck.releases.bisect import BisectResult, End, ends_disagree
from mgradcheck.releases.commits import Commit
from mgradcheck.releases.regress import RegressOn, State, judge_run
from mgradcheck.releases.runs import Settings, Status, run_release
from mgradcheck.releases.search import Satisfies, least_satisfying, steps_left
from mgradcheck.run.display import Progress

if TYPE_CHECKING:
    from rich.console import Console

SCHEMA = "mgradcheck-commit-bisect"
SCHEMA_VERSION = 1
COMPARE = f"{commits.REPOSITORY_URL}/compare/{{}}...{{}}"


def as_release(ref: str) -> Version | None:
    """The release an end names (``0.32.0``, ``v0.32.0``), or None for a tag or commit hash."""
    if commits.is_commit(ref):
        return None
    try:
        return Version(ref)
    except InvalidVersion:
        return None


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
        ""  # "release 0.32.0", "built in 4m 12s (97 steps)", "wheel cached", "does not build"
    )
    built: bool = False  # a build ran for this probe
    seconds: float = 0.0  # how long that build took
    cached: bool = False  # the run came from the results store

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
            "cached": self.cached,
        }


@dataclass(frozen=True)
class CommitBisect:
    entry_id: str
    content_hash: str
    regress_on: RegressOn
    pattern: str | None
    target: str
    good: Commit
    bad: Commit
    commits: tuple[Commit, ...]  # the first-parent history between the ends, oldest first
    probes: tuple[CommitProbe, ...]  # in the order they ran
    boundary: tuple[Commit, Commit] | None = None  # (older, newer), adjacent but for unknowns
    stopped: str | None = None
    releases: BisectResult | None = None  # the release bisect this one narrowed down
    reproduce: str = ""
    signum: int = (
        0  # the signal that interrupted it (SIGINT, SIGTERM): the probes are what finished
    )

    @property
    def interrupted(self) -> bool:
        return self.signum != 0

    @property
    def direction(self) -> str:
        return "fix" if self.commits[-1] == self.good else "regression"

    @property
    def changed(self) -> Commit | None:
        """The commit where the entry changed: the fix, or the break."""
        return self.boundary[1] if self.boundary else None

    @property
    def unknown_between(self) -> list[Commit]:
        if self.boundary is None:
            return []
        index = {c.sha: i for i, c in enumerate(self.commits)}
        older, newer = (index[c.sha] for c in self.boundary)
        return list(self.commits[older + 1 : newer])

    @property
    def compare_url(self) -> str | None:
        if self.boundary is None:
            return None
        return COMPARE.format(self.boundary[0].sha, self.boundary[1].sha)

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
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "entry": self.entry_id,
            "content_hash": self.content_hash,
            "regress_on": self.regress_on.label,
            "match": self.pattern,
            "target": self.target,
            "good": self.good.sha,
            "bad": self.bad.sha,
            "direction": self.direction,
            "commits": len(self.commits),
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
        }


def searches_at_most(count: int) -> int:
    """Probes between the ends at most (if none is Unknown): one per halving of the commits between."""
    return steps_left(count, {0: Satisfies.NO, count - 1: Satisfies.YES})


def _probe(
    commit: Commit,
    release: Version | None,
    entry: Entry,
    settings: Settings,
    options: builds.BuildOptions,
    regress_on: RegressOn,
    pattern: str | None,
    say: Status,
) -> CommitProbe:
    version, how, wheel = release, f"release {release}", None
    if version is None:
        try:
            wheel = builds.build(commit.sha, settings.target, options, settings.source, say)
        except builds.BuildFailed as failed:
            how = "does not build" if failed.seconds else "does not build (remembered)"
            return CommitProbe(
                commit,
                State.UNKNOWN,
                "not built",
                failed.cause,
                how=how,
                built=failed.seconds > 0,
                seconds=failed.seconds,
            )
        version, settings = wheel.version, settings.with_build(wheel)
        how = (
            "wheel cached"
            if wheel.cached
            else f"built in {_duration(wheel.seconds)} ({wheel.steps} steps)"
        )
    (run,) = run_release(version, [entry], settings, say)
    judged = judge_run(entry, run, regress_on, pattern)
    built = wheel is not None and not wheel.cached
    return CommitProbe(
        commit,
        judged.state,
        judged.outcome,
        judged.reason,
        str(version),
        how,
        built=built,
        seconds=wheel.seconds if wheel is not None else 0.0,
        cached=judged.cached,
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
    good: str,
    bad: str,
    progress: Progress,
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
    releases: BisectResult | None = None,
    corpus_args: Sequence[str] = (),
) -> CommitBisect:
    """Bisect the first-parent history between two ends (releases, tags or hashes), probing built commits."""
    options = settings.build_options()
    repo = options.repo
    good_sha, bad_sha = commits.resolve_ref(repo, good), commits.resolve_ref(repo, bad)
    if commits.is_ancestor(repo, bad_sha, good_sha):
        older, newer = bad, good
    elif commits.is_ancestor(repo, good_sha, bad_sha):
        older, newer = good, bad
    else:
        raise UsageError(
            f"{good} and {bad} are not on one history: neither is an ancestor of the other"
        )
    history = commits.first_parent_range(
        repo, commits.resolve_ref(repo, older), commits.resolve_ref(repo, newer)
    )
    ends = {0: as_release(older), len(history) - 1: as_release(newer)}
    toolchain.check(
        toolchain.Needs.of(repo, history[-1].sha), settings.target.device, settings.target.system
    )
    probes: dict[int, CommitProbe] = {}
    unbuilt = sum(
        1
        for i, r in ends.items()
        if r is None and builds.built(settings.target, history[i].sha) is None
    )
    search = searches_at_most(len(history))
    progress.start(f"bisect {entry.id} over {len(history) - 2} commits")
    hint = toolchain.compiler_cache()
    if hint:
        progress.line(f"note: {hint}")
    progress.line(
        f"{len(history) - 2} commits between {history[0].short} and {history[-1].short} "
        f"(first-parent): at most {search + 2} probes, the ends and {search} between them; "
        f"at most {search + unbuilt} builds (a wheel built before is reused)"
    )

    def probe(index: int, left: int) -> CommitProbe:
        if index not in probes:
            step = f"[{len(probes) + 1}/<={len(probes) + 1 + left}]"
            found = _probe(
                history[index],
                ends.get(index),
                entry,
                settings,
                options,
                regress_on,
                pattern,
                lambda text: progress.status(f"{step} {text}"),
            )
            probes[index] = found
            progress.line(probe_line(found, left))
        return probes[index]

    good_commit, bad_commit = (
        (history[-1], history[0]) if newer == good else (history[0], history[-1])
    )
    common: dict[str, Any] = {
        "entry_id": entry.id,
        "content_hash": entry.content_hash,
        "regress_on": regress_on,
        "pattern": pattern,
        "target": settings.target.describe(),
        "good": good_commit,
        "bad": bad_commit,
        "commits": history,
        "releases": releases,
    }
    try:
        first = probe(len(history) - 1, search + 1)
        last = probe(0, search)
        good_end, bad_end = (first, last) if newer == good else (last, first)
        stopped = ends_disagree(_end(good_end, good), _end(bad_end, bad), regress_on, "end")
        if stopped is not None:
            return CommitBisect(probes=tuple(probes.values()), stopped=stopped, **common)
        upper = first.state

        def predicate(index: int, left: int) -> Satisfies:
            state = probe(index, left).state
            if state is State.UNKNOWN:
                return Satisfies.UNKNOWN
            return Satisfies.YES if state is upper else Satisfies.NO

        known = {0: Satisfies.NO, len(history) - 1: Satisfies.YES}
        found, _ = least_satisfying(len(history), predicate, known)
    except (Interrupted, KeyboardInterrupt) as exc:
        # Hours of builds may lie behind: show what finished. Nothing is lost for the
        # next run either: the wheels, the objects and the judged runs are all kept.
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        name = signal.Signals(signum).name
        stopped = (
            f"interrupted by {name} after {len(probes)} probes; the same command goes on from there"
        )
        return CommitBisect(probes=tuple(probes.values()), stopped=stopped, signum=signum, **common)
    finally:
        progress.stop()
    boundary = (history[found.last_no], history[found.first_yes])
    good_ref, bad_ref = (boundary[1], boundary[0]) if newer == good else (boundary[0], boundary[1])
    argv = [
        "mgradcheck",
        "bisect",
        entry.id,
        "--commits",
        "--good",
        good_ref.sha,
        "--bad",
        bad_ref.sha,
    ]
    if regress_on is not RegressOn.SIGNATURE:
        argv += ["--regress-on", regress_on.label]
    if pattern is not None:
        argv += ["--match", pattern]
    reproduce = shlex.join([*argv, *corpus_args, *settings.cli_args(), *settings.build_cli_args()])
    return CommitBisect(
        probes=tuple(probes.values()), boundary=boundary, reproduce=reproduce, **common
    )


def _end(probe: CommitProbe, ref: str) -> End:
    name = f"mlx {probe.mlx}" if probe.how.startswith("release") else f"commit {probe.commit.short}"
    return End(name, ref, probe.state, probe.reason)


def render(result: CommitBisect, console: Console) -> None:
    """Every probe in history order, then the commit, its pull request, the links, the cost."""
    from rich.markup import escape
    from rich.table import Table

    console.print(
        f"[bold]bisect {result.entry_id} over commits[/] ({result.target}): "
        f"bad means {result.regress_on.meaning}"
    )
    table = Table(show_lines=False)
    for name in ("commit", "probe", "state", "outcome", "from", "subject"):
        table.add_column(name, overflow="fold", no_wrap=name in ("commit", "probe"))
    order = {p.commit.sha: (i + 1, p) for i, p in enumerate(result.probes)}
    edges = {c.sha for c in result.boundary or ()}
    for commit in result.commits:
        if commit.sha not in order:
            continue
        step, probe = order[commit.sha]
        edge = " <" if commit.sha in edges else ""
        number = f"#{step}" + (" stored" if probe.cached else "")
        state = f"[{probe.state.colour}]{probe.state.label}[/]{edge}"
        table.add_row(
            commit.short, number, state, probe.outcome, escape(probe.how), escape(commit.subject)
        )
    console.print(table)
    searched = f"{len(result.commits) - 2} commits between the ends, {len(result.probes)} probes, {result.builds} builds"
    if result.builds:
        searched += f" ({_duration(result.build_seconds)} building)"
    console.print(searched)
    console.print(f"[bold]{escape(result.headline())}[/]")
    changed = result.changed
    if changed is not None:
        console.print(f"commit: {changed.url}", soft_wrap=True)
        if changed.pull_url:
            console.print(f"pull request: {changed.pull_url}", soft_wrap=True)
        console.print(f"author: {escape(changed.author)}, {changed.date[:10]}")
    if result.compare_url and result.unknown_between:
        console.print(f"changes between them: {result.compare_url}", soft_wrap=True)
    if result.reproduce:
        console.print(f"reproduce with: {result.reproduce}", soft_wrap=True, markup=False)


__all__ = [
    "CommitBisect",
    "CommitProbe",
    "as_release",
    "bisect_commits",
    "render",
    "searches_at_most",
]
