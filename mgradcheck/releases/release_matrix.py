"""``mgradcheck matrix``: every entry on every release, and where each one flips.

Releases run in parallel, each in its cached environment, through the same
results store as ``bisect``, so a matrix after a bisect (or a second matrix)
runs only what is new. The result serialises as JSON here; what its report shows is
made in :mod:`mgradcheck.releases.matrix_report`, and rendered as a terminal table and as
Markdown in :mod:`mgradcheck.reports.matrix`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck.builds.builder import ShowStatus
from mgradcheck.builds.commits import COMPARE, follows, tag
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import Interrupted, MgradcheckError, UsageError
from mgradcheck.index.installable import Listing, list_releases, parse_range
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.on_release import Execute, R, build_commit, run_release
from mgradcheck.releases.regress import Judged, RegressOn, State, judge, judge_run
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import Runnable
from mgradcheck.run.display import Progress
from mgradcheck.run.results import Report
from mgradcheck.run.runner import Runner
from mgradcheck.wording import count

SCHEMA = "mgradcheck-matrix"
SCHEMA_VERSION = 1


def not_run(version: Version) -> Judged:
    return Judged(version, State.UNKNOWN, Outcome.NOT_RUN.label, "the matrix was stopped first")


@dataclass(frozen=True)
class Flip:
    """Where an entry's state changes between two releases (unknowns between them skipped)."""

    entry_id: str
    before: Version
    after: Version
    was: State
    now: State

    @property
    def compare_url(self) -> str:
        return COMPARE.format(tag(self.before), tag(self.after))

    def sentence(self) -> str:
        return f"{self.was.label} through {self.before}, {self.now.label} from {self.after}"

    def to_json(self) -> dict[str, Any]:
        return {
            "before": str(self.before),
            "after": str(self.after),
            "was": self.was.label,
            "now": self.now.label,
            "compare": self.compare_url,
        }


@dataclass(frozen=True)
class Matrix:
    target: str
    backend: str
    regress_on: RegressOn
    versions: tuple[Version, ...]
    entries: tuple[Runnable, ...]
    cells: dict[tuple[str, Version], Judged]
    interrupted: bool = False
    signum: int = 0  # the signal that interrupted it (SIGINT, SIGTERM), for the exit status

    def cell(self, entry_id: str, version: Version) -> Judged:
        return self.cells.get((entry_id, version)) or not_run(version)

    def flips(self, entry_id: str) -> list[Flip]:
        flips, last = [], None
        for version in self.versions:
            state = self.cell(entry_id, version).state
            if state is State.UNKNOWN:
                continue
            if last is not None and last[1] is not state:
                flips.append(Flip(entry_id, last[0], version, last[1], state))
            last = (version, state)
        return flips

    def flip_versions(self, entry_id: str) -> set[Version]:
        return {f.after for f in self.flips(entry_id)}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "target": self.target,
            "backend": self.backend,
            "regress_on": self.regress_on.label,
            "interrupted": self.interrupted,
            "releases": [str(v) for v in self.versions],
            "entries": [
                {
                    "id": e.id,
                    "title": e.title,
                    "content_hash": e.content_hash,
                    "cells": {str(v): self.cell(e.id, v).to_json() for v in self.versions},
                    "flips": [f.to_json() for f in self.flips(e.id)],
                }
                for e in self.entries
            ],
        }


def _skipped(entry: Runnable, version: Version) -> Judged | None:
    if not isinstance(entry, Entry):
        return None
    spec = entry.requires.mlx
    if spec is None or spec.contains(version, prereleases=True):
        return None
    return Judged(version, State.UNKNOWN, Outcome.SKIP.label, f"needs mlx {spec}")


def run_matrix(
    entries: Sequence[R],
    versions: Sequence[Version],
    settings: Settings,
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
    jobs: int = 2,
    status: ShowStatus | None = None,
    on_release: Callable[[Version], None] | None = None,
    execute: Execute[R] | None = None,
) -> Matrix:
    """Run every entry on every release, ``jobs`` releases at a time; stop cleanly on an interrupt.

    ``execute`` runs items that are not corpus entries (see :func:`run_release`).
    """
    cells: dict[tuple[str, Version], Judged] = {}
    lock = threading.Lock()
    cancel = threading.Event()
    runners: dict[int, Runner] = {}

    def track(runner: Runner | None) -> None:
        with lock:
            if runner is None:
                runners.pop(threading.get_ident(), None)
            else:
                runners[threading.get_ident()] = runner
                if cancel.is_set():
                    runner.stop()

    def one(version: Version) -> None:
        todo = []
        for entry in entries:
            skipped = _skipped(entry, version)
            if skipped is not None:
                cells[(entry.id, version)] = skipped
            else:
                todo.append(entry)
        if todo and not cancel.is_set():
            runs = run_release(version, todo, settings, status, cancel, track, execute)
            for entry, run in zip(todo, runs, strict=True):
                cell = judge_run(entry, run, regress_on, pattern)
                if not cancel.is_set() or cell.state is not State.UNKNOWN:  # stopped says nothing
                    cells[(entry.id, version)] = cell
        if on_release is not None:
            on_release(version)

    interrupted, signum = False, 0
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="mgc-matrix")
    futures: set[Future[None]] = {pool.submit(one, v) for v in versions}
    try:
        while futures:
            finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
    except (Interrupted, KeyboardInterrupt) as exc:
        interrupted = True
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        cancel.set()
        with lock:
            for runner in runners.values():
                runner.stop()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    target = settings.target
    return Matrix(
        target.describe(),
        target.backend,
        regress_on,
        tuple(versions),
        tuple(entries),
        cells,
        interrupted,
        signum,
    )


