"""Benchmark bisect on real MLX releases, in one run.

Prints:
  * probes per bisect over the full release range, against ceil(log2 N) + 2
    (both ends, then a halving search);
  * environment creation time for one release with uv against venv + pip
    (each twice: the second with the installer's download cache warm), and
    their ratio;
  * the time of the same bisect again, when every probe comes from the store.

Uses the real package index (your index settings apply) and a temporary
mgradcheck cache, so nothing is reused from earlier runs; uv's and pip's own
download caches are used as they are.

    python bench/releases.py [ENTRY_ID] [--corpus PATH]
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's directory comes first on sys.path, and this file is
# named like the standard library's bisect (which random and tempfile import).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import argparse
import math
import tempfile
import time
from pathlib import Path

from packaging.version import Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.envs import venvs
from mgradcheck.index.installable import Source, Target, list_releases
from mgradcheck.releases import bisect_releases as bisecting
from mgradcheck.releases.bisection import Plan
from mgradcheck.releases.regress import State
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import ResultsStore
from mgradcheck.run import stages as pipeline


def full_range(entry: Entry, allowed: list[Version], backend: str) -> Plan[Version]:
    """The entry's direction, over every release it allows: each end as far out as it judges."""
    goods, bads = bisecting.default_ends(entry, allowed, backend)
    if goods[0] > bads[0]:
        bads = sorted(bads)  # a fix: from the oldest release with the bug
    else:
        goods = sorted(goods)  # a break: from the oldest release without it
    n = bisecting.FALLBACKS + 1
    return Plan(tuple(goods[:n]), tuple(bads[:n]), tuple(allowed))


def timed_bisect(entry: Entry, settings: Settings) -> tuple[bisecting.BisectResult, float]:
    started = time.perf_counter()  # the index is asked every time, as the command does
    allowed = list_releases(settings.source, settings.target).versions
    result = bisecting.bisect(entry, full_range(entry, allowed, settings.target.backend), settings)
    return result, time.perf_counter() - started


def creation_time(
    settings: Settings, installer: venvs.Installer, version: Version, scratch: Path
) -> float:
    """Seconds to build one environment from nothing, in a fresh cache root."""
    os.environ["MGRADCHECK_CACHE"] = tempfile.mkdtemp(prefix=f"{installer.value}-", dir=scratch)
    spec = venvs.EnvSpec(version, settings.target, settings.source, installer)
    started = time.perf_counter()
    with venvs.using(spec) as env:
        assert not env.reused
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry", nargs="?", default="where-jvp-zero-tangent")
    parser.add_argument("--corpus", action="append", type=Path, default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mgradcheck-bench-") as tmp:
        scratch = Path(tmp)
        os.environ["MGRADCHECK_CACHE"] = str(scratch / "cache")
        settings = Settings(
            Target.current(),
            Source.from_options(),
            venvs.Installer.UV,
            ResultsStore(scratch / "results"),
        )
        releases = list_releases(settings.source, settings.target).versions
        n = len(releases)
        print(f"releases: {n} ({releases[0]} .. {releases[-1]}), {settings.target.describe()}")

        (entry,) = pipeline.select(pipeline.load_corpus(args.corpus), [args.entry])
        cold, cold_s = timed_bisect(entry, settings)
        searched = len(cold.points)
        bound = math.ceil(math.log2(searched)) + 2
        print(
            f"bisect {args.entry}: {len(cold.probes)} probes "
            f"({sum(p.state is State.UNKNOWN for p in cold.probes)} could not be judged) over {searched} releases "
            f"(ceil(log2 {searched}) + 2 = {bound}), {cold_s:.1f} s cold: {cold.headline()}"
        )
        warm, warm_s = timed_bisect(entry, settings)
        stored = sum(p.cached for p in warm.probes)
        print(
            f"warm-cache bisect: {warm_s * 1000:.0f} ms, index query included "
            f"({stored}/{len(warm.probes)} probes from the store)"
        )

        version = releases[-1]
        times = {}
        for installer in (venvs.Installer.UV, venvs.Installer.PIP):
            first = creation_time(settings, installer, version, scratch)
            second = creation_time(settings, installer, version, scratch)
            times[installer] = second
            print(
                f"env creation, mlx {version} with {installer.value}: {first:.1f} s first, {second:.1f} s again"
            )
        ratio = times[venvs.Installer.PIP] / times[venvs.Installer.UV]
        print(f"venv + pip / uv: {ratio:.1f}x (second builds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
