"""Run entries on one MLX release: in its cached environment, through the results store.

Shared by ``bisect`` (one entry, one release at a time) and ``matrix`` (many
entries, releases in parallel), and by ``tests --matrix`` for the tests of an
upstream suite: anything :class:`~mgradcheck.releases.store.Runnable` (an id,
a title, a content hash) with a way to run it (:data:`Execute`; corpus entries
by default). An item already in the store for this release, backend, platform
and build is not run again; a release that cannot be installed or started gives
every item a :class:`ReleaseRun` with a problem instead of runs, which the
callers read as Unknown.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar, cast

from packaging.version import InvalidVersion, Version

from mgradcheck.builds import commits, wheels, work_tree
from mgradcheck.builds.builder import ShowStatus, build
from mgradcheck.corpus.entry import Entry
from mgradcheck.envs import venvs
from mgradcheck.errors import EnvironmentFailure, Interrupted, UsageError
from mgradcheck.index.installable import list_releases
from mgradcheck.paths import CacheError
from mgradcheck.releases.choice import Commit, Mlx, Release, WorkTree
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import Runnable, StoredRuns
from mgradcheck.run import mlx_build
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Progress, Silent
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.resources import Exhausted, NoSpace
from mgradcheck.run.runner import Runner, RunOptions, run_watched
from mgradcheck.run.stages import prepare
from mgradcheck.run.verdict import counts

R = TypeVar("R", bound=Runnable)
OnRunner = Callable[[Runner | None], None]
# Runs items in an environment: (command, environment, items, on_runner) -> each item's runs,
# in order, and the interrupt that stopped it, if any. Every Runner it makes is shown to
# on_runner (then None when done), so that a matrix can stop it.
Execute = Callable[
    [ChildCommand, Environment, Sequence[R], "OnRunner | None"],
    tuple[list[tuple[Observation, ...]], "Interrupted | None"],
]


@dataclass(frozen=True)
class ReleaseRun:
    """One entry on one release: its runs (from now or from the store), or why there are none."""

    version: Version
    entry_id: str
    runs: tuple[Observation, ...] = ()
    environment: Environment | None = None
    cached: bool = False
    problem: str | None = None

    @property
    def outcome_text(self) -> str:
        return "unavailable" if self.problem and not self.runs else counts(self.runs)


def build_of(python: str) -> str | None:
    """The build of MLX the children of ``python`` import (see :mod:`mgradcheck.run.mlx_build`)."""
    return mlx_build.identity(python, ChildCommand(python).env())


def installed_build(version: Version, settings: Settings) -> str | None:
    """The build of MLX in the release's environment, or None when it is not built.

    Read from its files without its lock, so that a stored release needs no more: an
    environment removed meanwhile reads as none, one rebuilt as the build it now holds.
    """
    spec = settings.spec(version)
    env = venvs.ReleaseEnv(spec, venvs.envs_root() / spec.name, reused=True)
    return build_of(env.python) if venvs.is_ready(env.path, spec.digest) else None


def from_store(
    entry: Runnable, version: Version, settings: Settings, build: str | None
) -> ReleaseRun | None:
    """The stored runs of ``entry`` on this build of the release (none for an unknown build)."""
    if not settings.use_cached or build is None:
        return None
    stored = settings.store.get(settings.key(entry, version, build))
    if stored is None:
        return None
    return ReleaseRun(version, entry.id, stored.runs, stored.environment, cached=True)


def _same_release(environment: Environment, version: Version) -> bool:
    try:
        return environment.mlx is not None and Version(environment.mlx) == version
    except InvalidVersion:
        return False


def _prepare(env: venvs.ReleaseEnv) -> tuple[ChildCommand, Environment]:
    """Probe the environment's interpreter; its children get the environment's own kernel cache."""
    return prepare(env.python, kernels=env.kernels)


def _waiting(say: ShowStatus, version: Version) -> Callable[[], None]:
    return lambda: say(f"waiting for another mgradcheck to finish building mlx {version}")


@contextlib.contextmanager
def open_release(
    version: Version, settings: Settings, status: ShowStatus | None = None
) -> Iterator[tuple[ChildCommand, Environment]]:
    """The command that runs entries in this release's environment, built first if needed
    (``run --mlx``), held in use (no prune removes it) until the block ends.

    A release not yet cached is looked up in the index first, so that a typo
    says what exists instead of failing inside the installer. Naming a version
    is asking for it: pre-releases and yanked releases are allowed here.
    """
    say = status or (lambda text: None)
    spec = settings.spec(version)
    if venvs.needs_install(spec, settings.retry_failed):
        if spec.wheel is None:
            list_releases(settings.source, settings.target, pre=True, yanked=True).require(version)
        say(settings.installing(version))
    with venvs.using(spec, settings.retry_failed, on_wait=_waiting(say, version)) as env:
        command, environment = _prepare(env)
        if not _same_release(environment, version):
            raise venvs.EnvError(
                f"the environment for {version} runs mlx {environment.mlx}; remove it with 'mgradcheck envs prune --all'"
            )
        yield command, environment


def run_entries(
    command: ChildCommand,
    environment: Environment,
    entries: Sequence[Entry],
    on_runner: OnRunner | None,
    timeout: float | None = None,
) -> tuple[list[tuple[Observation, ...]], Interrupted | None]:
    """The default :data:`Execute`: corpus entries, each in its own child, one at a time
    (``timeout``: each run's, overriding the entry's own)."""
    runner = Runner(command, environment, RunOptions(jobs=1, timeout=timeout), Silent())
    outcome = run_watched(runner, entries, on_runner)
    return [r.runs for r in outcome.results], outcome.interrupted


def run_release(
    version: Version,
    entries: Sequence[R],
    settings: Settings,
    status: ShowStatus | None = None,
    cancel: threading.Event | None = None,
    on_runner: OnRunner | None = None,
    execute: Execute[R] | None = None,
) -> list[ReleaseRun]:
    """Every item on this release, running only those the store lacks (corpus entries by default).

    Raises :class:`~mgradcheck.errors.Interrupted` when the user stops the run (what finished is stored).
    """
    say = status or (lambda text: None)
    done: dict[str, ReleaseRun] = {}

    def stored(identity: str | None) -> list[R]:
        """Take what the store has for this build; what is still missing."""
        for e in entries:
            run = None if e.id in done else from_store(e, version, settings, identity)
            if run is not None:
                done[e.id] = run
        return [e for e in entries if e.id not in done]

    missing = stored(installed_build(version, settings))
    if not missing:
        return [done[e.id] for e in entries]
    identity: str | None = None

    def problem(text: str) -> list[ReleaseRun]:
        done.update((e.id, ReleaseRun(version, e.id, problem=text)) for e in missing)
        return [done[e.id] for e in entries]

    spec = settings.spec(version)
    if venvs.needs_install(spec, settings.retry_failed):
        say(settings.installing(version))
    try:
        with venvs.using(spec, settings.retry_failed, _waiting(say, version), cancel) as env:
            if cancel is not None and cancel.is_set():
                return problem("stopped")
            say(
                f"running {len(missing)} on mlx {version}"
                if len(missing) > 1
                else f"probing mlx {version}"
            )
            command, environment = _prepare(env)
            if not _same_release(environment, version):
                return problem(f"the environment for {version} runs mlx {environment.mlx}")
            identity = build_of(env.python)
            missing = stored(identity)  # (re)built just now: its build may have been run before
            if not missing:
                return [done[e.id] for e in entries]
            if execute is not None:
                results, interrupted = execute(command, environment, missing, on_runner)
            else:  # without a way to run them, the items are corpus entries
                entries_ = cast("list[Entry]", missing)
                results, interrupted = run_entries(
                    command, environment, entries_, on_runner, settings.timeout
                )
    except (CacheError, NoSpace, Exhausted):
        raise  # the machine's, not the release's: every other release would meet it too
    except (EnvironmentFailure, UsageError) as exc:  # not installed, or its interpreter unusable
        return problem(str(exc))
    for entry, runs in zip(missing, results, strict=True):
        if settings.record and identity is not None:
            settings.store.put(
                StoredRuns(settings.key(entry, version, identity), entry.id, runs, environment)
            )
        done[entry.id] = ReleaseRun(version, entry.id, runs, environment)
    if interrupted is not None:
        raise interrupted  # after storing what finished: those never run again
    return [done[e.id] for e in entries]


def build_commit(
    ref: str,
    settings: Settings,
    status: ShowStatus | None = None,
    cancel: threading.Event | None = None,
) -> wheels.Built:
    """The wheel of one commit (a hash, or a tag with a clone to read it from), built if needed.

    A hash whose wheel is cached needs no clone: it is found by its prefix.
    """
    if commits.is_commit(ref):
        cached = wheels.cached_commits(settings.target, ref)
        found = wheels.built(settings.target, cached[0]) if len(cached) == 1 else None
        if found is not None:
            return found
    options = settings.build_options()
    sha = commits.resolve_ref(options.repo, ref)
    return build(sha, settings.target, options, settings.source, status, cancel)


def open_commit(
    ref: str, settings: Settings, status: ShowStatus | None = None
) -> contextlib.AbstractContextManager[tuple[ChildCommand, Environment]]:
    """``open_release`` for one commit: its wheel, built here once, in an environment like a release's."""
    built = build_commit(ref, settings, status)
    return open_release(built.version, settings.with_build(built), status)


