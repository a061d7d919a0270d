"""What ccache saved a build: its counters read before and after, as the build's own figures.

MLX's CMake puts ccache in front of the compiler when one is on PATH (the build
tools' environment brings one from PyPI when the machine has none). Its
counters are cumulative per cache directory, so a build's hits and misses are
the difference of two readings; no build of another target shares ours while
the target's lock is held, and one running beside it for another target could
only add to both readings alike in the rare case they overlap.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

HIT_KEYS = ("direct_cache_hit", "preprocessed_cache_hit")
MISS_KEYS = ("cache_miss",)


@dataclass(frozen=True)
class Counts:
    """Compilations served from the cache (hits) and run by the compiler (misses)."""

    hits: int = 0
    misses: int = 0
    known: bool = False  # False: no ccache ran, the figures mean nothing

    def since(self, before: Counts) -> Counts:
        if not (self.known and before.known):
            return Counts()
        return Counts(self.hits - before.hits, self.misses - before.misses, True)

    def to_json(self) -> dict[str, int | None]:
        """As a build's record and a probe's JSON keep it: null when no ccache ran."""
        known = self.known
        return {"ccache_hits": self.hits if known else None,
                "ccache_misses": self.misses if known else None}  # fmt: skip

    def line(self) -> str:
        if not self.known:
            return "no compiler cache"
        return f"{self.hits} of {self.hits + self.misses} compilations from ccache"


NONE = Counts()  # no ccache ran


def parse(text: str) -> Counts:
    """``ccache --print-stats`` output (one ``key<TAB>value`` a line) as counts."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            values[key.strip()] = int(value)
    if not any(k in values for k in (*HIT_KEYS, *MISS_KEYS)):
        return Counts()
    hits = sum(values.get(k, 0) for k in HIT_KEYS)
    return Counts(hits, sum(values.get(k, 0) for k in MISS_KEYS), True)


def counts(env: Mapping[str, str]) -> Counts:
    """The cache's counters now, in the build's environment (its PATH and CCACHE_DIR)."""
    program = shutil.which("ccache", path=env.get("PATH"))
    if program is None:
        return Counts()
    try:
        done = subprocess.run(
            [program, "--print-stats"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return Counts()
    return parse(done.stdout) if done.returncode == 0 else Counts()


__all__ = ["NONE", "Counts", "counts", "parse"]
