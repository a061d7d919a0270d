"""Which MLX releases can be installed here, read from the package index (never from changelogs).

A release is listed when the index (or a ``--find-links`` directory) holds an
``mlx`` wheel this interpreter can install and, on Linux, a wheel of the
backend's companion package of the same version (``mlx-cpu``, ``mlx-cuda*``):
without it the release has no backend to run on. The exception is the CPU
releases from before that split, whose ``mlx`` wheel holds the backend itself.
Versions are ordered by ``packaging``; pre-releases and yanked releases are
listed only on request.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, sys_tags
from packaging.version import InvalidVersion, Version

from mgradcheck import backends
from mgradcheck.errors import ReleaseError
from mgradcheck.index.pages import WheelFile, fetch_project, redact, wheels_in
from mgradcheck.index.urls import check_index_url as check_index_url  # read from here too

DEFAULT_INDEX = "https://pypi.org/simple"
# Checked in this order; an explicit --index-url beats them all.
INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
NO_INDEX_VARIABLES = ("UV_NO_INDEX", "PIP_NO_INDEX")
_UNSAFE_VERSION = re.compile(r"[\s/\\]")
# Real versions are short; a long one would only make environment names too long for the file system.
MAX_VERSION = 64


def parse_version(text: str) -> Version:
    """A PEP 440 version from the user, checked before it goes anywhere near a subprocess."""
    if not text or text.startswith("-") or _UNSAFE_VERSION.search(text):
        raise ReleaseError(f"{text!r} is not an MLX version (expected something like 0.29.1)")
    if len(text) > MAX_VERSION:
        raise ReleaseError(
            f"{text[:20]!r}... is too long for an MLX version ({len(text)} characters)"
        )
    try:
        return Version(text)
    except InvalidVersion:
        raise ReleaseError(
            f"{text!r} is not a valid PEP 440 version (expected something like 0.29.1)"
        ) from None


def parse_range(text: str) -> SpecifierSet:
    """A version range such as ``>=0.29,<0.32``."""
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ReleaseError(
            f"{text!r} is not a version range (expected e.g. '>=0.29,<0.32')"
        ) from None


@dataclass(frozen=True)
class Source:
    """Where releases come from: an index (None: no index at all) and an optional wheel directory."""

    index_url: str | None = DEFAULT_INDEX
    find_links: Path | None = None

    @classmethod
    def from_options(
        cls,
        index_url: str | None = None,
        find_links: Path | None = None,
        no_index: bool = False,
        environ: Mapping[str, str] = os.environ,
    ) -> Source:
        """The user's choice, else their installer settings (UV_*/PIP_* variables), else PyPI."""
        if find_links is not None:
            if not find_links.is_dir():
                raise ReleaseError(f"--find-links {find_links}: no such directory")
            find_links = find_links.resolve()
        env_no_index = any(
            environ.get(v, "").lower() in ("1", "true", "yes") for v in NO_INDEX_VARIABLES
        )
        if no_index or (env_no_index and index_url is None):
            if find_links is None:
                raise ReleaseError(
                    "without an index, give --find-links DIR to say where the wheels are"
                )
            return cls(None, find_links)
        if index_url is None:
            index_url = next((environ[v] for v in INDEX_VARIABLES if environ.get(v)), DEFAULT_INDEX)
        return cls(check_index_url(index_url), find_links)

    def describe(self) -> str:
        parts = [redact(self.index_url)] if self.index_url else ["no index"]
        if self.find_links is not None:
            parts.append(f"wheels in {self.find_links}")
        return " + ".join(parts)

    def installer_args(self) -> list[str]:
        """The same flags for uv and pip, so that what is listed is what gets installed."""
        args = ["--index-url", self.index_url] if self.index_url else ["--no-index"]
        if self.find_links is not None:
            args += ["--find-links", str(self.find_links)]
        return args

    def cli_args(self) -> list[str]:
        """Options that make another mgradcheck command use this source (any password redacted)."""
        args = ["--no-index"] if self.index_url is None else []
        if self.index_url is not None and self.index_url != DEFAULT_INDEX:
            args += ["--index-url", redact(self.index_url)]
        if self.find_links is not None:
            args += ["--find-links", str(self.find_links)]
        return args

    def key(self) -> dict[str, Any]:
        return {
            "index": self.index_url,
            "find_links": str(self.find_links) if self.find_links else None,
        }


@dataclass(frozen=True)
class Target:
    """What an environment is built for: backend, platform, and the interpreter's wheel tags."""

    backend: str
    system: str
    platform: str
    python: str  # major.minor, part of every environment's name
    python_full: str
    interpreter: str
    tags: frozenset[Tag] = field(repr=False, default=frozenset())

    @classmethod
    def current(cls, backend: str | None = None) -> Target:
        system = platform.system()
        return cls(
            backend=backend or backends.default(system),
            system=system,
            platform=f"{sys.platform}-{platform.machine()}",
            python=f"{sys.version_info.major}.{sys.version_info.minor}",
            python_full=platform.python_version(),
            interpreter=sys.executable,
            tags=frozenset(sys_tags()),
        )

    @property
    def companions(self) -> tuple[str, ...]:
        """Packages that must exist at the same version for a release to run on this backend."""
        return backends.BY_NAME[self.backend].companions if self.system == "Linux" else ()

    @property
    def device(self) -> str:
        """The backend MLX runs on (a corpus entry's backend): every CUDA build is ``cuda``."""
        return backends.family(self.backend)

    def requirement(self, version: Version) -> str:
        """``mlx[cpu]`` on Linux CPU, ``mlx[cuda13]`` etc. with CUDA, plain ``mlx`` on macOS."""
        extra = f"[{backends.BY_NAME[self.backend].extra}]" if self.companions else ""
        return f"mlx{extra}=={version}"

    def describe(self) -> str:
        return f"{self.backend} on {self.platform}, Python {self.python}"


