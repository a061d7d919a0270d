"""The sweep at scale: cold and warm, split into shards, and against its floor in one process.

    python bench/sweep.py [--ops PATTERN ...] [--shards 2,4] [--skip shards|isolation]

Measures, in one run, on this machine and this interpreter's MLX, with a cache
of its own (a fresh $MGRADCHECK_CACHE, so the first pass builds every kernel):
  1. the default sweep as a user runs it (`mgradcheck sweep -j 2 --json`), cold
     then warm: its time and the compiled kernels each pass built (target: warm,
     shrinking included, at most 600 s on 2 cores);
  2. shards: every `--shard K/N` of the same sweep run one after another, for
     each N, dealt by the durations the warm pass recorded and without them (by
     runs): the largest shard's work over the whole job's work / N, where a
     process's work is its time less one start-up (the CLI's time before the
     sweep starts) (target <= 1.2 with durations);
  3. isolation: the catalogue with -j 1 and no shrinking against the same runs
     one after another in one process, without children (target <= 1.3x),
     both from the same warm kernels; both leave out the cases that crashed or
     hung in the warm pass, and when MLX still kills the process (memory one
     case corrupts can kill a later one) a new one goes on after that case.
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
from pathlib import Path
from typing import Any

# Runs the specs from argv[2] on, writing each one's index to argv[3] before it starts.
IN_ONE_PROCESS = """\
import json, sys
import mlx.core as mx
import numpy as np
from mgradcheck.child.gradcheck.api import check_spec
from mgradcheck.child import checks
scope = {"mx": mx, "np": np, **{n: getattr(checks, n) for n in checks.__all__}}
specs = json.load(open(sys.argv[1]))
with open(sys.argv[3], "w") as at:
    for k in range(int(sys.argv[2]), len(specs)):
        at.write(f"{k}\\n"); at.flush()
        try:
            check_spec(specs[k], scope)
        except Exception:
            pass  # a case that raises is one result among many, as in the sweep
