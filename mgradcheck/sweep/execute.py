"""Run sweep tasks in children, several per child, without giving up crash isolation.

Each child runs a batch of gradcheck specs and appends a "start" and a "done"
line per case to a log file the parent names. When a child dies (a segfault in
MLX, an abort, a timeout), the case that started without finishing is re-run
alone, and the cases that never started are batched again; a case that
crashes alone is a finding, one that crashed only after others in its batch is
noted as such.
"""

from __future__ import annotations

import enum
import itertools
import json
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mgradcheck.child.gradcheck_spec import UNSUPPORTED
from mgradcheck.corpus.entry import Bug, Entry, Upstream
from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.run.batches import read_log
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Labelled, Progress, Silent
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.runner import Runner, RunOptions
from mgradcheck.sweep.catalogue import Case


class Status(enum.Enum):
    """What one case at one dtype did, in report order."""

    WRONG = ("wrong answer", True)
    CRASH = ("crash", True)
    TIMEOUT = ("timeout", True)
    ERROR = ("error", False)  # the case itself raised: a catalogue or harness problem
    UNSUPPORTED = ("unsupported", False)
    NOT_CHECKED = ("not checked", False)
    PASS = ("pass", False)
    NOT_RUN = ("not run", False)

    def __init__(self, label: str, is_finding: bool) -> None:
        self.label = label
        self.is_finding = is_finding


@dataclass(frozen=True)
class Task:
    case: Case
    dtype: str
    spec: Mapping[str, Any]

    @classmethod
    def of(cls, case: Case, dtype: str, **spec_options: Any) -> Task:
        """The task of ``case`` at ``dtype``; options as :meth:`Case.spec` takes them."""
        return cls(case, dtype, case.spec(dtype, **spec_options))

    @property
    def key(self) -> str:
        return f"{self.case.id}[{self.dtype}]"


@dataclass
class CaseResult:
    task: Task
    status: Status
    findings: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    message: str = ""
    note: str = ""
    ran: dict[str, int] = field(default_factory=dict)  # check -> comparisons made
    refused: dict[str, str] = field(default_factory=dict)  # check -> MLX's refusal

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.task.case.id,
            "op": self.task.case.op,
            "dtype": self.task.dtype,
            "status": self.status.label,
            "findings": self.findings,
            "unsupported": self.unsupported,
            "not_checked": self.not_checked,
            "message": self.message,
            "note": self.note,
            "ran": self.ran,
            "refused": self.refused,
            "spec": dict(self.task.spec),
        }


def unsupported(text: str) -> bool:
    return UNSUPPORTED.search(text) is not None


def from_line(task: Task, line: Mapping[str, Any]) -> CaseResult:
    """A case's result from its "done" log line."""
    if "error" in line:
        text = str(line["error"])
        return CaseResult(
            task, Status.UNSUPPORTED if unsupported(text) else Status.ERROR, message=text
        )
    data = line["result"]
    result = CaseResult(
        task,
        Status.PASS,
        list(data["findings"]),
        list(data["unsupported"]),
        list(data["not_checked"]),
        ran=dict(data.get("ran", {})),
        refused=dict(data.get("refused", {})),
    )
    if result.findings:
        result.status = Status.WRONG
    elif data["checked"] == 0:
        result.status = Status.UNSUPPORTED if result.unsupported else Status.NOT_CHECKED
    return result


def from_observation(task: Task, run: Observation) -> CaseResult:
    """A case that died without a "done" line: what the runner saw of its child."""
    lines = run.stderr.strip().splitlines()
    tail = "\n".join(lines[-12:])
    crumbs = [line for line in lines if line.startswith("gradcheck: running ")]
    during = f" while {crumbs[-1][len('gradcheck: ') :].split(' | ')[0]}" if crumbs else ""
    if run.outcome is Outcome.CRASH:
        found = _last_path(lines, run.reason)
        return CaseResult(task, Status.CRASH, [found] if found else [],
                          message=f"{run.reason}{during}\n{tail}".strip())  # fmt: skip
    if run.outcome is Outcome.TIMEOUT:
        return CaseResult(task, Status.TIMEOUT, message=f"{run.reason}{during}")
    if run.outcome is Outcome.NOT_RUN:
        return CaseResult(task, Status.NOT_RUN)
    return CaseResult(
        task, Status.ERROR, message=f"no result from the child: {run.reason}\n{tail}".strip()
    )


def _last_path(lines: Sequence[str], reason: str) -> dict[str, Any] | None:
    """The path a crashed child was in, from its last breadcrumbs, as a finding of kind crash."""
    crumbs = [line for line in lines if line.startswith("gradcheck: running ")]
    points = [line for line in lines if line.startswith("gradcheck: values ")]
    if not crumbs or not points:
        return None
    head, _, data = crumbs[-1][len("gradcheck: running ") :].partition(" | ")
    try:
        path, point = json.loads(data), json.loads(points[-1][len("gradcheck: values ") :])
    except ValueError:
        return None  # a line cut short by the crash
    what = head.split(" with (")[0]
    return {"kind": "crash", "check": path["check"], "paths": f"{what} crashed", "traced": path["traced"],
            "dtype": point["dtype"], "point": 0, "detail": reason, "inputs": "",
            "repro": {"check": path["check"], **path["repro"]}, "values": point["values"]}  # fmt: skip