def open_work_tree(
    path: Path, settings: Settings, status: ShowStatus | None = None
) -> contextlib.AbstractContextManager[tuple[ChildCommand, Environment]]:
    """``open_commit`` for a work tree: its commit with its uncommitted changes, built here
    once per set of changes (a clean tree is its commit)."""
    tree = work_tree.snapshot(path)
    options = replace(settings, mlx_repo=tree.path).build_options()
    built = build(tree.head, settings.target, options, settings.source, status, tree=tree)
    return open_release(built.version, settings.with_build(built), status)


@contextlib.contextmanager
def open_target(
    python: Path | None, release: Mlx | None, settings: Settings, progress: Progress
) -> Iterator[tuple[ChildCommand, Environment]]:
    """The children's command and environment: a release's cached environment (or a commit's,
    built here; the install or build shown on ``progress``), held in use until the block ends,
    ``--python``, or this interpreter."""
    if release is None:
        yield prepare(str(python) if python else sys.executable)
        return
    shown = False

    def status(text: str) -> None:  # silent when the environment is ready
        nonlocal shown
        if not shown:
            progress.start(f"the environment of mlx {release}")
            shown = True
        progress.status(text)

    with contextlib.ExitStack() as held:
        try:
            match release:
                case Commit(ref):
                    opened = held.enter_context(open_commit(ref, settings, status))
                case Release(version):
                    opened = held.enter_context(open_release(version, settings, status))
                case WorkTree(path):
                    opened = held.enter_context(open_work_tree(path, settings, status))
        finally:
            if shown:
                progress.stop()
        yield opened


__all__ = [
    "Execute",
    "ReleaseRun",
    "build_commit",
    "build_of",
    "from_store",
    "installed_build",
    "open_commit",
    "open_release",
    "open_target",
    "open_work_tree",
    "run_entries",
    "run_release",
]
