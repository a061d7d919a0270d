"""Nothing a child starts outlives its entry or holds the run; no child outlives a killed run.

Real ``python -m mgradcheck run`` processes over tests/fixtures/escapes, with and
without a cgroup per child (``MGRADCHECK_CGROUPS=0``). Each fixture writes the pid
of what it left behind into ``$MGRADCHECK_TEST_PIDS``; a hang fails by the timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mgradcheck.child import contain
from mgradcheck.corpus.loader import load
from mgradcheck.run import containment
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Silent
from mgradcheck.run.runner import Runner, RunOptions
from tests.conftest import FIXTURES, environment

ESCAPES = FIXTURES / "escapes"
MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 120.0  # generous for a loaded machine; a hang fails, no timing is asserted
linux = pytest.mark.skipif(not contain.LINUX, reason="subreaper and cgroups are Linux's")


def cgroups_usable() -> bool:
    return containment._own_cgroup() is not None


def alive(pid: int) -> bool:
    """Running (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(map(alive, pids))


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """The directory the fixtures write their pids to; whatever is left in it is killed after."""
    where = tmp_path / "pids"
    where.mkdir()
    yield where
    for file in where.iterdir():
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(file.read_text()), signal.SIGKILL)


def left(where: Path) -> dict[str, int]:
    return {f.name: int(f.read_text()) for f in where.iterdir() if f.read_text()}


def run(
    where: Path, cgroups: bool, *ids: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    env = {**os.environ, "MGRADCHECK_TEST_PIDS": str(where)}
    if not cgroups:
        env["MGRADCHECK_CGROUPS"] = "0"
    report = where.parent / "report.json"
    done = subprocess.run(
        [
            *MGRADCHECK,
            "run",
            *ids,
            "--corpus",
            str(ESCAPES),
            "-j",
            "2",
            "-q",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=env,
        check=False,
    )
    outcomes = {r["id"]: r["outcome"] for r in json.loads(report.read_text())["results"]}
    return done, outcomes


@linux
@pytest.mark.parametrize("cgroups", [False, True], ids=["subreaper", "cgroup"])
def test_what_leaves_the_session_dies_with_its_entry(pids: Path, cgroups: bool) -> None:
    if cgroups and not cgroups_usable():
        pytest.skip("no writable cgroup v2 here")
    done, outcomes = run(pids, cgroups, "leaves-the-session", "double-forks")
    assert done.returncode == 0, done.stderr
    assert outcomes == {"leaves-the-session": "pass", "double-forks": "pass"}
    survivors = left(pids)
    assert set(survivors) == {"leaves-the-session", "double-forks"}
    assert gone(list(survivors.values())), survivors


@linux
def test_a_cgroup_contains_even_what_hides_its_origin(pids: Path) -> None:
    if not cgroups_usable():
        pytest.skip("no writable cgroup v2 here")
    done, _ = run(pids, True, "hides-its-origin")
    assert done.returncode == 0, done.stderr
    assert gone(list(left(pids).values()))


def test_pipes_held_by_what_escaped_are_read_for_a_bounded_time(pids: Path) -> None:
    """Without a cgroup nothing can tell this grandchild is the entry's: the drain stops anyway."""
    done, outcomes = run(pids, False, "hides-its-origin")
    assert done.returncode == 0, done.stderr
    assert outcomes == {"hides-its-origin": "pass"}
    report = json.loads((pids.parent / "report.json").read_text())
    assert "still held its output open" in report["results"][0]["runs"][0]["stderr"]


@linux
def test_a_child_dies_with_a_run_killed_by_sigkill(pids: Path) -> None:
    run = subprocess.Popen(
        [*MGRADCHECK, "run", "outlives-its-parent", "--corpus", str(ESCAPES), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # No cgroup: any later mgradcheck empties a killed run's cgroups, which would hide a
        # child that does not die with its run by itself.
        env={**os.environ, "MGRADCHECK_TEST_PIDS": str(pids), "MGRADCHECK_CGROUPS": "0"},
    )
    try:
        deadline = time.monotonic() + WAIT
        while "outlives-its-parent" not in left(pids):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        child = left(pids)["outlives-its-parent"]
        run.send_signal(signal.SIGKILL)  # the run alone, as the OOM killer or a CI timeout would
        run.wait()
        assert gone([child])
    finally:
        run.kill()
        run.wait()


@linux
def test_the_subreaper_reaps_only_what_is_its_own(
    pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subprocess of the same process that no child started keeps its exit status for its owner."""
    monkeypatch.setenv("MGRADCHECK_TEST_PIDS", str(pids))
    unrelated = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(7)"])
    entries = load([ESCAPES / "leaves-the-session.yaml", ESCAPES / "double-forks.yaml"])
    runner = Runner(ChildCommand(sys.executable), environment(), RunOptions(jobs=2), Silent())
    results = runner.run(entries).results
    assert [r.outcome.label for r in results] == ["pass", "pass"]
    assert unrelated.wait(WAIT) == 7
    assert gone(list(left(pids).values()))
