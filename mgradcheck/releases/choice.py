"""Which MLX a command runs: a release, or a commit built here, as one type.

``--mlx`` (``run``, ``tests``, ``sweep``) and bisect's ``--good``/``--bad`` are
parsed into a :class:`Release` or a :class:`Commit` once, where the command line
is read; everything downstream matches on the type and never guesses from
text again. Light on purpose: the options' callbacks import it.
"""

from __future__ import annotations

from dataclasses import dataclass
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


Mlx: TypeAlias = Release | Commit

__all__ = ["Commit", "Mlx", "Release"]
