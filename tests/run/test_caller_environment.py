"""What the caller's environment may not change: the text encoding a child's output is read
in, and what running out of descriptors or processes means (the environment's failure, exit
3, the run stopped with what finished reported; never an entry's verdict).

Each test is a real ``python -m mgradcheck`` over entries written here (no MLX needed in
their code), as a user would run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mgradcheck.run import resources
from mgradcheck.run.resources import Exhausted
from tests.conftest import write_entry

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 120.0


def entry(id_: str, bug: str, code: str) -> str:
    body = "".join(f"  {line}\n" for line in code.strip().splitlines())
    return (
        f"id: {id_}\ntitle: A test entry\nsummary: Written by the test.\n"
        f'upstream: {{report: "https://example.invalid/{id_}"}}\n'
        f"bug: {bug}\ntimeout: 30\ncode: |\n{body}"
    )


def mgradcheck(
    where: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        cwd=where,
        env={**os.environ, **(env or {})},
        timeout=WAIT,
        check=False,
    )


def report(path: Path) -> dict[str, Any]:
    return {r["id"]: r for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


# Open bugs whose signature is a non-ASCII text: on stderr before a crash, in an exception's
# message (as MLX's own errors may hold), and one printed on stdout by an entry that passes.
NON_ASCII = {
    "crashes": (
        '{outcome: crash, match: "gradient ∞ différent"}',
        'import os, sys\nprint("gradient ∞ différent", file=sys.stderr, flush=True)\nos.abort()',
    ),
    "raises": (
        '{outcome: error, match: "shapes 2 ≠ 3"}',
        'raise ValueError("[grad] shapes 2 ≠ 3")',
    ),
    "prints": (
        '{outcome: fail, fixed_in: "0.1.0"}',
        'print("max |Δ| = 0 ✓")\nassert 1 + 1 == 2',
    ),
}
CALLERS = {
    "C locale, latin-1": {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "latin-1"},
    "C locale, ascii": {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"},
    "ascii, strict errors": {"PYTHONIOENCODING": "ascii:strict", "PYTHONUTF8": "0"},
}


@pytest.mark.parametrize("caller", CALLERS)
def test_the_callers_encoding_changes_no_verdict(caller: str, tmp_path: Path) -> None:
    for id_, (bug, code) in NON_ASCII.items():
        write_entry(tmp_path, id_, entry(id_, bug, code))
    done = mgradcheck(tmp_path, "run", "--corpus", ".", "--json", "r.json", env=CALLERS[caller])
    found = {
        id_: (r["runs"][0]["outcome"], r["verdict"])
        for id_, r in report(tmp_path / "r.json").items()
    }
    assert found == {
        "crashes": ("crash", "as expected"),
        "raises": ("error", "as expected"),
        "prints": ("pass", "as expected"),
    }, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gradient ∞ différent" in report(tmp_path / "r.json")["crashes"]["runs"][0]["stderr"]


SUITE = """\
import unittest


class Reports(unittest.TestCase):
    def test_prints_its_residual(self):
        print("max |Δ| = 0 ✓")
        with open("note.txt", "w") as f:  # the locale's encoding, unless told
            f.write("∞")
