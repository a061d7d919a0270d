"""Run entries on one MLX release: in its cached environment, through the results store.

Shared by ``bisect`` (one entry, one release at a time) and ``matrix`` (many
entries, releases in parallel), and by ``tests --matrix`` for the tests of an
upstream suite: anything :class:`Runnable` (an id, a title, a content hash)
with a way to run it (:data:`Execute`; corpus entries by default). An item
already in the store for this release, backend and platform is not run again;
a release that cannot be installed or started gives every item a
:class:`ReleaseRun` with a problem instead of runs, which the callers read as
Unknown.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar, cast

from packaging.version import InvalidVersion, Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import EnvironmentFailure, Interrupted, UsageError
from mgradcheck.releases import builds, commits, envs, sources
from mgradcheck.releases.choice import Commit, Mlx, Release
from mgradcheck.releases.index import Source, Target, default_backend, list_releases
from mgradcheck.releases.store import ProbeKey, ResultsStore, StoredRuns
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Progress, Silent
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.runner import Runner, RunOptions, run_watched
from mgradcheck.run.stages import prepare
from mgradcheck.run.verdict import counts

Status = Callable[[str], None]


class Runnable(Protocol):
    """What the store and the release machinery need of a thing they run: a corpus entry, a test."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def content_hash(self) -> str: ...


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
class Settings:
    """Where releases come from, what they are built for, and how the store is used."""

    target: Target
    source: Source
    installer: envs.Installer
    store: ResultsStore = field(default_factory=ResultsStore)
    use_cached: bool = True  # False: --no-cache, run again (and store the new runs)
    record: bool = True  # False: new runs are not stored (runs the store's key does not describe)
    retry_failed: bool = False
    packages: tuple[str, ...] = ("numpy",)
    pre: bool = False  # list pre-releases too
    yanked: bool = False  # list yanked releases too
    mlx_repo: Path | None = (
        None  # MLX's history, for builds of commits (None: a clone in the cache)
    )
    mlx_deps: Path | None = None  # clones of what MLX's CMake fetches, for builds offline
    build_jobs: int | None = None  # compiler processes per build (None: one per core)
    timeout: float | None = None  # seconds per run of a corpus entry, overriding its own
    wheels: Mapping[Version, Path] = field(default_factory=dict)  # commits built here, by version

    @classmethod
    def from_options(
        cls,
        index_url: str | None = None,
        find_links: Path | None = None,
        no_index: bool = False,
        backend: str | None = None,
        installer: str | None = None,
        pre: bool = False,
        yanked: bool = False,
        retry_failed: bool = False,
        mlx_repo: Path | None = None,
        mlx_deps: Path | None = None,
        build_jobs: int | None = None,
    ) -> Settings:
        """The settings of the release options, else the user's installer settings, else PyPI."""
        chosen = envs.Installer(installer) if installer else envs.default_installer()
        return cls(
            Target.current(backend),
            Source.from_options(index_url, find_links, no_index),
            chosen,
            retry_failed=retry_failed,
            pre=pre,
            yanked=yanked,
            mlx_repo=mlx_repo,
            mlx_deps=mlx_deps.resolve() if mlx_deps is not None else None,
            build_jobs=build_jobs,
        )

    def cli_args(self) -> list[str]:
        """Options that make another mgradcheck command use the same releases."""
        args = self.source.cli_args()
        if self.target.backend != default_backend(self.target.system):
            args += ["--backend", self.target.backend]
        return args

    def installing(self, version: Version) -> str:
        """What an install says while it runs; with pip, how to make the next one faster."""
        text = f"installing mlx {version} ({self.target.backend})"
        if self.installer is envs.Installer.PIP and envs.find_uv() is None:
            text += " with venv + pip (pip install 'mgradcheck[uv]' makes builds faster)"
        return text

    def build_cli_args(self) -> list[str]:
        """Options that make another mgradcheck command build commits the same way."""
        args = ["--mlx-repo", str(self.mlx_repo)] if self.mlx_repo is not None else []
        return args + (["--mlx-deps", str(self.mlx_deps)] if self.mlx_deps is not None else [])

    def spec(self, version: Version) -> envs.EnvSpec:
        return envs.EnvSpec(
            version,
            self.target,
            self.source,
            self.installer,
            self.packages,
            wheel=self.wheels.get(version),
        )

    def with_build(self, built: builds.Built) -> Settings:
        """These settings, with the commit's own wheel as the mlx of its version."""
        return replace(self, wheels={**self.wheels, built.version: built.wheel})

    def build_options(self) -> builds.BuildOptions:
        """How commits are built; the cached clone of upstream is made here, on first use."""
        return builds.BuildOptions(
            sources.repository(self.mlx_repo),
            self.mlx_deps,
            self.build_jobs or builds.default_jobs(),
            self.retry_failed,
        )

    def key(self, item: Runnable, version: Version) -> ProbeKey:
        """Where the runs of ``item`` are stored: under --timeout, an entry's runs are those of
        the entry with that timeout (its content hash holds the timeout)."""
        if self.timeout is not None and isinstance(item, Entry):
            item = replace(item, timeout=self.timeout)
        return ProbeKey(item.content_hash, str(version), self.target.backend, self.target.platform)


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


def from_store(entry: Runnable, version: Version, settings: Settings) -> ReleaseRun | None:
    if not settings.use_cached:
        return None
    stored = settings.store.get(settings.key(entry, version))
    if stored is None:
        return None
    return ReleaseRun(version, entry.id, stored.runs, stored.environment, cached=True)


