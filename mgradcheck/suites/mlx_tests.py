"""MLX's own tests at a tag (``--mlx-tests TAG``), and where an upstream test came from.

``python/tests`` of a revision is taken out of MLX's git history (the user's
``--mlx-repo`` clone, or the one kept in the cache: :mod:`mgradcheck.builds.sources`)
into the cache, once per commit: ``suites/mlx-<commit>/python/tests``. The
copy is made beside its final place and renamed into it, so a half-made copy
is never used. For harvest, the commit that added a test (the fix it came
with, as a rule) is found with ``git log -S``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.builds import sources
from mgradcheck.paths import cache_root
from mgradcheck.upstream import REPOSITORY_URL, commit_url

TESTS = "python/tests"
_PULL = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class Checkout:
    """Where an upstream suite came from: MLX's history, a revision and its commit."""

    repo: Path  # the git directory
    revision: str  # as the user named it: v0.32.1
    commit: str
    directory: Path  # the suite's copy: .../python/tests

    def file_url(self, relative: str, line: int) -> str:
        return f"{REPOSITORY_URL}/blob/{self.revision}/{TESTS}/{relative}#L{line}"


def checkout(revision: str, repo: Path | None = None) -> Checkout:
    """``python/tests`` of ``revision`` of MLX, copied into the cache on first use."""
    git_dir = sources.repository(repo)
    commit = sources.resolve(git_dir, revision)
    home = cache_root() / "suites" / f"mlx-{commit[:12]}"
    if not (home / TESTS).is_dir():
        home.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{home.name}-", dir=home.parent))
        try:
            sources.export(git_dir, commit, [TESTS], partial)
            try:
                partial.rename(home)
            except OSError:
                if not (home / TESTS).is_dir():  # another mgradcheck made it meanwhile: use that
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return Checkout(git_dir, revision, commit, home / TESTS)


@dataclass(frozen=True)
class Origin:
    """The commit that added a test, and its pull request when its subject names one."""

    commit: str
    subject: str
    pull: int | None

    @property
    def url(self) -> str:
        if self.pull is not None:
            return f"{REPOSITORY_URL}/pull/{self.pull}"
        return commit_url(self.commit)


def added_by(source: Checkout, relative: str, name: str) -> Origin | None:
    """The oldest commit up to the checkout that added ``def name(`` to the test file, if any."""
    text = sources.git(
        source.repo,
        "log",
        "--format=%H%x09%s",
        "--reverse",
        "-S",
        f"def {name}(",
        source.commit,
        "--",
        f"{TESTS}/{relative}",
    )
    for line in text.splitlines():
        commit, _, subject = line.partition("\t")
        found = _PULL.search(subject)
        return Origin(commit, subject, int(found.group(1)) if found else None)
    return None


__all__ = ["TESTS", "Checkout", "Origin", "added_by", "checkout"]
