"""The release settings: where releases come from, what they are built for, how the store is used.

Made once from the release options (``--index-url``, ``--backend``, ``--mlx-repo``...)
and passed down to whatever installs a release, builds a commit or reads the
results store; :meth:`Settings.cli_args` gives the options back, so that another
command uses the same releases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.version import Version

from mgradcheck import backends
from mgradcheck.builds import sources
from mgradcheck.builds.builder import BuildOptions, default_jobs
from mgradcheck.builds.wheels import Built
from mgradcheck.corpus.entry import Entry
from mgradcheck.envs.venvs import EnvSpec, Installer, default_installer, find_uv, rebuilding
from mgradcheck.index.installable import Source, Target
from mgradcheck.releases.store import ProbeKey, ResultsStore, Runnable


@dataclass(frozen=True)
class Settings:
    """Where releases come from, what they are built for, and how the store is used."""

    target: Target
    source: Source
    installer: Installer
    store: ResultsStore = field(default_factory=ResultsStore)
    use_cached: bool = True  # False: --no-cache, run again (and store the new runs)
    record: bool = True  # False: new runs are not stored (runs the store's key does not describe)
    retry_failed: bool = False
    packages: tuple[str, ...] = ("numpy",)
    extras: tuple[str, ...] = ()  # --with: more requirements, normalised and sorted
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
        extras: Sequence[str] = (),
    ) -> Settings:
        """The settings of the release options, else the user's installer settings, else PyPI."""
        chosen = Installer(installer) if installer else default_installer()
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
            extras=tuple(sorted(set(extras))),
        )

    def cli_args(self) -> list[str]:
        """Options that make another mgradcheck command use the same releases."""
        args = self.source.cli_args()
        if self.target.backend != backends.default(self.target.system):
            args += ["--backend", self.target.backend]
        return args + [arg for extra in self.extras for arg in ("--with", extra)]

    def installing(self, version: Version) -> str:
        """What an install says while it runs (a rebuild, why), a status the next one replaces."""
        damage = rebuilding(self.spec(version))
        text = f"{'re' if damage else ''}installing mlx {version} ({self.target.backend})"
        if self.extras:
            text += f" with {', '.join(self.extras)}"
        if damage is not None:
            text += f", its environment damaged: {damage}"
        return text

    def fallback(self) -> str | None:
        """Said once, as a line that stays, when environments are made with pip for want of uv."""
        if self.installer is Installer.PIP and find_uv() is None:
            return "uv not found: environments are made with venv + pip, more slowly (pip install 'mgradcheck[uv]' for uv)"
        return None

    def build_cli_args(self) -> list[str]:
        """Options that make another mgradcheck command build commits the same way."""
        args = ["--mlx-repo", str(self.mlx_repo)] if self.mlx_repo is not None else []
        return args + (["--mlx-deps", str(self.mlx_deps)] if self.mlx_deps is not None else [])

    def spec(self, version: Version) -> EnvSpec:
        return EnvSpec(
            version,
            self.target,
            self.source,
            self.installer,
            self.packages,
            wheel=self.wheels.get(version),
            extras=self.extras,
        )

    def with_build(self, built: Built) -> Settings:
        """These settings, with the commit's own wheel as the mlx of its version."""
        return replace(self, wheels={**self.wheels, built.version: built.wheel})

    def build_options(self) -> BuildOptions:
        """How commits are built; the cached clone of upstream is made here, on first use."""
        return BuildOptions(
            sources.repository(self.mlx_repo),
            self.mlx_deps,
            self.build_jobs or default_jobs(),
            self.retry_failed,
        )

    def key(self, item: Runnable, version: Version, build: str) -> ProbeKey:
        """Where the runs of ``item`` on this build of ``version`` are stored: under --timeout, an
        entry's runs are those of the entry with that timeout (its content hash holds the timeout);
        runs beside other packages (--with) are those of the release with them."""
        if self.timeout is not None and isinstance(item, Entry):
            item = replace(item, timeout=self.timeout)
        target = self.target
        return ProbeKey(
            item.content_hash, str(version), target.backend, target.platform, build, self.extras
        )