def chosen_releases(
    settings: Settings, version_range: str | None, exact: Sequence[Version] = ()
) -> tuple[Listing, list[Version]]:
    """The listing, and the releases in it to run: ``exact`` (each must exist), else those in the range."""
    wanted = parse_range(version_range) if version_range else None
    pre = settings.pre or any(v.is_prerelease for v in exact)
    listing = list_releases(settings.source, settings.target, pre, settings.yanked or bool(exact))
    if exact:
        for version in exact:
            listing.require(version)
        return listing, sorted(set(exact))
    versions = [
        v for v in listing.versions if wanted is None or wanted.contains(v, prereleases=True)
    ]
    if not versions:
        within = f" within {version_range}" if version_range else ""
        raise UsageError(f"{listing.empty_reason()}{within}")
    return listing, versions


def run_shown(
    entries: Sequence[R],
    versions: Sequence[Version],
    settings: Settings,
    regress_on: RegressOn,
    pattern: str | None,
    jobs: int,
    progress: Progress,
    execute: Execute[R] | None = None,
    noun: str = "entry",
    title: str | None = None,
) -> Matrix:
    """:func:`run_matrix`, one progress step per release; ``noun`` names one of ``entries``,
    ``title`` the command, where it is not ``matrix``."""
    progress.start(
        title or f"matrix: {count(len(entries), noun)} x {count(len(versions), 'release')}",
        total=len(versions),
    )

    def finished(version: Version) -> None:
        progress.line(f"mlx {version} done")
        progress.advance()

    try:
        return run_matrix(
            entries,
            versions,
            settings,
            regress_on,
            pattern,
            jobs,
            progress.status,
            finished,
            execute,
        )
    finally:
        progress.stop()


def with_commits(
    settings: Settings,
    releases: Sequence[Version],
    versions: Sequence[Version],
    refs: Sequence[str],
    progress: Progress,
) -> tuple[Settings, list[Version]]:
    """Each commit's wheel (built here if needed) among ``versions``, after the release it follows."""
    progress.start(f"matrix: commits to build: {len(refs)}")
    try:
        wheels = [build_commit(ref, settings, progress.status) for ref in refs]
    finally:
        progress.stop()
    order: dict[Version, tuple[Version, int]] = {v: (v, 0) for v in versions}
    try:
        repo: Path | None = settings.build_options().repo
    except MgradcheckError:  # every wheel was cached and no clone is at hand: by version, then
        repo = None
    for wheel in wheels:
        settings = settings.with_build(wheel)
        anchor, distance = follows(repo, wheel.sha, releases) if repo else (None, 0)
        order[wheel.version] = (anchor or wheel.version, 1 + distance)
    return settings, sorted(order, key=order.__getitem__)


def matrix_of(
    entries: Sequence[R],
    settings: Settings,
    version_range: str | None,
    regress_on: RegressOn,
    pattern: str | None,
    jobs: int,
    progress: Progress,
    commit_refs: Sequence[str] = (),
    execute: Execute[R] | None = None,
    noun: str = "entry",
) -> Matrix:
    """The whole ``matrix`` command below its options: list the releases (and build the commits
    asked for), run them, with progress."""
    if commit_refs:
        wanted = parse_range(version_range) if version_range else None
        listing = list_releases(settings.source, settings.target, settings.pre, settings.yanked)
        versions = [
            v for v in listing.versions if wanted is None or wanted.contains(v, prereleases=True)
        ]
        settings, versions = with_commits(
            settings, listing.versions, versions, commit_refs, progress
        )
    else:
        _, versions = chosen_releases(settings, version_range)
    return run_shown(
        entries, versions, settings, regress_on, pattern, jobs, progress, execute, noun
    )


def from_reports(
    entries: Sequence[Entry],
    reports: Sequence[Report],
    regress_on: RegressOn = RegressOn.SIGNATURE,
    pattern: str | None = None,
) -> Matrix:
    """The matrix of runs made elsewhere: ``run --json`` reports, one or more per release.

    For machines the release machinery cannot reach (a GPU runner, a lent
    machine without a package index): each report's results are judged as a
    matrix cell of their release. Results of entries not in ``entries`` are left
    out; reports of several backends are refused (one matrix is one backend).
    """
    known = {e.id: e for e in entries}
    environments = [e for r in reports for e in r.environments if e.mlx]
    backends = sorted({e.backend or "?" for e in environments})
    if len(backends) != 1:
        raise UsageError(
            f"the reports hold results of {len(backends)} backends ({', '.join(backends) or 'none'}); "
            "give one backend's reports"
        )
    cells: dict[tuple[str, Version], Judged] = {}
    for report in reports:
        for result in report.results:
            entry = known.get(result.id)
            if entry is None or result.environment.mlx is None:
                continue
            try:
                version = Version(result.environment.mlx)
            except InvalidVersion:
                continue
            state, reason = judge(entry, result.runs, regress_on, pattern)
            cells[(entry.id, version)] = Judged(version, state, result.outcome_text, reason)
    versions = tuple(sorted({v for _, v in cells}))
    where = environments[0]
    hardware = f", {where.hardware}" if where.hardware else ""
    return Matrix(
        f"{backends[0]} on {where.platform}{hardware}, from {count(len(reports), 'report')}",
        backends[0],
        regress_on,
        versions,
        tuple(e for e in entries if any((e.id, v) in cells for v in versions)),
        cells,
    )
