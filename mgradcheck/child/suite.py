"""Run tests of an upstream suite in this (fresh) interpreter, one JSON line per event.

Called by a generated entry's code (see :mod:`mgradcheck.suites.suite_runs`):
``run_tests(spec)`` puts the suite's root first on ``sys.path``, as unittest
and pytest do, so that helper modules beside the tests (MLX's ``mlx_tests``)
import as they do there; then, for each test, it appends a ``start`` line to
the log the parent names, runs the test, and appends a ``done`` line with its
status, both flushed at once: when a test kills the child, the parent knows
which one did (see :mod:`mgradcheck.run.batches`). A test's module is
imported after its ``start`` line, so a module that crashes on import is
charged to the first of its tests. The tests run in the directory mgradcheck
was run from, as ``python -m pytest`` run there runs them; the log is opened
again for each line, and the descriptors held before the tests are put
back after them, so a test that closes every descriptor harms nothing; every
text a ``done`` line holds is capped.

unittest tests run through unittest's own loader, suite and result, so
setUp/tearDown, class and module fixtures, skip decorators, ``skipTest``,
``expectedFailure`` and ``subTest`` behave as they do under unittest.
Functions and methods of plain ``Test*`` classes (pytest's style) run in one
pytest session when pytest is importable here, which supplies fixtures,
parametrisation and marks: given their files, of which only the batch's items
run, so that a file that fails to import errors its own tests, with its error,
and no other; without pytest, a test that takes no arguments is called
directly (``pytest.skip`` is still recognised by its exception).

Statuses: ``pass``; ``fail`` (an AssertionError: unittest's failure);
``error`` (any other exception, or a failed fixture); ``skip`` (a skip, and an
expected failure, which pytest's JUnit writes as skipped too). An unexpected
success is a ``fail``; a failing subTest fails its test, naming the subtest.

Standard library only: this runs under whatever Python and MLX the user
points mgradcheck at.
"""

from __future__ import annotations

import json
import os
import sys
import time

from mgradcheck.child.batch_log import BatchLog
from mgradcheck.child.bootstrap import _cap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAIL = 4000


def _described(err: Any) -> dict[str, Any]:
    import traceback

    kind, value, tb = err
    text = "".join(traceback.format_exception(kind, value, tb))
    return {"exc_type": kind.__name__, "message": str(value)[:TAIL], "traceback": text[-TAIL:]}


def _failed(err: Any) -> dict[str, Any]:
    """An exception as a status: an AssertionError fails the test, anything else errors."""
    status = "fail" if issubclass(err[0], AssertionError) else "error"
    return {"status": status, **_described(err)}


class _Log(BatchLog):
    """The parent's log: a line before and after each test, each written whole at once
    (see :mod:`mgradcheck.child.batch_log`: a test that closes every descriptor harms it not)."""

    def _write(self, line: dict[str, Any]) -> None:
        self.write(json.dumps(line, default=repr))

    def start(self, item: int) -> float:
        self._write({"event": "start", "item": item})
        return time.monotonic()

    def done(self, item: int, started: float, status: dict[str, Any]) -> None:
        # Every text capped: a skip reason or a subTest's parameters may be megabytes, and
        # the parent reads a log of at most 16 MiB (mgradcheck.run.batches).
        capped = {k: _cap(v) if isinstance(v, str) else v for k, v in status.items()}
        self._write(
            {"event": "done", "item": item, "duration": time.monotonic() - started, **capped}
        )


def _result_class() -> Any:
    import unittest

    class Result(unittest.TestResult):
        """Keeps the most telling status of the one test it is given."""

        def __init__(self) -> None:
            super().__init__()
            self.status: dict[str, Any] | None = None

        def _keep(self, status: dict[str, Any]) -> None:
            if self.status is None or self.status["status"] in ("pass", "skip"):
                self.status = status

        def addSuccess(self, test: Any) -> None:
            if self.status is None:
                self.status = {"status": "pass"}

        def addFailure(self, test: Any, err: Any) -> None:
            self._keep({"status": "fail", **_described(err)})

        def addError(self, test: Any, err: Any) -> None:
            status = _failed(err)
            if not hasattr(test, "_testMethodName"):  # a class or module fixture that failed
                status["status"] = "error"
                status["message"] = f"{test}: {status['message']}"
            self._keep(status)

        def addSkip(self, test: Any, reason: str) -> None:
            if self.status is None:
                self.status = {"status": "skip", "message": reason}

        def addExpectedFailure(self, test: Any, err: Any) -> None:
            status = {"status": "skip", **_described(err)}
            status["message"] = f"expected failure: {status['exc_type']}: {status['message']}"
            self._keep(status)

        def addUnexpectedSuccess(self, test: Any) -> None:
            message = "unexpected success: marked expectedFailure, but it passed"
            self._keep({"status": "fail", "message": message})

        def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
            if err is not None:
                status = _failed(err)
                status["message"] = f"{subtest._subDescription()}: {status['message']}"
                self._keep(status)

    return Result


