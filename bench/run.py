"""Benchmark mgradcheck's own cost against its floor; print every figure as a ratio measured in one run.

    python bench/run.py [--rounds R] [--skip-corpus] [--report-entries N] [--kernels]

Measures, on this machine and interpreter (medians of R rounds, taken in this one run):
  1. one trivial entry against one bare ``python -c "import mlx.core as mx; x = mx.array(1.0)"``
     (target <= 4x);
  2. 20 trivial entries, -j1, against 20 bare imports one after another (target <= 1.35x),
     and the marginal cost of one more entry (from 20 and 80 entries);
  3. CLI start-up: ``mgradcheck --help`` (target <= 60 ms) and ``list`` against ``python -c pass``;
  4. ``mgradcheck validate`` of 20 small files (target <= 120 ms);
  5. 600 trivial entries with --json, --junit, --summary and --badge against none (target <= 1.2x);
  6. the bundled corpus: a cold run with every core (what a newcomer's ``make run`` does,
     kernel cache empty), warm with -j1 and with every core;
  7. with --kernels: which bundled entries build how many ``mx.compile`` CPU kernels, and how long
     each takes alone with an empty kernel cache.
Every mgradcheck runs with its own empty cache (so the first run of each measure also probes
the interpreter, and later rounds reuse the probe cache, as a user's second run would).
Everything measured runs with bytecode written and read, as an installed mgradcheck does:
``PYTHONDONTWRITEBYTECODE`` is dropped, since with it every start compiles Click and our
modules from source while the baseline (``import mlx.core``, a C extension) compiles nothing.
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
BARE = [PYTHON, "-c", "import mlx.core as mx; x = mx.array(1.0)"]
TRIVIAL = """\
id: trivial-{i}
title: Trivial entry {i}
summary: Does nothing; measures the runner's own cost.
upstream: {{report: "https://example.invalid/bench"}}
bug: {{outcome: fail, affects: []}}
code: |
  x = mx.array(1.0)
"""


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Wall time of one command, which must end as a run does (0 or 1), never in an error."""
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"bench: {' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}"
        )
    return elapsed


def median(rounds: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(rounds))


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "missed"


