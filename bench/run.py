"""Benchmark mgradcheck's own cost against its floor; print ratios measured in one run.

    python bench/run.py [--entries N] [--rounds R] [--skip-corpus]

Measures, on this machine and interpreter:
  1. per-entry overhead: ``mgradcheck run`` of N trivial entries against N bare
     ``python -c "import mlx.core"`` subprocesses (target <= 1.15x);
  2. parallel scaling: the bundled corpus with -j1 against -jN on N cores
     (target >= 0.85 x N);
  3. CLI start-up: ``mgradcheck --help`` and ``mgradcheck list`` against ``python -c pass``;
  4. the full bundled run with a cold and a warm MLX kernel cache.
Each timing is the median of R rounds, taken in this one run.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

PYTHON = sys.executable
MGRADCHECK = [PYTHON, "-m", "mgradcheck"]
TRIVIAL = """\
id: trivial-{i}
title: Trivial entry {i}
summary: Does nothing; measures the runner's own cost.
upstream: {{report: "https://example.invalid/bench"}}
bug: {{outcome: fail, affects: []}}
code: |
  x = mx.array(1.0)
"""


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Wall time of one command, which must end as a run does (0 or 1), never in an error."""
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"bench: {' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}"
        )
    return elapsed


def median(rounds: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(rounds))


def with_cache(cache: Path) -> dict[str, str]:
    return {**os.environ, "MGRADCHECK_CACHE": str(cache)}


def overhead(n: int, rounds: int, scratch: Path) -> None:
    """mgradcheck against bare imports at n and 4n entries: the ratio, and how the
    difference splits into a fixed cost (CLI start-up, the interpreter probe, the
    table) and a marginal cost per entry (the slope between the two sizes)."""
    sizes = (n, 4 * n)
    corpus = scratch / "trivial"
    corpus.mkdir()
    for i in range(sizes[-1]):
        (corpus / f"t{i:03}.yaml").write_text(TRIVIAL.format(i=i))
    env = with_cache(scratch / "cache-trivial")
    timed([*MGRADCHECK, "run", "--corpus", str(corpus), "-q", "trivial-0"], env)  # warm caches

    def ours(k: int) -> float:
        ids = [f"trivial-{i}" for i in range(k)]
        return timed([*MGRADCHECK, "run", "--corpus", str(corpus), "-q", "-j1", *ids], env)

    def bare(k: int) -> float:
        start = time.perf_counter()
        for _ in range(k):
            subprocess.run([PYTHON, "-c", "import mlx.core"], check=True)
        return time.perf_counter() - start

    measured = {
        k: (median(rounds, partial(ours, k)), median(rounds, partial(bare, k))) for k in sizes
    }
    for k, (mine, floor) in measured.items():
        print(
            f"per-entry overhead     {k} trivial entries: mgradcheck {mine:.2f}s, "
            f"bare imports {floor:.2f}s, ratio {mine / floor:.2f}x (target <= 1.15x)"
        )
    (m1, f1), (m2, f2) = measured[sizes[0]], measured[sizes[1]]
    slope_ours, slope_bare = (m2 - m1) / (sizes[1] - sizes[0]), (f2 - f1) / (sizes[1] - sizes[0])
    fixed = m1 - slope_ours * sizes[0]
    print(
        f"                       marginal cost per entry {slope_ours * 1000:.1f} ms against "
        f"{slope_bare * 1000:.1f} ms bare ({slope_ours / slope_bare:.2f}x); fixed cost {fixed:.2f}s"
    )


def startup(rounds: int) -> None:
    base = median(rounds, lambda: timed([PYTHON, "-c", "pass"]))
    for args in (["--help"], ["list"]):
        t = median(rounds, partial(timed, [*MGRADCHECK, *args]))
        print(
            f"CLI start-up           mgradcheck {' '.join(args):<7} {t * 1000:.0f} ms, python -c pass {base * 1000:.0f} ms, ratio {t / base:.1f}x"
        )


def corpus(rounds: int, scratch: Path) -> None:
    cores = os.cpu_count() or 1
    cold_cache = scratch / "cache-cold"
    cold = timed([*MGRADCHECK, "run", "-q", "-j1"], with_cache(cold_cache))
    warm = median(rounds, lambda: timed([*MGRADCHECK, "run", "-q", "-j1"], with_cache(cold_cache)))
    print(
        f"bundled corpus         -j1 cold kernel cache {cold:.2f}s, warm {warm:.2f}s, cold/warm {cold / warm:.2f}x"
    )
    parallel = median(
        rounds, lambda: timed([*MGRADCHECK, "run", "-q", f"-j{cores}"], with_cache(cold_cache))
    )
    speedup = warm / parallel
    print(
        f"parallel scaling       -j1 {warm:.2f}s, -j{cores} {parallel:.2f}s: speed-up {speedup:.2f} "
        f"= {speedup / cores:.2f} x N (target >= 0.85 x N)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--skip-corpus", action="store_true", help="skip the bundled-corpus timings"
    )
    args = parser.parse_args()
    import mlx.core as mx

    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, mlx {getattr(mx, '__version__', '?')}"
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: every process compiles its Python from source")
    scratch = Path(tempfile.mkdtemp(prefix="mgradcheck-bench-"))
    try:
        startup(args.rounds)
        overhead(args.entries, args.rounds, scratch)
        if not args.skip_corpus:
            corpus(args.rounds, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