def batch_entry(
    number: int, specs: Sequence[Mapping[str, Any]], log: Path, timeout: float
) -> Entry:
    """A code entry whose child runs ``specs`` one after another, logging each to ``log``."""
    code = (
        "from mgradcheck.child.gradcheck import run_batch\n"
        f"run_batch({[dict(s) for s in specs]!r}, {str(log)!r}, globals())\n"
    )
    return Entry(
        id=f"sweep-batch-{number}",
        title=f"sweep batch {number}",
        summary="gradcheck cases run by mgradcheck sweep",
        upstream=Upstream("https://github.com/ml-explore/mlx/issues"),
        bug=Bug((Outcome.FAIL,), affects=()),
        path="<sweep>",
        line=0,
        timeout=timeout * len(specs),
        code=code,
    )


class Executor:
    """Runs tasks in batches of children through :class:`~mgradcheck.run.runner.Runner`."""

    def __init__(
        self,
        command: ChildCommand,
        environment: Environment,
        jobs: int = 2,
        batch_size: int = 6,
        timeout: float = 120.0,
        progress: Progress | None = None,
    ) -> None:
        self.command = command
        self.environment = environment
        self.jobs = max(1, jobs)
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.progress = progress
        self.interrupted: Interrupted | None = None  # set when a run stopped on SIGINT/SIGTERM
        self._numbers = itertools.count()

    def run(
        self, tasks: Sequence[Task], deadline: float | None = None, batch_size: int | None = None
    ) -> list[CaseResult]:
        """Every task's result, in order; those left when ``deadline`` (monotonic) passes are "not run".

        On an interrupt, the cases that finished keep their results, the rest are
        "not run", and :attr:`interrupted` says which signal stopped it.
        """
        size = batch_size or self.batch_size
        results: dict[int, CaseResult] = {}
        queue: deque[list[int]] = deque(
            list(range(i, min(i + size, len(tasks)))) for i in range(0, len(tasks), size)
        )
        notes: dict[int, str] = {}
        scratch = Path(tempfile.mkdtemp(prefix="mgradcheck-sweep-"))
        try:
            self._waves(tasks, queue, results, notes, scratch, deadline)
        except Interrupted as exc:  # between two waves: what finished stands
            self.interrupted = exc
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return [results.get(i) or CaseResult(task, Status.NOT_RUN) for i, task in enumerate(tasks)]

    def _waves(
        self,
        tasks: Sequence[Task],
        queue: deque[list[int]],
        results: dict[int, CaseResult],
        notes: dict[int, str],
        scratch: Path,
        deadline: float | None,
    ) -> None:
        """Run batches two per job at a time until the queue, the deadline or an interrupt ends it."""
        while queue and (deadline is None or time.monotonic() < deadline):
            wave = [queue.popleft() for _ in range(min(2 * self.jobs, len(queue)))]
            logs = [scratch / f"batch-{next(self._numbers)}.jsonl" for _ in wave]
            entries = [
                batch_entry(i, [tasks[t].spec for t in batch], log, self.timeout)
                for i, (batch, log) in enumerate(zip(wave, logs, strict=True))
            ]
            # Each batch child runs its cases one after another: shown by its first case.
            labels = [
                tasks[batch[0]].key + (f" +{len(batch) - 1}" if len(batch) > 1 else "")
                for batch in wave
            ]
            shown = Labelled(
                self.progress or Silent(),
                {e.id: label for e, label in zip(entries, labels, strict=True)},
            )
            runner = Runner(self.command, self.environment, RunOptions(jobs=self.jobs), shown)
            outcome = runner.run(entries)
            self.interrupted = outcome.interrupted
            finished: list[CaseResult] = []
            for batch, log, entry_result in zip(wave, logs, outcome.results, strict=True):
                done, started = read_log(log, key="case")
                run = entry_result.runs[0]
                unstarted = []
                for pos, t in enumerate(batch):
                    if self.interrupted is not None:
                        if pos in done:
                            results[t] = from_line(tasks[t], done[pos])
                            finished.append(results[t])
                        continue
                    if pos in done:
                        results[t] = from_line(tasks[t], done[pos])
                        results[t].note = notes.get(t, "")
                        finished.append(results[t])
                    elif len(batch) == 1:
                        results[t] = from_observation(tasks[t], run)
                        results[t].note = notes.get(t, "")
                        finished.append(results[t])
                    elif pos in started:
                        notes[t] = (
                            f"its batch child died ({run.reason}) in it; this is its run alone"
                        )
                        queue.appendleft([t])  # the suspect runs alone, next
                    else:
                        unstarted.append(t)
                if unstarted:
                    queue.append(unstarted)
            if self.progress is not None:
                for result in finished:
                    if result.status.is_finding or result.status is Status.ERROR:
                        self.progress.line(f"{result.task.key}: {result.status.label}")
                self.progress.advance(len(finished))
                self.progress.status(f"{len(results)}/{len(tasks)} cases run")
            if self.interrupted is not None:
                break
