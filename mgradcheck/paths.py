"""Where mgradcheck keeps things between runs: one cache root, marked as a cache."""

from __future__ import annotations

import os
import re
from pathlib import Path

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mgradcheck.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def cache_root() -> Path:
    """``$MGRADCHECK_CACHE``, else the user cache directory (XDG on Linux)."""
    override = os.environ.get("MGRADCHECK_CACHE")
    if override:
        root = Path(override)
    else:
        from platformdirs import user_cache_dir

        root = Path(user_cache_dir("mgradcheck", appauthor=False))
    root.mkdir(parents=True, exist_ok=True)
    tag = root / "CACHEDIR.TAG"
    if not tag.exists():
        from mgradcheck.atomic import write_text

        write_text(tag, CACHEDIR_TAG)
    return root


def safe_name(text: str) -> str:
    """A file-name-safe rendering of a version or label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def kernel_dir(mlx: str | None, backend: str | None, python: str) -> Path:
    """Where one MLX release keeps its compiled CPU kernels (its ``TMPDIR``).

    Old releases name their kernel files the same way across versions, so each
    release gets its own directory; it persists so warm kernels are reused.
    """
    name = safe_name(f"mlx-{mlx}-{backend}-py{python}")
    path = cache_root() / "kernels" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def last_report() -> Path:
    return cache_root() / "last-run.json"