def _run_unittest(module: Any, test: dict[str, Any]) -> dict[str, Any]:
    import unittest

    name = f"{test['cls']}.{test['name']}"
    suite = unittest.TestLoader().loadTestsFromName(name, module)
    result = _result_class()()
    suite.run(result)
    return result.status or {"status": "error", "message": "unittest ran nothing for this test"}


def _call(module: Any, test: dict[str, Any]) -> dict[str, Any]:
    """A pytest-style test without pytest: called with no arguments, if it takes none."""
    import inspect

    owner = getattr(module, test["cls"])() if test["cls"] else module
    func = getattr(owner, test["name"])
    wanted = list(inspect.signature(func).parameters)
    if wanted:
        return {
            "status": "error",
            "exc_type": "FixtureError",
            "message": f"takes {', '.join(wanted)} (pytest fixtures or parameters), "
            "and pytest is not importable in this environment",
        }
    try:
        func()
    except Exception:  # noqa: BLE001 - whatever the test raises is its status
        return _failed(sys.exc_info())
    except BaseException as exc:
        if type(exc).__name__ == "Skipped" and type(exc).__module__.startswith("_pytest"):
            return {"status": "skip", "message": str(exc)}
        if isinstance(exc, KeyboardInterrupt):
            raise
        return _failed(sys.exc_info())
    return {"status": "pass"}


def _has_pytest() -> bool:
    try:
        import pytest  # noqa: F401
    except ImportError:
        return False
    return True


class _Recorder:
    """A pytest plugin: logs each test as it runs (a test read from its source: all its
    parametrised items together)."""

    def __init__(self, log: _Log, positions: dict[str, int]) -> None:
        self.log = log
        self.positions = positions
        self.current: int | None = None
        self.started = 0.0
        self.status: dict[str, Any] = {}
        self.done: set[int] = set()
        self.broken: dict[str, str] = {}  # a file pytest could not collect: why

    def position(self, nodeid: str) -> int | None:
        # One parameter set of a test collected by pytest is a test of its own; a test read
        # from the source (pytest was not there to collect it) holds all of them.
        return self.positions.get(nodeid, self.positions.get(nodeid.split("[", 1)[0]))

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.broken[report.nodeid] = str(report.longrepr)

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        """Only the batch's tests run: its files are what pytest is given, so that a file that
        fails to import ends its own tests, not the session (as a node id not found would)."""
        dropped = [item for item in items if self.position(item.nodeid) is None]
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if self.position(item.nodeid) is not None]

    def finish(self) -> None:
        if self.current is not None:
            status = self.status or {"status": "error", "message": "pytest ran nothing for it"}
            self.log.done(self.current, self.started, status)
            self.done.add(self.current)
            self.current = None

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        position = self.position(nodeid)
        if position is not None and position != self.current:
            self.finish()
            self.current, self.status = position, {}
            self.started = self.log.start(position)

    def pytest_runtest_logreport(self, report: Any) -> None:
        if self.current is None:
            return
        if report.failed:
            if self.status.get("status") not in ("fail", "error"):
                text = str(report.longrepr)
                crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", None)
                lines = text.strip().splitlines()
                message = crash or (lines[-1] if lines else "")
                if "[" in report.nodeid and report.nodeid not in self.positions:  # which ones
                    message = f"[{report.nodeid.split('[', 1)[1]}: {message}"
                failed = report.when == "call" and "AssertionError" in text
                self.status = {
                    "status": "fail" if failed else "error",
                    "message": message[:TAIL],
                    "traceback": text[-TAIL:],
                }
        elif report.skipped:
            if not self.status:
                reason = getattr(report, "wasxfail", None)
                if reason is not None:
                    message = f"expected failure: {reason}".rstrip(": ")
                elif isinstance(report.longrepr, tuple):
                    message = str(report.longrepr[2])
                else:
                    message = str(report.longrepr)
                if message.startswith("Skipped: "):
                    message = message[len("Skipped: ") :]
                self.status = {"status": "skip", "message": message}
        elif report.when == "call" and not self.status:
            self.status = {"status": "pass"}