"""


@pytest.mark.parametrize("caller", CALLERS)
def test_the_callers_encoding_changes_no_suite_test(caller: str, tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_prints.py").write_text(SUITE, encoding="utf-8")
    done = mgradcheck(tmp_path, "tests", "suite", "--json", "r.json", env=CALLERS[caller])
    outcomes = [r["runs"][0]["outcome"] for r in report(tmp_path / "r.json").values()]
    assert (done.returncode, outcomes) == (0, ["pass"]), done.stdout + done.stderr


def three_entries(where: Path, first: str) -> None:
    """``first``, a regression that takes the runner's resources away as it ends, then two
    entries that pass, run in that order (-j 1)."""
    body = first + '\nassert 1 + 1 == 3, "the fixed bug is back"'
    write_entry(where, "a-back", entry("a-back", '{outcome: fail, fixed_in: "0.1.0"}', body))
    for id_ in ("b-later", "c-later"):
        write_entry(where, id_, entry(id_, '{outcome: fail, fixed_in: "0.1.0"}', "assert True"))


def assert_stopped_with_what_finished(
    done: subprocess.CompletedProcess[str], ran_out: str, where: Path
) -> None:
    assert done.returncode == 3, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith(f"mgradcheck: error: out of {ran_out}"), (
        done.stderr
    )
    assert "Traceback" not in done.stderr and "HarnessError" not in done.stdout + done.stderr
    found = report(where / "r.json")
    assert found["a-back"]["verdict"] == "REGRESSED", found  # what finished is kept
    assert all(r["verdict"] != "UNEXPECTED" for r in found.values()), found


# The parent's descriptor limit lowered, as the entry ends, to just above the two files of
# its own spec and result: the next child gets those two and no pipe.
TAKES_DESCRIPTORS = """
import os, subprocess
parent, here = os.getppid(), os.getcwd()
held = f"/proc/{parent}/fd"
spec = min(int(fd) for fd in os.listdir(held) if os.readlink(f"{held}/{fd}").startswith(here))
subprocess.run(["prlimit", f"--pid={parent}", f"--nofile={spec + 2}"], check=True)
"""


@pytest.mark.skipif(
    not (sys.platform == "linux" and shutil.which("prlimit")), reason="needs prlimit and /proc"
)
def test_running_out_of_descriptors_stops_the_run_and_keeps_what_finished(tmp_path: Path) -> None:
    three_entries(tmp_path, TAKES_DESCRIPTORS)
    done = mgradcheck(tmp_path, "run", "-j", "1", "--corpus", ".", "--json", "r.json")
    assert_stopped_with_what_finished(done, "file descriptors", tmp_path)
    assert "ulimit -n" in done.stderr


def _pids_cgroup() -> Path | None:
    """A pids cgroup of this test's own (cgroup v1's controller, as root), or None."""
    root = Path("/sys/fs/cgroup/pids")
    group = root / f"mgradcheck-test-{os.getpid()}"
    try:
        group.mkdir(exist_ok=True)
    except OSError:
        return None
    return group if (group / "pids.max").exists() else None


# The run's pids.max lowered, as the entry ends, to what its runner holds without this entry
# (a second past the run's start, so that its report is written at once, by no timer thread):
# the next entry's fork() fails.
TAKES_PROCESSES = """
import os, time
time.sleep(1.1)
group = os.environ["PIDS_CGROUP"]
with open(f"{group}/pids.current") as f:
    current = int(f.read())
mine = len(os.listdir("/proc/self/task"))
with open(f"{group}/pids.max", "w") as f:
    f.write(str(current - mine))
"""


def test_running_out_of_processes_stops_the_run_and_keeps_what_finished(tmp_path: Path) -> None:
    group = _pids_cgroup()
    if group is None:
        pytest.skip("needs a pids cgroup of its own (cgroup v1, root)")
    three_entries(tmp_path, TAKES_PROCESSES)
    joins = f'echo $$ > "{group}/cgroup.procs" && exec "$@"'
    try:
        done = subprocess.run(
            ["sh", "-c", joins, "sh", *MGRADCHECK, "run", "-j", "1", "--corpus", ".", "--json", "r.json"],
            capture_output=True, text=True, cwd=tmp_path, timeout=WAIT, check=False,
            env={**os.environ, "PIDS_CGROUP": str(group), "MGRADCHECK_CGROUPS": "0"},
        )  # fmt: skip
    finally:
        group.rmdir()
    assert_stopped_with_what_finished(done, "processes", tmp_path)
    assert "cannot start a child" in done.stderr and "pids.max" in done.stderr


def test_a_thread_that_cannot_start_is_the_machine_running_out_of_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runner's pool starts its threads as children are started; one that cannot start
    stops the run as a child that cannot (exit 3, the limit named), never as a bug of ours."""

    def cannot(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", cannot)
    with (
        ThreadPoolExecutor(1) as pool,
        pytest.raises(Exhausted, match=r"cannot start a thread .*pids\.max"),
    ):
        resources.submit(pool, lambda: None)
