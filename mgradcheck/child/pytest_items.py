"""Ask pytest, in this (fresh) interpreter, which items a suite's pytest-style files hold.

Called by the code a collecting child runs (see :mod:`mgradcheck.suites.pytest_items`):
``collect_items(spec)`` runs ``pytest --collect-only`` on ``spec["files"]`` in the
session the tests later run in (:func:`mgradcheck.child.suite.pytest_session`:
the same rootdir, options and working directory), as pytest-xdist's workers
collect before they run, and appends one JSON line per item collected to the
parent's log: its node id (``test_x.py::test_f[float32-axis0]``) and the node id
of the function it was made from. A file that pytest failed to collect (its
module raised on import) gets an ``error`` line; the last line, ``end``, says
the collection finished. Without pytest here the only line is ``no-pytest``.

Standard library and pytest only: this runs under whatever Python and MLX the
user points mgradcheck at.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from mgradcheck.child.batch_log import BatchLog
from mgradcheck.child.suite import pytest_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Items:
    """A pytest plugin: logs each item collected, and each file that failed to collect."""

    def __init__(self, log: BatchLog) -> None:
        self.log = log

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.log.write(json.dumps({"event": "error", "nodeid": report.nodeid}))

    def pytest_collection_finish(self, session: Any) -> None:
        for item in session.items:
            # A parametrised item is named ``test_f[float32-axis0]`` after ``test_f``.
            original = getattr(item, "originalname", None) or item.name
            params = item.name[len(original) :] if item.name.startswith(original) else ""
            base = item.nodeid[: len(item.nodeid) - len(params)]
            self.log.write(json.dumps({"event": "item", "nodeid": item.nodeid, "base": base}))


def collect_items(spec: dict[str, Any]) -> None:
    """Log the items pytest collects from ``spec["files"]`` (relative to ``spec["root"]``),
    collected from ``spec["cwd"]`` as they are run from there."""
    log = BatchLog(spec["log"])
    try:
        import pytest  # noqa: F401
    except ImportError:
        log.write(json.dumps({"event": "no-pytest"}))
        return
    root = spec["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    home = os.getcwd()  # the child's own directory, where its result is written
    with contextlib.suppress(OSError):  # gone since the run began: the child's own, then
        os.chdir(spec["cwd"])
    try:
        status = pytest_session(root, [*spec["files"], "--collect-only"], [_Items(log)])
    finally:
        os.chdir(home)
    log.write(json.dumps({"event": "end", "status": status}))