class _Where:
    """A pytest plugin that moves into the run's directory at pytest's first hook. By then pytest
    has taken the root as where its arguments resolve (node ids relative to it: pytest reads a
    '[' anywhere in an argument as a test's parameters, so an absolute path under ``ci[2]/``
    is not found), and has yet to import a conftest.py or a test module."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    def pytest_cmdline_parse(self, pluginmanager: Any, args: Any) -> None:
        os.chdir(self.cwd)


def pytest_session(root: str, args: list[str], plugins: list[Any]) -> int:
    """``pytest.main`` on ``args`` (node ids relative to ``root``) as the tests run, from this
    directory: the same session whether it collects the tests or runs them."""
    import pytest

    # The root is pytest's rootdir (so its node ids are ours) and where conftest.py files start.
    # mgradcheck's own pytest plugin has no business in a test's session, and pytest would
    # warn (an error under filterwarnings=error) that this child imported mgradcheck first.
    ours = "ignore:Module already imported so cannot be rewritten; mgradcheck"
    args = [*args, "-p", "no:cacheprovider", "-p", "no:mgradcheck", "-W", ours, "-q"]
    args += ["-o", "addopts=", "--rootdir", root, "--confcutdir", root]
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return int(pytest.main(args, plugins=[*plugins, _Where(cwd)]))
    finally:
        os.chdir(cwd)


def _run_pytest(root: str, tests: list[tuple[int, dict[str, Any]]], log: _Log) -> None:
    """The pytest-style tests of a batch in one pytest session."""
    positions = {test["id"]: position for position, test in tests}
    recorder = _Recorder(log, positions)
    files = sorted({test["id"].split("::", 1)[0] for _, test in tests})
    code = pytest_session(root, [*files, "--continue-on-collection-errors"], [recorder])
    recorder.finish()
    for position, test in tests:
        if position not in recorder.done:
            started = log.start(position)
            why = recorder.broken.get(test["id"].split("::", 1)[0])
            if why is None:
                message = f"pytest did not run it (pytest's exit status {code})"
                log.done(position, started, {"status": "error", "message": message})
                continue
            last = why.strip().splitlines()[-1] if why.strip() else ""
            message = f"pytest could not collect its file: {last.removeprefix('E').strip()}"
            status = {"exc_type": "CollectError", "message": message, "traceback": why[-TAIL:]}
            log.done(position, started, {"status": "error", **status})


class _Kept:
    """The descriptors this interpreter held before the tests (the result the bootstrap writes
    once they are done, above all), put back afterwards as they were: a test may close every
    descriptor it did not open (``os.closerange(3, 256)``). Each is copied near the top of the
    descriptor table, out of the way of such a test, and restored if it was closed or reused."""

    def __init__(self) -> None:
        self.saved: dict[int, tuple[int, int, int, bool]] = {}
        try:
            import fcntl
            import resource

            listed = [int(name) for name in os.listdir("/dev/fd") if name.isdigit()]
            soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        except (ImportError, OSError, ValueError):
            return
        floor = max(3, min(soft, 1 << 16) - 64)
        for fd in listed:
            if fd < 3 or fd >= floor:
                continue
            try:
                st = os.fstat(fd)  # the listing's own descriptor is closed by now
                copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
            except OSError:
                continue
            self.saved[fd] = (copy, st.st_dev, st.st_ino, os.get_inheritable(fd))

    def restore(self) -> None:
        for fd, (copy, dev, ino, inheritable) in self.saved.items():
            try:
                st = os.fstat(fd)
                kept = (st.st_dev, st.st_ino) == (dev, ino)
            except OSError:
                kept = False
            try:
                if not kept:
                    os.dup2(copy, fd, inheritable=inheritable)
                os.close(copy)
            except OSError:
                pass  # the test closed the copy too: nothing is left to restore it from


def run_tests(spec: dict[str, Any]) -> None:
    """Run ``spec["tests"]`` in order, logging each by its position to ``spec["log"]``.

    The tests run in ``spec["cwd"]`` (the directory mgradcheck was run from), where
    ``python -m pytest PATH`` and ``python -m unittest`` run them when run from there:
    a test that opens a data file by a relative path finds it as it does under them.
    """
    import contextlib
    import importlib

    root = spec["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    log = _Log(spec["log"])
    home = os.getcwd()  # the child's own directory, where its result is written
    cwd = spec.get("cwd") or home
    later: list[tuple[int, dict[str, Any]]] = []
    kept = _Kept()
    try:
        with contextlib.suppress(OSError):  # gone since the run began: the child's own, then
            os.chdir(cwd)
        for position, test in enumerate(spec["tests"]):
            if test["kind"] != "unittest" and _has_pytest():
                later.append((position, test))
                continue
            started = log.start(position)
            try:
                module = importlib.import_module(test["module"])
                run = _run_unittest if test["kind"] == "unittest" else _call
                status = run(module, test)
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001 - a module that fails to import fails its tests
                status = {"status": "error", **_described(sys.exc_info())}
            log.done(position, started, status)
        if later:
            _run_pytest(root, later, log)
    finally:
        kept.restore()
        with contextlib.suppress(OSError):
            os.chdir(home)
        sys.stdout.flush()
        sys.stderr.flush()
