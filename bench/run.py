"""Benchmark mgradcheck's own cost against its floor; print every figure as a ratio measured in one run.

    python bench/run.py [--rounds R] [--only MEASURE]... [--skip-corpus] [--report-entries N] [--kernels]

Measures, on this machine and interpreter (medians of R rounds, taken in this one run), in CPU
time (user + system of the command and every child it waited for: less at the mercy of the
machine's load than the wall-clock time printed beside it):
  1. CLI start-up: ``mgradcheck --help`` (target <= 50 ms), against ``python -c pass``;
     ``list`` and ``validate`` of 20 small files (target <= 120 ms each);
  2. one trivial entry against one bare ``python -c "import mlx.core as mx; x = mx.array(1.0)"``
     (target <= 4x);
  3. 20 trivial entries, -j1, against 20 bare imports one after another (target <= 1.35x),
     and the marginal cost of one more entry (from 20 and 80 entries); for 2 and 3, the floor
     of the stack: a parent that imports only the libraries a run is built on (Click,
     dataclasses, pathlib, subprocess, ...) and starts the same bare children;
  4. the parent's own work per child, timed in this process: the probe cache read (once a
     run), a child's result read and judged, a report snapshot (every report file, rewritten
     at most once a second) of 20 and of 600 entries; and the load of the 600 corpus
     files, once for every entry and once for one named (once a run);
  5. 600 trivial entries with --json, --junit, --summary and --badge against none (target <= 1.2x);
  6. the bundled corpus: a cold run with every core (what a newcomer's ``make run`` does,
     kernel cache empty), warm with -j1 and with every core; and **the measure of a run's
     overhead**: a warm -j1 run's wall time against the sum of its children's lifetimes (the
     durations its JSON report gives), target <= 1.10 on a quiet machine (``--only corpus``);
  7. with --kernels: which bundled entries build how many ``mx.compile`` CPU kernels, and how long
     each takes alone with an empty kernel cache.
The targets are printed again together at the end; those of 1 to 3 (one trivial entry, 20
trivial entries) are retired, kept as figures: only the bundled corpus's ratio is a target.
``--only startup`` (or ``entries``, ``parent``, ``corpus``; repeatable) measures just those.
Every mgradcheck runs with its own empty cache (so the first run of each measure also probes
the interpreter, and later rounds reuse the probe cache, as a user's second run would).
The measures of a ratio are taken in turn, round after round, so that a machine whose speed
drifts moves both sides alike. Everything runs with bytecode written and read, as installed:
``PYTHONDONTWRITEBYTECODE`` is dropped, since with it every start compiles Click and our
modules from source while the baseline (``import mlx.core``, a C extension) compiles nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

PYTHON = sys.executable
MGRADCHECK = [PYTHON, "-m", "mgradcheck"]
BARE = [PYTHON, "-c", "import mlx.core as mx; x = mx.array(1.0)"]
# What a run is built on, and no run can start without: its command line, records and paths,
# child processes, JSON and threads, and the versions it compares.
STACK = "click, dataclasses, pathlib, subprocess, json, threading, packaging.version"
TRIVIAL = """\
id: trivial-{i}
title: Trivial entry {i}
summary: Does nothing; measures the runner's own cost.
upstream: {{report: "https://example.invalid/bench"}}
bug: {{outcome: fail, affects: []}}
code: |
  x = mx.array(1.0)
