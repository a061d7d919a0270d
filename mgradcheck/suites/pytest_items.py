"""A suite's pytest-style tests as pytest collects them: one test per parameter set.

Read from the source, a ``@pytest.mark.parametrize`` test is one test however
many parameter sets it has (PyTensor's tests/link/mlx: 73 tests where pytest
collects 108), and one failing set hides the others. So pytest itself is asked,
in a child of the interpreter the tests run under (as pytest-xdist's workers
collect before they run), which items the files of pytest-style tests hold
(:mod:`mgradcheck.child.pytest_items`), once per root. Each test read from the
source becomes the items pytest made of it, with pytest's node ids
(``test_x.py::test_f[float32-axis0]``), each run and stored as a test of its
own; one that pytest does not collect (its own configuration says so) is left
out, as pytest leaves it out. unittest-style tests stay as read: the source
says exactly what unittest runs. A file that pytest fails to collect (its
module raises on import) keeps its tests as read, so that each reports the
error when run; where pytest cannot answer at all (it is not installed there,
or its child crashed or timed out) the tests stay as read, and one line says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.paths import run_scratch
from mgradcheck.run.child_log import LOG_BYTES, ChildLog
from mgradcheck.run.child_process import ChildCommand, run_child
from mgradcheck.suites.collect import Expand, SuiteTest
from mgradcheck.suites.source import shown
from mgradcheck.wording import count

AS_READ = "pytest-style tests collected from their source, a parametrized test as one test"


@dataclass(frozen=True)
class Collected:
    """What pytest collected under one root: each function's items, and the files it could not."""

    items: dict[str, list[str]]  # "test_x.py::test_f" -> ["test_x.py::test_f[a]", ...]
    failed: frozenset[str]  # "test_x.py"


class Unanswered(Exception):
    """pytest gave no answer; the message says why."""


def _events(data: bytes) -> list[dict[str, Any]]:
    """The log's lines; a line cut short by the child's death is not one."""
    events = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def collect_root(
    command: ChildCommand, root: Path, files: Sequence[str], timeout: float
) -> Collected:
    """The items pytest collects from ``files`` (relative to ``root``), in a child of ``command``'s
    interpreter; :class:`Unanswered` when it cannot say."""
    spec = {"root": str(root), "cwd": os.getcwd(), "files": list(files)}
    code = (
        "from mgradcheck.child.pytest_items import collect_items\n"
        f"collect_items({{**{spec!r}, 'log': __mgradcheck_log__}})\n"
    )
    log = ChildLog()
    with run_scratch() as scratch:
        run, _ = run_child(
            command, {"id": "collect", "path": "<collect>", "code": code}, scratch / "collect",
            timeout, log=log,
        )  # fmt: skip
    events = _events(log.data)
    kinds = {str(e.get("event")) for e in events}
    if "no-pytest" in kinds:
        raise Unanswered(f"pytest is not importable by {shown(command.python)}")
    if len(log.data) > LOG_BYTES:
        raise Unanswered(f"pytest collects more items under {shown(root)} than a log holds")
    if "end" not in kinds:
        reason = f"{run.outcome.label}: {run.reason}" if run.reason else run.outcome.label
        raise Unanswered(f"pytest's collection under {shown(root)} ended {shown(reason)}")
    items: dict[str, list[str]] = {}
    for event in events:
        if event.get("event") == "item":
            items.setdefault(str(event["base"]), []).append(str(event["nodeid"]))
    failed = frozenset(str(e["nodeid"]) for e in events if e.get("event") == "error")
    return Collected(items, failed)


def expand(
    tests: Sequence[SuiteTest], collected: dict[Path, Collected]
) -> tuple[list[SuiteTest], list[SuiteTest]]:
    """The tests with each pytest-style one made the items pytest collected of it; and those
    of which it collected none."""
    found: list[SuiteTest] = []
    left: list[SuiteTest] = []
    for test in tests:
        answer = collected.get(test.root)
        if test.kind != "pytest" or answer is None or test.node_id.split("::")[0] in answer.failed:
            found.append(test)
            continue
        node_ids = answer.items.get(test.node_id, [])
        if not node_ids:
            left.append(test)
        for node_id in node_ids:
            params = node_id[len(test.node_id) :]
            found.append(test.with_params(params) if params else test)
    return found, left


def in_target(python: str, timeout: float, tell: Callable[[str], None]) -> Expand:
    """How :func:`~mgradcheck.suites.collect.collect` asks ``python``'s pytest for the items
    (``timeout`` seconds per file: each module's import costs what one test may)."""
    command = ChildCommand(python)

    def items(tests: list[SuiteTest]) -> list[SuiteTest]:
        wanted = [t for t in tests if t.kind == "pytest"]
        collected: dict[Path, Collected] = {}
        for root in sorted({t.root for t in wanted}):
            files = sorted({t.file.relative_to(root).as_posix() for t in wanted if t.root == root})
            try:
                collected[root] = collect_root(command, root, files, timeout * len(files))
            except Unanswered as exc:
                tell(f"note: {exc}: {AS_READ}")
                return tests
        found, left = expand(tests, collected)
        if left:
            more = ", ..." if len(left) > 1 else ""
            tell(f"note: pytest collects nothing of {count(len(left), 'test')} read from the "
                 f"source ({shown(left[0].id)}{more}): left out, as pytest leaves it")  # fmt: skip
        return found

    return items


__all__ = ["AS_READ", "Collected", "Unanswered", "collect_root", "expand", "in_target"]
