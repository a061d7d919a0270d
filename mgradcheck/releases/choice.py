"""Which MLX a command runs: a release, or a commit built here, as one type.

``--mlx`` (``run``, ``tests``, ``sweep``) and bisect's ``--good``/``--bad`` are
parsed into a :class:`Release`, a :class:`Commit` or (``--mlx`` only) a
:class:`WorkTree` once, where the command line
is read; everything downstream matches on the type and never guesses from
text again. Light on purpose: the options' callbacks import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from packaging.version import Version


@dataclass(frozen=True)
class Release:
    """A published release, installed from the index into its cached environment."""

    version: Version

    def __str__(self) -> str:
        return str(self.version)


@dataclass(frozen=True)
class Commit:
    """A commit of MLX's history, built here once: a hash (for bisect's ends, also a tag)."""

    ref: str

    def __str__(self) -> str:
        return self.ref


@dataclass(frozen=True)
class WorkTree:
    """A directory holding a clone of MLX, built as it stands: its commit and its uncommitted
    changes (:mod:`mgradcheck.builds.work_tree`)."""

    path: Path

    def __str__(self) -> str:
        return str(self.path)


Mlx: TypeAlias = Release | Commit | WorkTree

__all__ = ["Commit", "Mlx", "Release", "WorkTree"]
