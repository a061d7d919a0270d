"""The stages of ``mgradcheck sweep``: run the catalogue, group, shrink, emit, confirm.

Each stage is a plain function over typed values, importable and testable
without Click. The budget bounds the whole sweep: running the cases gets three
quarters of it, shrinking (every finding at once, up to ``-j`` children) what is
left, and a finding still shrinking when it runs out is reported as far as it
got; confirming the emitted entries (one child each) always runs, so every entry
written is known to reproduce or not.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mgradcheck import __version__
from mgradcheck.child.gradcheck_spec import CHECKS, FIRST_ORDER
from mgradcheck.corpus import loader
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Progress, Silent
from mgradcheck.run.observation import Environment
from mgradcheck.run.runner import Runner, RunOptions
from mgradcheck.run.stages import load_corpus
from mgradcheck.sweep import emit
from mgradcheck.sweep.case_runs import BATCH_SIZE, CaseResult, Executor, Status, Task
from mgradcheck.sweep.catalogue import DTYPES, Case, catalogue, select, tasks
from mgradcheck.sweep.coverage import Table, public_names, tabulate
from mgradcheck.sweep.explore.generate import Exploration, explore
from mgradcheck.sweep.explore.signatures import target_signatures
from mgradcheck.sweep.findings import Group, group
from mgradcheck.sweep.known import causes, settled
from mgradcheck.sweep.shrink import Shrunk, shrink_all
from mgradcheck.wording import count

SCHEMA = "mgradcheck-sweep"
SCHEMA_VERSION = 1
RUN_SHARE = 0.75


@dataclass(frozen=True)
class SweepOptions:
    patterns: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = DTYPES
    budget: float = 1800.0
    jobs: int = 2
    # Cases per child: each child pays an interpreter, NumPy and MLX (about 0.25 s), which at
    # 6 a child cost 3.9x the same runs in one process and at 96 1.2x (bench/sweep.py). A
    # child that dies or stalls costs only its unfinished cases a new child (run.batches).
    batch_size: int = BATCH_SIZE
    points: int = 2
    seed: int = 0
    # The transform checks (compile, vmap, views, ...) compare paths whose bugs rarely
    # depend on the dtype, and mx.compile builds a C++ kernel per graph on the CPU
    # (seconds each, cached per release): run them in these dtypes only, and first
    # order (jvp, vjp, finite differences, subsets, dtypes) in every dtype.
    transform_dtypes: tuple[str, ...] = ("float32",)
    skip: tuple[str, ...] = ()  # checks not run at all
    shrink: bool = True
    emit: Path | None = None
    # Calls drawn from the target MLX's signatures (sweep.explore), beside the catalogue's cases,
    # and as many graphs; with every_kind, the calls are every operation in every dtype kind.
    explore: int = 0
    every_kind: bool = False


@dataclass
class FindingReport:
    group: Group
    shrunk: Shrunk
    path: Path | None = None
    reproduced: bool | None = None  # None: not emitted, so not confirmed
    reproduction: str = ""
    cause: str = ""  # its probable cause, shared with other groups (see sweep.known)
    known: str | None = None  # the corpus entry that holds it
    by_design: bool = False  # that entry is a guard of documented behaviour

    def to_json(self) -> dict[str, Any]:
        return {
            **self.group.summary(),
            "shrunk": dict(self.shrunk.spec),
            "shrink_steps": self.shrunk.steps,
            "shrink_stopped": self.shrunk.stopped,  # "" unless the budget or an interrupt cut it
            "shrink_seconds": round(self.shrunk.seconds, 3),
            "shrink_spared": self.shrunk.spared,  # "" unless a known cause spared its shrinking
            "evidence": self.shrunk.result.to_json(),
            "emitted": str(self.path) if self.path else None,
            "reproduced": self.reproduced,
            "reproduction": self.reproduction,
            "cause": self.cause,
            "known": self.known,
            "by_design": self.by_design,
        }


@dataclass
class SweepReport:
    environment: Environment
    cases: int
    results: list[CaseResult]
    findings: list[FindingReport] = field(default_factory=list)
    seconds: float = 0.0
    budget: float = 0.0
    interrupted: Interrupted | None = None  # stopped by SIGINT/SIGTERM: the results are partial
    coverage: Table | None = None  # with --coverage: MLX's operations by transform
    explored: Exploration | None = None  # with --explore: the calls drawn, the operations skipped
    drawn: int = 0  # of the cases, how many are drawn calls or graphs (not the catalogue's)
    graphs: int = 0  # of the drawn, how many are graphs of several operations
    meta: dict[str, Any] = field(default_factory=dict)  # a shard's: see corpus.shard.split

    def counts(self) -> Counter[Status]:
        return Counter(r.status for r in self.results)

    @property
    def unshrunk(self) -> int:
        """How many findings the budget or an interrupt left before their shrinking ended."""
        return sum(1 for f in self.findings if f.shrunk.stopped)

    def summary_line(self) -> str:
        tally = self.counts()
        parts = ", ".join(f"{tally[s]} {s.label}" for s in Status if tally[s])
        causes = {f.cause for f in self.findings}
        known = {f.cause for f in self.findings if f.known and not f.by_design}
        designed = {f.cause for f in self.findings if f.by_design}
        return (
            f"{count(self.cases - self.drawn, 'catalogue case')}"
            + (
                f" and {count(self.drawn - self.graphs, 'drawn call')}"
                if self.drawn > self.graphs
                else ""
            )
            + (f" and {count(self.graphs, 'graph')}" if self.graphs else "")
            + f", {count(len(self.results), 'run')} in "
            f"{self.seconds:.0f}s on mlx {self.environment.mlx}: {parts}; "
            f"{count(len(self.findings), 'distinct finding')}"
            + (
                f" from {count(len(causes), 'cause')} ({len(known)} known in the corpus, "
                f"{len(designed)} by design, {len(causes) - len(known) - len(designed)} new)"
                if self.findings and all(f.cause for f in self.findings)
                else ""
            )
            + (f" ({self.unshrunk} left unshrunk)" if self.unshrunk else "")
            + (f" (interrupted by {self.interrupted})" if self.interrupted else "")
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "mgradcheck": __version__,
            "environment": self.environment.to_json(),
            "cases": self.cases,
            "seconds": round(self.seconds, 1),
            "budget": self.budget,
            "interrupted": self.interrupted is not None,
            "counts": {s.label: self.counts()[s] for s in Status},
            "findings": [f.to_json() for f in self.findings],
            "coverage": self.coverage.to_json() if self.coverage is not None else None,
            "explored": self.explored.to_json() if self.explored is not None else None,
            "meta": self.meta,
            "results": [r.to_json() for r in self.results],
        }


def plan(
    options: SweepOptions, cases: Sequence[Case] | None = None
) -> tuple[list[Case], list[Task]]:
    """The cases chosen by the patterns, and one task per case and dtype."""
    chosen = select(cases if cases is not None else catalogue(), options.patterns)
    planned = []
    for case, dtype in tasks(chosen, options.dtypes):
        wanted = CHECKS if dtype in options.transform_dtypes else (*FIRST_ORDER, "integers")
        checks = [c for c in wanted if c not in options.skip]
        planned.append(
            Task.of(case, dtype, seed=options.seed, points=options.points, checks=checks)
        )
    return chosen, planned


def spread(planned: Sequence[Task]) -> list[Task]:
    """``planned`` in the order that spreads a budget: the catalogue's cases, the drawn calls
    and the graphs take turns, one of each, so that none of the three waits for the others;
    within each, every operation's first task comes before any operation's second, so that
    an operation with many cases, or a slow one, cannot take the budget from the rest (the
    catalogue's cases of one operation in their order, as Hypothesis' examples)."""
    keys = []
    for kind in (0, 1, 2):  # catalogue, drawn calls, graphs
        turns: Counter[str] = Counter()
        mine = []
        for i, task in enumerate(planned):
            if _kind(task) == kind:
                mine.append((turns[task.case.op], i))
                turns[task.case.op] += 1
        keys += [((place, kind), i) for place, (_, i) in enumerate(sorted(mine))]
    return [planned[i] for _, i in sorted(keys)]


def _kind(task: Task) -> int:
    return 2 if task.case.graph is not None else 1 if task.case.drawn else 0


def explored(command: ChildCommand, env: Environment, options: SweepOptions) -> Exploration:
    """The calls and graphs ``options.explore`` asks for, drawn from the target MLX's own
    signatures."""
    signatures = target_signatures(command, env)
    n = options.explore
    calls = None if options.every_kind else n
    return explore(signatures, calls, options.seed, options.dtypes, catalogue(), graphs=n)


def confirm(
    paths: Sequence[Path], command: ChildCommand, env: Environment, jobs: int
) -> dict[Path, tuple[bool, str]]:
    """Validate the emitted entries with the corpus loader and run them as ``mgradcheck run`` would."""
    entries = loader.load(list(paths))
    outcome = Runner(command, env, RunOptions(jobs=jobs), Silent()).run(entries)
    confirmed = {}
    for path, result in zip(paths, outcome.results, strict=True):
        ok = result.outcome is not Outcome.PASS and result.verdict is Verdict.AS_EXPECTED
        confirmed[path] = (
            ok,
            f"{result.outcome_text} -> {result.verdict.label}: {result.reason}",
        )
    return confirmed


def sweep(
    command: ChildCommand,
    env: Environment,
    options: SweepOptions,
    progress: Progress | None = None,
    cases: Sequence[Case] | None = None,
    coverage: bool = False,
    explored: Exploration | None = None,
) -> SweepReport:
    """Run ``cases`` (default: the catalogue's; with ``explored``, its drawn calls among them)."""
    started = time.monotonic()
    chosen, planned = plan(options, cases)
    progress = progress or Silent()
    names = public_names(command, env) if coverage else None
    executor = Executor(
        command, env, jobs=options.jobs, batch_size=options.batch_size, progress=progress
    )
    progress.start(f"sweep of {count(len(chosen), 'case')} on mlx {env.mlx}", total=len(planned))
    planned = spread(planned)
    deadline = started + RUN_SHARE * options.budget
    try:
        results = executor.run(planned, deadline, on_result=_progress_line(progress, len(planned)))
    finally:
        progress.stop()
    report = SweepReport(env, len(chosen), results, budget=options.budget, explored=explored)
    report.drawn = sum(c.drawn for c in chosen)
    report.graphs = sum(c.graph is not None for c in chosen)
    report.interrupted = executor.interrupted
    if names is not None:
        report.coverage = tabulate(names, chosen, results, catalogue())
    if report.interrupted is not None:
        report.seconds = time.monotonic() - started
        return report  # no shrinking or emitting: the user asked to stop
    try:
        groups = group(results)
        shrunk = [Shrunk(found.representative()) for found in groups]
        spared, new = (
            settled(groups, _bundled(), env.mlx, env.backend) if options.shrink else ({}, set())
        )
        todo = [i for i in range(len(groups)) if i not in spared]
        if todo and options.shrink:
            # What may be new first, then the known: each pass has what budget is left.
            passes = [[i for i in todo if i in new], [i for i in todo if i not in new]]
            progress.start(f"shrinking {count(len(todo), 'finding')}", total=len(todo))
            done: dict[int, Shrunk] = {}
            try:
                for indices in passes:
                    each = [groups[i] for i in indices]
                    ends = shrink_all(each, executor, started + options.budget, progress)
                    done.update(zip(indices, ends, strict=True))
            finally:
                progress.stop()
            shrunk = [
                Shrunk(g.representative(), spared=spared[i]) if i in spared else done[i]
                for i, g in enumerate(groups)
            ]
            report.interrupted = executor.interrupted
        report.findings = [FindingReport(g, s) for g, s in zip(groups, shrunk, strict=True)]
        name_causes(report)
    except KeyboardInterrupt:  # Ctrl-C between the engine's runs: what finished stands
        report.interrupted = Interrupted(signal.SIGINT)
        report.seconds = time.monotonic() - started
        return report
    if options.emit is not None and report.findings and report.interrupted is None:
        options.emit.mkdir(parents=True, exist_ok=True)
        names = emit.free_ids([f.group for f in report.findings], options.emit)
        for finding, name in zip(report.findings, names, strict=True):
            finding.path = emit.write(options.emit, finding.group, finding.shrunk, env, name)
        progress.start(f"confirming {count(len(report.findings), 'emitted entry')}")
        progress.status("running each emitted entry as 'mgradcheck run' would")
        try:
            confirmed = confirm(
                [f.path for f in report.findings if f.path], command, env, options.jobs
            )
        finally:
            progress.stop()
        for finding in report.findings:
            if finding.path in confirmed:
                finding.reproduced, finding.reproduction = confirmed[finding.path]
    report.seconds = time.monotonic() - started
    return report


def _bundled() -> list[Entry]:
    """The bundled corpus, or nothing when it cannot be read (then every cause is new)."""
    try:
        return load_corpus([])
    except Exception:  # noqa: BLE001 - without the corpus, every cause is reported as new
        return []


def name_causes(report: SweepReport) -> None:
    """Each finding's cause, and the corpus entry (of the bundled corpus) that holds it."""
    env = report.environment
    found = causes(
        [f.group for f in report.findings],
        [f.shrunk.result for f in report.findings],
        _bundled(),
        env.mlx,
        env.backend,
    )
    for cause in found:
        for g in cause.groups:
            finding = next(f for f in report.findings if f.group is g)
            finding.cause, finding.known, finding.by_design = (
                cause.key,
                cause.entry,
                cause.by_design,
            )


def _progress_line(progress: Progress, total: int) -> Callable[[CaseResult], None]:
    """Tells ``progress`` of each case's result: a finding or an error by name, the count
    of cases, drawn calls and graphs run and of findings so far (as its status at most once
    a second, which a log shows as a line)."""
    ran: Counter[str] = Counter()
    said = 0.0

    def shown(result: CaseResult) -> None:
        nonlocal said
        case = result.task.case
        ran["case"] += 1
        ran["graph" if case.graph is not None else "drawn call" if case.drawn else ""] += 1
        ran["finding"] += result.status.is_finding
        if result.status.is_finding or result.status is Status.ERROR:
            progress.line(f"{result.task.key}: {result.status.label}")
        progress.advance()
        if ran["case"] == total or time.monotonic() - said >= 1.0:
            said = time.monotonic()
            drawn = [count(ran[k], k) for k in ("drawn call", "graph") if ran[k]]
            progress.status(
                f"{ran['case']}/{total} cases run"
                + (f" ({', '.join(drawn)})" if drawn else "")
                + f"; {count(ran['finding'], 'finding')} so far"
            )

    return shown