"""


def cli_sweep(args: list[str], out: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one `mgradcheck sweep ... --json out` and its report."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "mgradcheck", "sweep", "-q", "--json", str(out), *args]
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL)
    if done.returncode not in (0, 1):  # 1: it found something, as a sweep does
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}")
    return time.perf_counter() - start, json.loads(out.read_text())


def kernels_in(root: Path) -> int:
    from mgradcheck.run.kernels import libraries

    return sum(1 for _ in libraries(root))


def in_one_process(specs: list[dict[str, object]], env: dict[str, str]) -> tuple[float, int]:
    """The specs one after another in one process, without isolation; when MLX kills it
    (memory one case corrupts can kill a later one), a new process goes on after the case
    it died in. Seconds, and how many processes died."""
    work = Path(tempfile.mkdtemp(prefix="mgradcheck-floor-"))
    (work / "specs.json").write_text(json.dumps(specs))
    start, first, died = time.perf_counter(), 0, 0
    while first < len(specs):
        code = [sys.executable, "-c", IN_ONE_PROCESS, str(work / "specs.json"), str(first)]
        done = subprocess.run([*code, str(work / "at")], env=env)
        if done.returncode == 0:
            break
        died += 1
        first = int((work / "at").read_text().split()[-1]) + 1
    return time.perf_counter() - start, died


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", action="append", default=[], help="Only these cases (patterns).")
    parser.add_argument("--shards", default="2,4", help="Shard counts to measure (default 2,4).")
    parser.add_argument(
        "--skip", action="append", default=[], choices=("whole", "shards", "isolation"),
        help="Leave a part out ('whole' reads the warm pass's report from --keep).",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="Keep the reports in this directory.")
    parser.add_argument(
        "--cache", type=Path, help="Use this cache (an earlier run's: its first pass is warm)."
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mgradcheck-bench-"))
    reports = args.keep or work / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    os.environ["MGRADCHECK_CACHE"] = str(args.cache or work / "cache")  # new: cold
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    select = [a for p in args.ops for a in ("--ops", p)]

    from mgradcheck.run import stages
    from mgradcheck.run.kernels import own_tmpdir
    from mgradcheck.sweep.pipeline import SweepOptions, plan, sweep

    command, mlx = stages.prepare(sys.executable)
    assert command.kernels is not None  # prepare() gives every interpreter its build's kernels
    kernels = command.kernels
    options = SweepOptions(patterns=tuple(args.ops))
    cases, tasks = plan(options)
    print(f"mlx {mlx.mlx} ({mlx.backend}), Python {platform.python_version()}, "
          f"{os.cpu_count()} cores; default sweep: {len(cases)} cases, {len(tasks)} runs", flush=True)  # fmt: skip

    rows: list[tuple[str, float, str]] = []

    def row(name: str, seconds: float, note: str = "") -> None:
        rows.append((name, seconds, note))
        print(f"  {name:<44} {seconds:8.1f} s  {note}", flush=True)

    whole: dict[str, float] = {}
    report: dict[str, Any] = {}
    for label in ("cold", "warm") if "whole" not in args.skip else ():
        before = kernels_in(kernels)
        seconds, report = cli_sweep(select, reports / f"whole-{label}.json", env)
        built = kernels_in(kernels) - before
        startup = seconds - report["seconds"]
        whole[label] = seconds
        row(f"default sweep -j2, {label} kernel cache", seconds,
            f"{built} kernels built; {len(report['results'])} runs, "
            f"{len(report['findings'])} findings; start-up {startup:.1f} s")  # fmt: skip
    if "whole" in args.skip:
        report = json.loads((reports / "whole-warm.json").read_text())
        whole["warm"] = report["seconds"]
    warm_startup = whole["warm"] - report["seconds"]
    died = {r["case"] for r in report["results"] if r["status"] in ("crash", "timeout")}
    work_whole = whole["warm"] - warm_startup

    if "shards" not in args.skip:
        durations = reports / "durations.json"
        subprocess.run(
            [sys.executable, "-m", "mgradcheck", "report", "durations",
             str(reports / "whole-warm.json"), "-o", str(durations)],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        for n in (int(x) for x in args.shards.split(",")):
            for dealt, extra in (("durations", ["--durations", str(durations)]), ("runs", [])):
                times = []
                for k in range(1, n + 1):
                    out = reports / f"shard-{dealt}-{k}-of-{n}.json"
                    seconds, report = cli_sweep([*select, "--shard", f"{k}/{n}", *extra], out, env)
                    times.append((seconds, seconds - report["seconds"]))
                largest = max(t for t, _ in times)
                ratio = (largest - warm_startup) / (work_whole / n)
                row(f"{n} shards by {dealt}: the largest", largest,
                    f"{ratio:.2f}x the whole's work / {n} (shards: "
                    + ", ".join(f"{t:.0f}" for t, _ in times) + " s)")  # fmt: skip

    if "isolation" not in args.skip:
        plain = SweepOptions(patterns=tuple(args.ops), shrink=False, budget=10_000, jobs=1)
        survived = [c for c in cases if c.id not in died]
        children = sweep(command, mlx, plain, cases=survived).seconds
        row(f"catalogue -j1, no shrinking, in children ({len(died)} cases out)", children)
        with own_tmpdir(kernels, work) as tmp:  # the same warm kernels, as a child gets them
            specs = [dict(t.spec) for t in plan(plain, survived)[1]]
            one, deaths = in_one_process(specs, {**command.env(), **tmp})
        row("the same runs in one process", one,
            f"isolation {children / one:.2f}x ({deaths} times killed by MLX and gone on)")  # fmt: skip

    print(f"\nwarm default sweep: {whole['warm']:.0f} s (target <= 600 s on 2 cores)")
    for name, _, note in rows:
        if "shards by durations" in name or name.startswith("the same runs"):
            print(f"{name}: {note.split(' (')[0]}")
    print(f"reports in {reports}")


if __name__ == "__main__":
    main()
