"""The sweep's cost against its floor: the same cases in children and in one process; print ratios.

    python bench/sweep.py [--ops PATTERN ...] [--no-warm-up]

Measures, in one run, on this machine and this interpreter's MLX (warm: a
first pass fills the kernel cache, unless --no-warm-up):
  1. the whole catalogue with -j2, as `mgradcheck sweep` runs it (target <= 150 s
     on 2 cores), and its cases per second;
  2. the catalogue with -j1 against the same tasks run one after another in one
     process without isolation (no children, no batching, no logs), both on one
     core: the price of crash isolation (target <= 1.3x).
Both sides share one kernel cache directory, so neither builds what the other built.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from mgradcheck.run import stages
from mgradcheck.sweep.run import SweepOptions, plan, sweep

IN_ONE_PROCESS = """\
import json, sys
import mlx.core as mx
import numpy as np
from mgradcheck.child.gradcheck.api import check_spec
from mgradcheck.child import checks
scope = {"mx": mx, "np": np, **{n: getattr(checks, n) for n in checks.__all__}}
for spec in json.load(open(sys.argv[1])):
    try:
        check_spec(spec, scope)
    except Exception:
        pass  # a case that raises is one result among many, as in the sweep
"""


def in_one_process(specs: list[dict[str, object]], env: dict[str, str]) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(specs, f)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", IN_ONE_PROCESS, f.name], env=env, check=True)
    elapsed = time.perf_counter() - start
    os.unlink(f.name)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", action="append", default=[], help="Only these cases (patterns).")
    parser.add_argument("--no-warm-up", action="store_true", help="Skip the warming pass.")
    args = parser.parse_args()
    command, env = stages.prepare(sys.executable)
    options = SweepOptions(patterns=tuple(args.ops), shrink=False, budget=10_000)
    cases, tasks = plan(options)
    child_env = command.env()
    print(f"mlx {env.mlx} ({env.backend}), Python {platform.python_version()}, "
          f"{os.cpu_count()} cores; {len(cases)} cases, {len(tasks)} runs")  # fmt: skip
    if not args.no_warm_up:
        report = sweep(command, env, options)
        print(f"warm-up pass: {report.seconds:.1f} s")
    rows = []
    for jobs in (2, 1):
        report = sweep(command, env, SweepOptions(**{**options.__dict__, "jobs": jobs}))
        rows.append((f"sweep -j{jobs}", report.seconds, len(report.results)))
    one = in_one_process([dict(t.spec) for t in tasks], child_env)
    rows.append(("one process, no isolation", one, len(tasks)))
    for name, seconds, runs in rows:
        print(f"{name:<28} {seconds:8.1f} s  {runs / seconds:6.2f} runs/s")
    print(f"whole catalogue -j2: {rows[0][1]:.1f} s (target <= 150 s on 2 cores)")
    print(f"isolation, -j1 against one process: {rows[1][1] / one:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
