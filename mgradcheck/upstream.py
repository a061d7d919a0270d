"""MLX upstream: where its history lives, and how a commit of it is named and linked.

Light on purpose (no compiled regular expression at import): the corpus loader, the
builds and the command line's option parsers all use it.
"""

from __future__ import annotations

import re

REPOSITORY_URL = "https://github.com/ml-explore/mlx"
# Hex of at least 7 digits is a commit, never a release: no MLX version looks like that.
COMMIT_HASH = r"[0-9a-f]{7,40}"


def is_commit(text: str) -> bool:
    """Whether ``text`` names a commit by its hash (a ``--mlx`` value, ``bug.fixed_by``)."""
    return re.fullmatch(COMMIT_HASH, text) is not None


def commit_url(sha: str) -> str:
    return f"{REPOSITORY_URL}/commit/{sha}"


def short(sha: str) -> str:
    """A commit's hash as git and its reports show it."""
    return sha[:9]


__all__ = ["COMMIT_HASH", "REPOSITORY_URL", "commit_url", "is_commit", "short"]