@dataclass(frozen=True)
class Release:
    version: Version
    yanked: bool = False
    size: int | None = None  # bytes of its wheels for the target, where the listing says


@dataclass(frozen=True)
class Listing:
    """The releases installable for one target from one source, oldest first."""

    releases: tuple[Release, ...]
    source: Source
    target: Target
    skipped_pre: int = 0
    skipped_yanked: int = 0

    @property
    def versions(self) -> list[Version]:
        return [r.version for r in self.releases]

    def get(self, version: Version) -> Release | None:
        return next((r for r in self.releases if r.version == version), None)

    def require(self, version: Version) -> Release:
        """The release, or an error that says what is available instead."""
        release = self.get(version)
        if release is not None:
            return release
        newest = f" (newest: {self.releases[-1].version})" if self.releases else ""
        raise ReleaseError(
            f"mlx {version} is not installable for {self.target.describe()} from {self.source.describe()}"
            f"{newest}; 'mgradcheck envs releases' lists what is"
        )

    def empty_reason(self) -> str:
        hints = []
        if self.skipped_pre:
            hints.append(f"{self.skipped_pre} pre-releases skipped (--pre)")
        if self.skipped_yanked:
            hints.append(f"{self.skipped_yanked} yanked skipped (--yanked)")
        extra = f"; {', '.join(hints)}" if hints else ""
        return f"no MLX release installable for {self.target.describe()} from {self.source.describe()}{extra}"


def _installable(files: Iterable[WheelFile], target: Target) -> dict[Version, bool]:
    """Version -> yanked (true only when every compatible file of that version is)."""
    versions: dict[Version, bool] = {}
    for wheel in files:
        if not wheel.tags & target.tags:
            continue
        if wheel.requires_python:
            try:
                if not SpecifierSet(wheel.requires_python).contains(
                    target.python_full, prereleases=True
                ):
                    continue
            except InvalidSpecifier:
                pass  # an index's typo does not make the wheel uninstallable
        versions[wheel.version] = versions.get(wheel.version, True) and wheel.yanked
    return versions


def _download_size(
    files: Mapping[str, Sequence[WheelFile]], target: Target, version: Version
) -> int | None:
    """The bytes one install of ``version`` downloads (MLX and its companions), None if unknown.

    Of several wheels that fit the target (manylinux tags of two ages) the installer takes one;
    the largest is a fair estimate of it.
    """
    total = 0
    for project in ("mlx", *target.companions):
        sizes = [
            w.size
            for w in files.get(project, ())
            if w.version == version and w.tags & target.tags and w.size is not None
        ]
        if project == "mlx" and not sizes:
            return None
        total += max(sizes, default=0)
    return total


def select_releases(
    files: Mapping[str, Sequence[WheelFile]],
    target: Target,
    source: Source,
    pre: bool = False,
    yanked: bool = False,
) -> Listing:
    """Pure: the releases in ``files`` (project -> wheels) installable for ``target``."""
    mlx = _installable(files.get("mlx", ()), target)
    if target.companions:
        companion: dict[Version, bool] = {}
        for project in target.companions:
            for version, was_yanked in _installable(files.get(project, ()), target).items():
                companion[version] = companion.get(version, True) and was_yanked
        # Releases from before the split need no companion where the mlx wheel held the
        # backend itself (installing them with the [cpu] extra only warns).
        split = min(companion, default=None)
        bundled = backends.BY_NAME[target.backend].bundled
        mlx = {
            v: y or companion.get(v, False)
            for v, y in mlx.items()
            if v in companion or (bundled and (split is None or v < split))
        }
    releases, skipped_pre, skipped_yanked = [], 0, 0
    for version in sorted(mlx):
        if version.is_prerelease and not pre:
            skipped_pre += 1
        elif mlx[version] and not yanked:
            skipped_yanked += 1
        else:
            releases.append(Release(version, mlx[version], _download_size(files, target, version)))
    return Listing(tuple(releases), source, target, skipped_pre, skipped_yanked)


def list_releases(
    source: Source, target: Target, pre: bool = False, yanked: bool = False
) -> Listing:
    """Ask the index (and read the wheel directory) for every installable release."""
    files: dict[str, list[WheelFile]] = {}
    projects = ("mlx", *target.companions)
    if source.index_url:
        for project in projects:
            files[project] = fetch_project(source.index_url, project)
    if source.find_links is not None:
        for wheel in wheels_in(source.find_links):
            files.setdefault(wheel.project, []).append(wheel)
    return select_releases(files, target, source, pre, yanked)