"""


@dataclass(frozen=True)
class Cost:
    """What commands cost: seconds of wall clock, and of CPU (user + system, children included)."""

    wall: float
    cpu: float

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.wall + other.wall, self.cpu + other.cpu)

    def __truediv__(self, other: Cost) -> float:
        return self.cpu / other.cpu  # ratios are of CPU time; wall time is shown beside them

    def ms(self) -> str:
        return f"{self.cpu * 1000:.0f} ms CPU ({self.wall * 1000:.0f} ms wall)"

    def s(self) -> str:
        return f"{self.cpu:.2f}s CPU ({self.wall:.2f}s wall)"


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)  # of the children waited for, and theirs
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Cost:
    """What one command costs; it must end as a run does (0 or 1), never in an error."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd, check=False
    )
    elapsed, used = time.perf_counter() - start, _cpu() - cpu
    if done.returncode not in (0, 1) or b"Traceback (most recent call last)" in done.stderr:
        raise SystemExit(
            f"bench: {' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}"
        )
    return Cost(elapsed, used)


def median(rounds: int, measure: Callable[[], Cost]) -> Cost:
    return paired(rounds, measure)[0]


def paired(rounds: int, *measures: Callable[[], Cost]) -> list[Cost]:
    """The median cost of each measure, taken in turn round after round: a machine whose speed
    drifts while they run (a shared host's) moves every one of them alike, not their ratio."""
    costs: list[list[Cost]] = [[] for _ in measures]
    for _ in range(rounds):
        for taken, measure in zip(costs, measures, strict=True):
            taken.append(measure())
    return [
        Cost(statistics.median(c.wall for c in taken), statistics.median(c.cpu for c in taken))
        for taken in costs
    ]


