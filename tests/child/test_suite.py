"""The child side of a suite's tests: a start and a done line per test, statuses as unittest has them.

Run in this process, on the fixture tests that neither crash nor hang (those are the
runner's, in tests/suites/test_suite_runs.py); pytest-style tests here would start a pytest
session inside this one, so they run there too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mgradcheck.child.suite import run_tests
from mgradcheck.suites.collect import collect
from tests.conftest import SUITES

BASIC = SUITES / "basic"


@pytest.fixture
def clean_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fixture suite's modules imported here are forgotten afterwards, and sys.path restored."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("SUITE_HELPERS_IMPORTED", raising=False)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.usefixtures("clean_imports")
def test_each_test_is_logged_before_and_after_with_its_status(tmp_path: Path) -> None:
    names = ("test_passes", "test_fails", "test_skipped", "test_expected_failure", "test_subtests")
    tests = [t for t in collect([BASIC / "test_behaviours.py"]) if t.name in names]
    tests += collect([BASIC / "test_broken_import.py"])
    log = tmp_path / "log.jsonl"
    run_tests({"root": str(BASIC), "log": str(log), "tests": [t.child_spec() for t in tests]})
    events = lines(log)
    assert [(e["event"], e["item"]) for e in events] == [
        (event, item) for item in range(len(tests)) for event in ("start", "done")
    ]
    done = [e for e in events if e["event"] == "done"]
    assert [e["status"] for e in done] == ["pass", "fail", "skip", "skip", "fail", "error"]
    assert done[1]["exc_type"] == "AssertionError" and "4 != 5" in done[1]["message"]
    assert "test_behaviours.py" in done[1]["traceback"]
    assert done[2]["message"] == "not on this machine"
    assert done[4]["message"].startswith("(i=2): ")
    assert done[5]["exc_type"] == "ModuleNotFoundError"
    assert all(e["duration"] >= 0 for e in done)
    assert str(BASIC) == sys.path[0]  # the suite's root first, as unittest puts it
