"""Benchmark ``mgradcheck tests``: one interpreter per test against ``--per-child N``; print the ratio.

    python bench/suites.py [--mlx 0.32.4] [--mlx-tests v0.32.1] [--mlx-repo PATH]
                           [--file test_autograd.py] [--per-child 8] [--rounds 3]

Runs MLX's own test file (python/tests of the tag, from ``--mlx-repo`` or the
clone kept in the cache) under one release, ``-j1`` both ways so that the
figure is the cost per test and not the parallelism, after one warm-up run
(the release's environment and its compiled kernels). Checks that both ways
give every test the same outcome before printing their times (medians of the
rounds, taken in this one run) and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def run(args: list[str], report: Path) -> tuple[float, dict[str, str]]:
    """Wall time of one ``mgradcheck tests`` run and each test's outcome from its JSON report."""
    start = time.perf_counter()
    done = subprocess.run(
        [*MGRADCHECK, "tests", *args, "-j", "1", "-q", "--json", str(report)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"bench: mgradcheck tests exited {done.returncode}:\n{done.stderr.decode()[-2000:]}"
        )
    data = json.loads(report.read_text())
    return elapsed, {r["id"]: r["outcome"] for r in data["results"]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mlx", default="0.32.4", help="the MLX release to run under")
    parser.add_argument(
        "--mlx-tests", default="v0.32.1", help="the MLX tag whose python/tests to run"
    )
    parser.add_argument("--mlx-repo", help="a clone of MLX (default: the one kept in the cache)")
    parser.add_argument("--file", default="test_autograd.py")
    parser.add_argument("--per-child", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    suite = ["--mlx-tests", args.mlx_tests, args.file, "--mlx", args.mlx]
    if args.mlx_repo:
        suite += ["--mlx-repo", args.mlx_repo]
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"mlx {args.mlx}; MLX {args.mlx_tests} python/tests/{args.file}"
    )
    with tempfile.TemporaryDirectory(prefix="mgradcheck-bench-") as scratch:
        report = Path(scratch) / "report.json"
        _, alone = run(suite, report)  # warm-up: the environment, its kernels, the suite's copy
        one, grouped = [], []
        for _ in range(args.rounds):
            elapsed, outcomes = run(suite, report)
            one.append(elapsed)
            assert outcomes == alone, "one test per child gave different outcomes from run to run"
            elapsed, outcomes = run([*suite, "--per-child", str(args.per_child)], report)
            grouped.append(elapsed)
            differ = {t: (alone[t], outcomes[t]) for t in alone if outcomes.get(t) != alone[t]}
            assert not differ, f"--per-child {args.per_child} changed outcomes: {differ}"
    a, b = statistics.median(one), statistics.median(grouped)
    print(f"tests                  {len(alone)} tests, same outcomes both ways")
    print(f"one interpreter each   {a:.2f}s ({a / len(alone) * 1000:.0f} ms per test)")
    print(f"--per-child {args.per_child:<10} {b:.2f}s ({b / len(alone) * 1000:.0f} ms per test)")
    print(f"ratio                  one per child / --per-child {args.per_child} = {a / b:.2f}x")


if __name__ == "__main__":
    main()
