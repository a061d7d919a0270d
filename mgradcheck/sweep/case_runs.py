"""The sweep's adapter to the batch engine: gradcheck tasks in, case results out.

:class:`~mgradcheck.run.batches.BatchRunner` runs the tasks several per child
and re-runs a dead child's culprit alone; this module says what one task is (a
gradcheck spec that ``run_batch`` runs in the child, logging it) and what its
end means: its "done" line's result, or, for a case that died alone, what the
runner saw of its child. A case that crashes alone is a finding; one that
crashed only after others in its batch is noted as such.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.child.gradcheck_spec import UNSUPPORTED
from mgradcheck.errors import Interrupted
from mgradcheck.outcomes import Outcome
from mgradcheck.run.batches import BatchRunner, Finished
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Progress
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.sweep.catalogue import Case


class Status(enum.Enum):
    """What one case at one dtype did, in report order.

    Where a status is what the child did (crash, timeout, error, pass, not run), it is
    that :class:`~mgradcheck.outcomes.Outcome`, label and all (:meth:`of`). The rest are
    gradcheck's own verdicts on a case that ran to its end, which no outcome says: a
    wrong answer (two ways of computing one derivative disagree) is the finding the
    sweep looks for, where an outcome's "fail" is a corpus entry's oracle failing; an
    unsupported case (MLX implements no derivative path checked) and one not checked
    (every point drawn was a kink or a tie) are neither a skip nor a pass. Nor is a
    failure what it is to a corpus run: an error is the catalogue's or the harness's
    problem and not a finding, and "not run" is the budget's.
    """

    WRONG = ("wrong answer", True)
    CRASH = (Outcome.CRASH, True)
    TIMEOUT = (Outcome.TIMEOUT, True)
    ERROR = (Outcome.ERROR, False)  # the case itself raised: a catalogue or harness problem
    UNSUPPORTED = ("unsupported", False)
    NOT_CHECKED = ("not checked", False)
    PASS = (Outcome.PASS, False)
    NOT_RUN = (Outcome.NOT_RUN, False)

    def __init__(self, what: Outcome | str, is_finding: bool) -> None:
        self.outcome = what if isinstance(what, Outcome) else None
        self.label = what.label if isinstance(what, Outcome) else what
        self.is_finding = is_finding

    @classmethod
    def of(cls, outcome: Outcome) -> Status:
        """The status of a case whose child did ``outcome`` (fail and skip, which a batch child
        never reports, are errors)."""
        return next((status for status in cls if status.outcome is outcome), cls.ERROR)


# Cases a child runs (64 cost 1.31x the same runs in one process; bench/README.md).
BATCH_SIZE = 96


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
    seconds: float | None = None  # what it took (see from_finished); None: it did not run

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
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "spec": dict(self.task.spec),
        }


def unsupported(text: str) -> bool:
    return re.search(UNSUPPORTED, text) is not None


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
    status = Status.of(run.outcome)
    if status in (Status.CRASH, Status.TIMEOUT):  # the path it died or hung in, as a finding
        found = _last_path(lines, run.reason, "crash" if status is Status.CRASH else "timeout")
        message = f"{run.reason}{during}" + (f"\n{tail}" if status is Status.CRASH else "")
        return CaseResult(task, status, [found] if found else [], message=message.strip())
    if status is Status.NOT_RUN:
        return CaseResult(task, status)
    return CaseResult(
        task, Status.ERROR, message=f"no result from the child: {run.reason}\n{tail}".strip()
    )


def from_finished(task: Task, item: Finished) -> CaseResult:
    """A case's result: its "done" line when its child wrote one, else its child's end.

    Its time is its "done" line's with its part of its child's start-up (so that the times
    of a sweep's cases add up to what its children took), else, when it ran alone, its
    child's.
    """
    line = item.line
    result = from_line(task, line) if line is not None else from_observation(task, item.run)
    result.note = item.note
    if line is not None and isinstance(line.get("duration"), (int, float)):
        result.seconds = float(line["duration"]) + item.share
    elif item.alone and result.status is not Status.NOT_RUN:
        result.seconds = item.run.duration
    return result


def _last_path(lines: Sequence[str], reason: str, kind: str) -> dict[str, Any] | None:
    """The path a crashed or hung child was in, from its last breadcrumbs, as a finding of
    ``kind`` (crash or timeout)."""
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
    how = "crashed" if kind == "crash" else "hung"
    return {"kind": kind, "check": path["check"], "paths": f"{what} {how}", "traced": path["traced"],
            "dtype": point["dtype"], "point": 0, "detail": reason, "inputs": "",
            "repro": {"check": path["check"], **path["repro"]}, "values": point["values"]}  # fmt: skip


def batch_code(specs: Sequence[Mapping[str, Any]]) -> str:
    """The code of a child that runs gradcheck ``specs`` in turn, logging each."""
    return (
        "from mgradcheck.child.gradcheck import run_batch\n"
        f"run_batch({[dict(s) for s in specs]!r}, __mgradcheck_log__, globals())\n"
    )


class Executor:
    """Runs tasks several per child (see :class:`~mgradcheck.run.batches.BatchRunner`)."""

    def __init__(
        self,
        command: ChildCommand,
        environment: Environment,
        jobs: int = 2,
        batch_size: int = BATCH_SIZE,
        timeout: float = 120.0,
        progress: Progress | None = None,
    ) -> None:
        """``timeout``: one case's. ``progress`` is shown each child running, by its first case."""
        self.command = command
        self.environment = environment
        self.jobs = max(1, jobs)
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.progress = progress
        self.interrupted: Interrupted | None = None  # set when a run stopped on SIGINT/SIGTERM

    def run(
        self,
        tasks: Sequence[Task],
        deadline: float | None = None,
        batch_size: int | None = None,
        *,
        group: Sequence[str] | None = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> list[CaseResult]:
        """Every task's result, in order; those not started when ``deadline`` (monotonic)
        passes are "not run". ``group``: each task's, when tasks of different groups must not
        share a child; ``on_result`` is told of each result as it comes.

        On an interrupt, the cases that finished keep their results, the rest are
        "not run", and :attr:`interrupted` says which signal stopped it.
        """
        results: dict[int, CaseResult] = {}

        def finished(item: Finished) -> None:
            results[item.index] = result = from_finished(tasks[item.index], item)
            if on_result is not None:
                on_result(result)

        engine = BatchRunner(
            self.command,
            self.environment,
            lambda items: batch_code([tasks[i].spec for i in items]),
            self.timeout,
            self.jobs,
            batch_size or self.batch_size,
            group=group,
            name=lambda i: tasks[i].key,
            progress=self.progress,
            deadline=deadline,
        )
        self.interrupted = engine.run(len(tasks), finished)
        return [results.get(i) or CaseResult(task, Status.NOT_RUN) for i, task in enumerate(tasks)]