def per_call(call: Callable[[], object], calls: int = 200, rounds: int = 5) -> float:
    """CPU seconds one call takes in this process (median of ``rounds`` batches of ``calls``)."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            call()
        times.append((time.process_time() - start) / calls)
    return statistics.median(times)


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
        self.small = scratch / "twenty"  # what list and validate read: 20 small files
        self.small.mkdir()
        for i in range(20):
            shutil.copy(self.corpus / f"t{i:03}.yaml", self.small)
        self.targets: list[str] = []  # each target's line, printed again at the end

    def target(self, line: str) -> None:
        print(line)
        self.targets.append(line)

    def mgradcheck(self, *args: str) -> Cost:
        return timed([*MGRADCHECK, *args], self.env, self.scratch)

    def run(self, k: int, *extra: str) -> Cost:
        ids = [f"trivial-{i}" for i in range(k)]
        return self.mgradcheck("run", "--corpus", str(self.corpus), "-q", "-j1", *ids, *extra)

    def bare(self, k: int) -> Cost:
        total = Cost(0.0, 0.0)
        for _ in range(k):
            total += timed(BARE)
        return total

    def stack(self, k: int) -> Cost:
        """A parent that only imports what mgradcheck's run is built on, then starts ``k`` bare
        children one after another: the least a run of ``k`` entries could cost on it."""
        script = f"import {STACK}\nfor _ in range({k}): subprocess.run({BARE!r})"
        return timed([PYTHON, "-c", script])

    def entries(self) -> None:
        self.run(1)  # the probe cache and bytecode, as on any second run
        one, bare_one, least = paired(
            self.rounds, partial(self.run, 1), partial(self.bare, 1), partial(self.stack, 1)
        )
        ratio = one / bare_one
        self.target(
            f"one trivial entry        {one.ms()} against one bare import {bare_one.ms()}: "
            f"{ratio:.1f}x (target <= 4x: {verdict(ratio, 4)})"
        )
        sizes = (20, 80)
        measured = {k: paired(self.rounds, partial(self.run, k), partial(self.bare, k), partial(self.stack, k)) for k in sizes}  # fmt: skip
        mine, floor, least_20 = measured[20]
        self.target(
            f"20 trivial entries, -j1  {mine.s()} against 20 bare imports {floor.s()}: "
            f"{mine / floor:.2f}x (target <= 1.35x: {verdict(mine / floor, 1.35)})"
        )
        print(
            f"                         the floor of the stack ({STACK}, then the bare "
            f"children): one {least / bare_one:.1f}x, 20 {least_20 / floor:.2f}x"
        )
        (m1, f1, _), (m2, f2, _) = measured[20], measured[80]
        slope, slope_bare = (m2.cpu - m1.cpu) / 60, (f2.cpu - f1.cpu) / 60
        print(
            f"                         one more entry {slope * 1000:.1f} ms CPU against "
            f"{slope_bare * 1000:.1f} ms bare ({slope / slope_bare:.2f}x); "
            f"fixed cost of a run {(m1.cpu - 20 * slope) * 1000:.0f} ms CPU"
        )

    def startup(self) -> None:
        for command in ("--help", "list"):  # writes the bytecode a first start compiles
            self.mgradcheck(command)
        files = sorted(str(path) for path in self.small.iterdir())
        base, helped, listed, checked = paired(
            self.rounds,
            partial(timed, [PYTHON, "-c", "pass"]),
            partial(self.mgradcheck, "--help"),
            partial(self.mgradcheck, "list", "--corpus", str(self.small)),
            partial(self.mgradcheck, "validate", *files),
        )
        # The targets are absolute, set where `python -c pass` took 8 ms: each is shown as a
        # multiple of the interpreter's own start too, which carries from machine to machine.
        self.target(
            f"mgradcheck --help        {helped.ms()}, python -c pass {base.ms()}: "
            f"{helped / base:.1f}x (target <= 50 ms: {verdict(helped.cpu, 0.050)})"
        )
        worst = max(listed.cpu, checked.cpu)
        self.target(
            f"list, validate 20 files  {listed.ms()}; {checked.ms()}: {listed / base:.1f}x, "
            f"{checked / base:.1f}x python -c pass (target <= 120 ms: {verdict(worst, 0.120)})"
        )
        bundled = median(self.rounds, partial(self.mgradcheck, "list"))
        print(f"list (bundled corpus)    {bundled.ms()}")

    def parent(self) -> None:
        """The parent's own work per child, timed here: what one more entry costs beyond its child."""
        from mgradcheck.reports import json_report
        from mgradcheck.reports.outputs import report_outputs, write
        from mgradcheck.run import probe_cache
        from mgradcheck.run.child_process import ChildCommand
        from mgradcheck.run.child_result import observe, read_result

        os.environ["MGRADCHECK_CACHE"] = self.env["MGRADCHECK_CACHE"]
        report_path = self.scratch / "parent.json"
        self.run(20, "--json", str(report_path))  # a real report; the probe cache filled
        report = json_report.read(report_path)
        root = Path(self.env["MGRADCHECK_CACHE"]) / "probes"
        command = ChildCommand(PYTHON)

        def probe() -> object:
            key = probe_cache.key(command.python, command.env())
            return key is not None and probe_cache.get(root, key)

        hit = "" if probe() else " (a miss: this interpreter is not cached)"
        nonce = "0" * 32
        answer = {"version": 1, "status": "pass", "phase": "entry", "nonce": nonce,
                  "environment": report.environments[0].to_json(), "duration": 0.001}  # fmt: skip
        result = self.scratch / "result.json"
        result.write_text(json.dumps(answer))
        fd = os.open(result, os.O_RDONLY)

        def read() -> object:
            data, why = read_result(fd, nonce)
            return observe(0, False, 60.0, 0.02, "", "", data, why)

        out = self.scratch / "snapshot"
        out.mkdir(exist_ok=True)
        outputs = report_outputs(
            json=out / "r.json", junit=out / "r.xml", summary=out / "s.md", badge=out / "b.svg"
        )
        many = replace(report, results=report.results * 30)
        try:
            print(
                f"parent's work, CPU       probe cache read {per_call(probe) * 1000:.2f} ms "
                f"(once a run){hit}; a child's result read and judged "
                f"{per_call(read) * 1000:.3f} ms; report snapshot (4 files) of 20 entries "
                f"{per_call(partial(write, report, outputs), 10) * 1000:.1f} ms, of 600 "
                f"{per_call(partial(write, many, outputs), 1, 3) * 1000:.0f} ms (at most one a second)"
            )
        finally:
            os.close(fd)
        from mgradcheck.run import stages

        corpus = [self.corpus]
        every = per_call(partial(stages.load_corpus, corpus), 5)
        named = per_call(partial(stages.load_selected, corpus, ["trivial-0"]), 20)
        print(
            f"                         the corpus of 600 files loaded: every entry "
            f"{every * 1000:.1f} ms, one named {named * 1000:.1f} ms (once a run)"
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
            f"{n} entries, 4 reports   {with_all.s()} against {without.s()} without: "
            f"{ratio:.2f}x (target <= 1.2x: {verdict(ratio, 1.2)})"
        )

    def bundled(self) -> None:
        cores = os.cpu_count() or 1
        env = {**os.environ, "MGRADCHECK_CACHE": str(self.scratch / "cache-corpus")}
        report = self.scratch / "corpus.json"

        def corpus(jobs: int) -> float:
            return timed([*MGRADCHECK, "run", "-q", f"-j{jobs}", "--json", str(report)], env, self.scratch).wall  # fmt: skip

        def ratio() -> tuple[float, float]:
            """A -j1 run's wall time, and its ratio to the sum of its children's lifetimes (the
            report's durations): what the parent adds to what the reproducers cost."""
            wall = corpus(1)
            data = json.loads(report.read_text())
            children = sum(run["duration"] for result in data["results"] for run in result["runs"])
            return wall, wall / children

        cold = corpus(cores)
        warm_n = statistics.median(corpus(cores) for _ in range(self.rounds))
        walls, ratios = zip(*(ratio() for _ in range(self.rounds)), strict=True)
        warm_1 = statistics.median(walls)
        print(
            f"bundled corpus           cold, -j{cores} (make run on a fresh machine) {cold:.1f}s; "
            f"warm -j1 {warm_1:.1f}s, -j{cores} {warm_n:.1f}s (speed-up {warm_1 / warm_n:.2f} "
            f"= {warm_1 / warm_n / cores:.2f} x N)"
        )
        self.target(
            f"bundled corpus, -j1      wall time against the sum of its children's lifetimes: "
            f"{statistics.median(ratios):.3f}x (rounds {', '.join(f'{r:.3f}' for r in ratios)}; "
            f"target <= 1.10: {verdict(statistics.median(ratios), 1.10)}), "
            f"load average {os.getloadavg()[0]:.1f}"
        )

    def kernels(self) -> None:
        """Each bundled entry alone, with an empty kernel cache: kernels built and seconds."""
        from mgradcheck.corpus.files import bundled_corpus
        from mgradcheck.corpus.loader import load

        print("kernels built by each bundled entry alone (empty kernel cache):")
        for entry in load([bundled_corpus()]):
            tmp = Path(tempfile.mkdtemp(dir=self.scratch))
            env = {**os.environ, "MGRADCHECK_CACHE": str(tmp)}
            seconds = timed([*MGRADCHECK, "run", entry.id, "-q"], env, self.scratch).wall
            built = sum(1 for _ in (tmp / "kernels").rglob("*.so"))
            print(f"  {entry.id:<28} {built:>3} kernels  {seconds:6.1f}s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--only",
        action="append",
        choices=["startup", "entries", "parent", "corpus"],
        help="measure only this (repeatable): a quick check of one part",
    )
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
        chosen = args.only or ["startup", "entries", "parent"]
        for measure in ("startup", "entries", "parent"):
            if measure in chosen:
                getattr(bench, measure)()
        if not args.only and args.report_entries:
            bench.reports(min(args.report_entries, 600))
        if "corpus" in chosen or not (args.only or args.skip_corpus):
            bench.bundled()
        if not args.only and args.kernels:
            bench.kernels()
        print(f"targets, CPU time (medians of {args.rounds}):")
        for line in bench.targets:
            print(f"  {line}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