def _same_release(environment: Environment, version: Version) -> bool:
    try:
        return environment.mlx is not None and Version(environment.mlx) == version
    except InvalidVersion:
        return False


def _prepare(env: envs.ReleaseEnv) -> tuple[ChildCommand, Environment]:
    """Probe the environment's interpreter; its children get the environment's own kernel cache."""
    return prepare(env.python, kernels=env.kernels)


def _waiting(say: Status, version: Version) -> Callable[[], None]:
    return lambda: say(f"waiting for another mgradcheck to finish building mlx {version}")


def open_release(
    version: Version, settings: Settings, status: Status | None = None
) -> tuple[ChildCommand, Environment]:
    """The command that runs entries in this release's environment, built first if needed (``run --mlx``).

    A release not yet cached is looked up in the index first, so that a typo
    says what exists instead of failing inside the installer. Naming a version
    is asking for it: pre-releases and yanked releases are allowed here.
    """
    say = status or (lambda text: None)
    spec = settings.spec(version)
    if envs.needs_install(spec, settings.retry_failed):
        if spec.wheel is None:
            list_releases(settings.source, settings.target, pre=True, yanked=True).require(version)
        say(settings.installing(version))
    with envs.using(spec, settings.retry_failed, on_wait=_waiting(say, version)) as env:
        command, environment = _prepare(env)
    if not _same_release(environment, version):
        raise envs.EnvError(
            f"the environment for {version} runs mlx {environment.mlx}; remove it with 'mgradcheck envs prune --all'"
        )
    return command, environment


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
    status: Status | None = None,
    cancel: threading.Event | None = None,
    on_runner: OnRunner | None = None,
    execute: Execute[R] | None = None,
) -> list[ReleaseRun]:
    """Every item on this release, running only those the store lacks (corpus entries by default).

    Raises :class:`~mgradcheck.errors.Interrupted` when the user stops the run (what finished is stored).
    """
    say = status or (lambda text: None)
    done = {e.id: run for e in entries if (run := from_store(e, version, settings)) is not None}
    missing = [e for e in entries if e.id not in done]
    if not missing:
        return [done[e.id] for e in entries]

    def problem(text: str) -> list[ReleaseRun]:
        done.update((e.id, ReleaseRun(version, e.id, problem=text)) for e in missing)
        return [done[e.id] for e in entries]

    spec = settings.spec(version)
    if envs.needs_install(spec, settings.retry_failed):
        say(settings.installing(version))
    try:
        with envs.using(spec, settings.retry_failed, _waiting(say, version), cancel) as env:
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
            if execute is not None:
                results, interrupted = execute(command, environment, missing, on_runner)
            else:  # without a way to run them, the items are corpus entries
                entries_ = cast("list[Entry]", missing)
                results, interrupted = run_entries(
                    command, environment, entries_, on_runner, settings.timeout
                )
    except (EnvironmentFailure, UsageError) as exc:  # not installed, or its interpreter unusable
        return problem(str(exc))
    for entry, runs in zip(missing, results, strict=True):
        if settings.record:
            settings.store.put(
                StoredRuns(settings.key(entry, version), entry.id, runs, environment)
            )
        done[entry.id] = ReleaseRun(version, entry.id, runs, environment)
    if interrupted is not None:
        raise interrupted  # after storing what finished: those never run again
    return [done[e.id] for e in entries]


def build_commit(
    ref: str,
    settings: Settings,
    status: Status | None = None,
    cancel: threading.Event | None = None,
) -> builds.Built:
    """The wheel of one commit (a hash, or a tag with a clone to read it from), built if needed.

    A hash whose wheel is cached needs no clone: it is found by its prefix.
    """
    if commits.is_commit(ref):
        cached = builds.cached_commits(settings.target, ref)
        found = builds.built(settings.target, cached[0]) if len(cached) == 1 else None
        if found is not None:
            return found
    options = settings.build_options()
    sha = commits.resolve_ref(options.repo, ref)
    return builds.build(sha, settings.target, options, settings.source, status, cancel)


def open_commit(
    ref: str, settings: Settings, status: Status | None = None
) -> tuple[ChildCommand, Environment]:
    """``open_release`` for one commit: its wheel, built here once, in an environment like a release's."""
    built = build_commit(ref, settings, status)
    return open_release(built.version, settings.with_build(built), status)


def open_target(
    python: Path | None, release: Mlx | None, settings: Settings, progress: Progress
) -> tuple[ChildCommand, Environment]:
    """The children's command and environment: a release's cached environment (or a commit's,
    built here; the install or build shown on ``progress``), ``--python``, or this interpreter."""
    if release is None:
        return prepare(str(python) if python else sys.executable)
    shown = False

    def status(text: str) -> None:  # silent when the environment is ready
        nonlocal shown
        if not shown:
            progress.start(f"the environment of mlx {release}")
            shown = True
        progress.status(text)

    try:
        match release:
            case Commit(ref):
                return open_commit(ref, settings, status)
            case Release(version):
                return open_release(version, settings, status)
    finally:
        if shown:
            progress.stop()


__all__ = [
    "Execute",
    "ReleaseRun",
    "Runnable",
    "Settings",
    "build_commit",
    "from_store",
    "open_commit",
    "open_release",
    "open_target",
    "run_entries",
    "run_release",
]
