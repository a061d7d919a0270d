"""MLX's commits between two releases: the first-parent history a commit-level bisect walks.

A commit is named by a release (``0.32.0``, read as its tag ``v0.32.0``), a
tag, or a hash. The range between two of them is the first-parent history,
oldest first: upstream merges every pull request as one commit on ``main``,
so each item is one pull request, and the subject names it (``... (#3633)``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck.builds.sources import GitError, git, resolve
from mgradcheck.errors import UsageError
from mgradcheck.upstream import REPOSITORY_URL, commit_url, is_commit, short

COMPARE = f"{REPOSITORY_URL}/compare/{{}}...{{}}"  # upstream's changes from one git ref to another
# GitHub's squash merges end the subject with "(#123)"; merge commits say "Merge pull request #123".
_PULL = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)\b")
_FIELDS = "%H%x1f%s%x1f%an%x1f%cI"


def release_tag(version: Version) -> str:
    return f"v{version}"


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    author: str = ""
    date: str = ""  # committer date, ISO 8601

    @property
    def short(self) -> str:
        return short(self.sha)

    @property
    def pull_request(self) -> int | None:
        found = _PULL.search(self.subject)
        if found is None:
            return None
        return int(found.group(1) or found.group(2))

    @property
    def url(self) -> str:
        return commit_url(self.sha)

    @property
    def pull_url(self) -> str | None:
        number = self.pull_request
        return f"{REPOSITORY_URL}/pull/{number}" if number is not None else None

    def line(self) -> str:
        """``6335c834c Fix JVPs of select ... (#3633)``"""
        return f"{self.short} {self.subject}"

    def to_json(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "subject": self.subject,
            "author": self.author,
            "date": self.date,
            "pull_request": self.pull_request,
            "url": self.url,
            "pull_url": self.pull_url,
        }


def _parse(lines: str) -> list[Commit]:
    commits = []
    for line in lines.splitlines():
        if line.strip():
            sha, subject, author, date = line.split("\x1f")
            commits.append(Commit(sha, subject, author, date))
    return commits


def commit(repo: Path, sha: str) -> Commit:
    (found,) = _parse(git(repo, "log", "-1", f"--format={_FIELDS}", sha, "--"))
    return found


def resolve_ref(repo: Path, text: str) -> str:
    """The full hash of a release (``0.32.0`` -> tag ``v0.32.0``), tag or commit hash."""
    if not is_commit(text):
        try:
            version = Version(text)
        except InvalidVersion:
            pass
        else:
            try:
                return resolve(repo, release_tag(version), fetch=True)
            except UsageError:
                raise UsageError(
                    f"no tag {release_tag(version)} for mlx {text} in {repo} "
                    "(fetch the tags: git fetch --tags)"
                ) from None
    return resolve(repo, text)


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    try:
        git(repo, "merge-base", "--is-ancestor", older, newer)
    except GitError:
        return False
    return True


def first_parent_range(repo: Path, older: str, newer: str) -> tuple[Commit, ...]:
    """``older``, then every first-parent commit after it up to ``newer``, oldest first."""
    if older == newer:
        raise UsageError(f"{short(older)} is both ends: there is nothing between them")
    if not is_ancestor(repo, older, newer):
        raise UsageError(
            f"{short(older)} is not an ancestor of {short(newer)}: the ends must lie on one history"
        )
    after = _parse(
        git(repo, "log", "--first-parent", "--reverse", f"--format={_FIELDS}", f"{older}..{newer}")
    )
    parent = git(repo, "rev-parse", f"{after[0].sha}^").strip() if after else ""
    if parent != older:
        raise UsageError(
            f"{short(older)} is not on the first-parent history of {short(newer)} "
            "(it was merged from a side branch); give a commit of the main line"
        )
    return (commit(repo, older), *after)


def follows(repo: Path, sha: str, versions: Sequence[Version]) -> tuple[Version | None, int]:
    """The newest release of ``versions`` that ``sha`` descends from, and how many first-parent
    commits after it ``sha`` is (None, 0 when it follows none of them)."""
    for version in sorted(versions, reverse=True):
        try:
            tagged = resolve(repo, release_tag(version), fetch=False)
        except UsageError:
            continue
        if tagged == sha:
            return version, 0
        if is_ancestor(repo, tagged, sha):
            count = git(repo, "rev-list", "--count", "--first-parent", f"{tagged}..{sha}")
            return version, int(count.strip())
    return None, 0


def version_commit(version: Version) -> str | None:
    """The commit a self-built wheel's version names (MLX's ``0.32.0.dev20260101+6335c834c``)."""
    local = (version.local or "").removeprefix("g")
    return local if is_commit(local) else None


def tag(version: Version) -> str:
    """The upstream git ref of a release, or the commit of a build of one (``+6335c834c``)."""
    return version_commit(version) or release_tag(version)


__all__ = [
    "COMPARE",
    "REPOSITORY_URL",
    "Commit",
    "commit",
    "first_parent_range",
    "follows",
    "is_ancestor",
    "is_commit",
    "release_tag",
    "resolve_ref",
    "tag",
    "version_commit",
]