class Bench:
    def __init__(self, rounds: int, scratch: Path) -> None:
        self.rounds = rounds
        self.scratch = scratch
        self.env = {**os.environ, "MGRADCHECK_CACHE": str(scratch / "cache")}
        self.corpus = scratch / "trivial"
        self.corpus.mkdir()
        for i in range(600):
            (self.corpus / f"t{i:03}.yaml").write_text(TRIVIAL.format(i=i))

    def run(self, k: int, *extra: str) -> float:
        ids = [f"trivial-{i}" for i in range(k)]
        argv = [*MGRADCHECK, "run", "--corpus", str(self.corpus), "-q", "-j1", *ids, *extra]
        return timed(argv, self.env, cwd=self.scratch)

    def bare(self, k: int) -> float:
        start = time.perf_counter()
        for _ in range(k):
            subprocess.run(BARE, check=True)
        return time.perf_counter() - start

    def entries(self) -> None:
        self.run(1)  # the probe cache and bytecode, as on any second run
        one = median(self.rounds, partial(self.run, 1))
        bare_one = median(self.rounds, partial(self.bare, 1))
        ratio = one / bare_one
        print(
            f"one trivial entry        {one:.3f}s against one bare import {bare_one:.3f}s: "
            f"{ratio:.1f}x (target <= 4x: {verdict(ratio, 4)})"
        )
        sizes = (20, 80)
        measured = {k: (median(self.rounds, partial(self.run, k)), median(self.rounds, partial(self.bare, k))) for k in sizes}  # fmt: skip
        mine, floor = measured[20]
        print(
            f"20 trivial entries, -j1  {mine:.2f}s against 20 bare imports {floor:.2f}s: "
            f"{mine / floor:.2f}x (target <= 1.35x: {verdict(mine / floor, 1.35)})"
        )
        (m1, f1), (m2, f2) = measured[20], measured[80]
        slope, slope_bare = (m2 - m1) / 60, (f2 - f1) / 60
        print(
            f"                         one more entry {slope * 1000:.1f} ms against {slope_bare * 1000:.1f} ms "
            f"bare ({slope / slope_bare:.2f}x); fixed cost of a run {m1 - 20 * slope:.2f}s"
        )

    def startup(self) -> None:
        for command in ("--help", "list"):  # writes the bytecode a first start compiles
            timed([*MGRADCHECK, command], self.env, self.scratch)
        base = median(self.rounds, lambda: timed([PYTHON, "-c", "pass"]))
        helped = median(
            self.rounds, partial(timed, [*MGRADCHECK, "--help"], self.env, self.scratch)
        )
        listed = median(self.rounds, partial(timed, [*MGRADCHECK, "list"], self.env, self.scratch))
        print(
            f"mgradcheck --help        {helped * 1000:.0f} ms, python -c pass {base * 1000:.0f} ms "
            f"(target <= 60 ms: {verdict(helped, 0.060)}); list {listed * 1000:.0f} ms"
        )
        files = [str(self.corpus / f"t{i:03}.yaml") for i in range(20)]
        checked = median(self.rounds, partial(timed, [*MGRADCHECK, "validate", *files], self.env, self.scratch))  # fmt: skip
        print(
            f"validate of 20 files     {checked * 1000:.0f} ms (target <= 120 ms: {verdict(checked, 0.120)})"
        )

    def reports(self, n: int) -> None:
        out = self.scratch / "out"
        out.mkdir()
        four = ["--json", str(out / "r.json"), "--junit", str(out / "r.xml"),
                "--summary", str(out / "s.md"), "--badge", str(out / "b.svg")]  # fmt: skip
        without = median(self.rounds, partial(self.run, n))
        with_all = median(self.rounds, partial(self.run, n, *four))
        ratio = with_all / without
        print(
            f"{n} entries, 4 reports   {with_all:.1f}s against {without:.1f}s without: "
            f"{ratio:.2f}x (target <= 1.2x: {verdict(ratio, 1.2)})"
        )

    def bundled(self) -> None:
        cores = os.cpu_count() or 1
        env = {**os.environ, "MGRADCHECK_CACHE": str(self.scratch / "cache-corpus")}

        def corpus(jobs: int) -> float:
            return timed([*MGRADCHECK, "run", "-q", f"-j{jobs}"], env, self.scratch)

        cold = corpus(cores)
        warm_1 = median(self.rounds, partial(corpus, 1))
        warm_n = median(self.rounds, partial(corpus, cores))
        print(
            f"bundled corpus           cold, -j{cores} (make run on a fresh machine) {cold:.1f}s; "
            f"warm -j1 {warm_1:.1f}s, -j{cores} {warm_n:.1f}s (speed-up {warm_1 / warm_n:.2f} "
            f"= {warm_1 / warm_n / cores:.2f} x N)"
        )

    def kernels(self) -> None:
        """Each bundled entry alone, with an empty kernel cache: kernels built and seconds."""
        from mgradcheck.corpus.loader import bundled_corpus, load

        print("kernels built by each bundled entry alone (empty kernel cache):")
        for entry in load([bundled_corpus()]):
            tmp = Path(tempfile.mkdtemp(dir=self.scratch))
            env = {**os.environ, "MGRADCHECK_CACHE": str(tmp)}
            seconds = timed([*MGRADCHECK, "run", entry.id, "-q"], env, self.scratch)
            built = sum(1 for _ in (tmp / "kernels").rglob("*.so"))
            print(f"  {entry.id:<28} {built:>3} kernels  {seconds:6.1f}s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--skip-corpus", action="store_true", help="skip the bundled-corpus timings"
    )
    parser.add_argument(
        "--report-entries",
        type=int,
        default=600,
        metavar="N",
        help="entries for the report timing (at most 600; 0 skips it)",
    )
    parser.add_argument(
        "--kernels", action="store_true", help="also measure each entry's kernel builds"
    )
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # see the docstring: as installed
    import mlx.core as mx

    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"mlx {getattr(mx, '__version__', '?')}; load average {os.getloadavg()[0]:.1f}"
    )
    scratch = Path(tempfile.mkdtemp(prefix="mgradcheck-bench-"))
    try:
        bench = Bench(args.rounds, scratch)
        bench.startup()
        bench.entries()
        if args.report_entries:
            bench.reports(min(args.report_entries, 600))
        if not args.skip_corpus:
            bench.bundled()
        if args.kernels:
            bench.kernels()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
