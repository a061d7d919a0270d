"""Wheels of single MLX commits, built here once and kept in the cache under the commit's hash.

MLX publishes no per-commit builds, so a commit-level bisect makes its own.
Under ``cache_root()/builds/``::

    wheels/<target>/<sha>/       the commit's wheel, and build.json (written last, with the rename)
    wheels/<target>/<sha>-<digest>/   a work tree's: the commit and its uncommitted changes (work_tree.py)
    wheels/<target>/<sha>.failed.json   a commit that does not build: remembered, with its log's tail
    logs/<target>/<sha>.log      the commit's last build output
    work/<target>/src/           one clone, checked out at each commit in turn
    work/<target>/venv/          the build tools: the commit's build-system requirements, ninja
    ccache/                      the compiler cache (unless $CCACHE_DIR names another)
    deps/<name>/<version>/       dependencies taken from --mlx-deps clones (toolchain.py)

``<target>`` is backend, platform and Python (``cpu-linux-x86_64-py3.11``): a
wheel is built for one of each (:mod:`mgradcheck.builds.builder` builds it).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.atomic import write_text
from mgradcheck.builds.compiler_cache import NONE, Counts
from mgradcheck.clock import now
from mgradcheck.index.installable import Target
from mgradcheck.index.pages import wheel_file
from mgradcheck.paths import cache_root, safe_name
from mgradcheck.upstream import is_commit

SCHEMA = "mgradcheck-build"
BUILT = "build.json"


@dataclass(frozen=True)
class Built:
    """A commit's wheel, and what building it took (nothing when it was in the cache)."""

    sha: str
    wheel: Path
    version: Version
    seconds: float = 0.0
    steps: int = 0  # build steps run (ninja's count): how much the caches saved
    cached: bool = True
    compiled: Counts = NONE  # what ccache served of the compilations that ran


def target_key(target: Target) -> str:
    return safe_name(f"{target.backend}-{target.platform}-py{target.python}")


def builds_root() -> Path:
    return cache_root() / "builds"


def _wheel_dir(target: Target, sha: str) -> Path:
    return builds_root() / "wheels" / target_key(target) / sha


def failed_file(target: Target, sha: str) -> Path:
    return builds_root() / "wheels" / target_key(target) / f"{sha}.failed.json"


def log_path(target: Target, sha: str) -> Path:
    return builds_root() / "logs" / target_key(target) / f"{sha}.log"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def built(target: Target, sha: str) -> Built | None:
    """The commit's wheel from the cache, or None."""
    directory = _wheel_dir(target, sha)
    record = _read(directory / BUILT)
    if record is None or not (directory / str(record.get("wheel"))).is_file():
        return None
    return Built(sha, directory / record["wheel"], Version(record["version"]))


def cached_commits(target: Target, prefix: str) -> list[str]:
    """Full hashes of the built commits that start with ``prefix``."""
    root = builds_root() / "wheels" / target_key(target)
    if not root.is_dir():
        return []
    # A work tree's wheel (<sha>-<digest>) is no build of the commit alone.
    return sorted(
        p.name
        for p in root.iterdir()
        if p.name.startswith(prefix) and is_commit(p.name) and p.is_dir()
    )


def remembered_failure(target: Target, sha: str) -> str | None:
    """Why the commit did not build last time, or None."""
    record = _read(failed_file(target, sha))
    return str(record.get("cause", "")) if record is not None else None


def keep(
    sha: str, target: Target, wheel: Path, seconds: float, steps: int, compiled: Counts = NONE
) -> Built:
    """Move the wheel into the cache; its directory appears whole (a rename) or not at all."""
    found = wheel_file(wheel.name)
    assert found is not None  # checked by the caller
    dest = _wheel_dir(target, sha)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{sha}.", dir=dest.parent))
    try:
        partial.chmod(0o755)  # mkdtemp's 0700 would hide the wheel from others sharing the cache
        shutil.move(str(wheel), partial / wheel.name)
        record = {
            "schema": SCHEMA,
            "sha": sha,
            "version": str(found.version),
            "wheel": wheel.name,
            "seconds": round(seconds, 1),
            "steps": steps,
            **compiled.to_json(),
            "target": target_key(target),
            "built": now(),
        }
        write_text(partial / BUILT, json.dumps(record, indent=1))
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    failed_file(target, sha).unlink(missing_ok=True)
    return Built(sha, dest / wheel.name, found.version, seconds, steps, False, compiled)


__all__ = [
    "Built",
    "builds_root",
    "built",
    "cached_commits",
    "failed_file",
    "keep",
    "log_path",
    "remembered_failure",
    "target_key",
]
