"""An environment a command is running entries in is held until it ends: no prune removes it.

Real ``python -m mgradcheck`` processes on one cache: a ``run --mlx`` whose entry
waits for the test, and ``envs prune --all`` while it waits. Readiness is a file
the entry writes, never a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 180.0

WAITING_ENTRY = """\
id: waits
title: Waits for the test, then checks the fake release
summary: Used by the tests.
upstream: {report: "https://example.invalid/waits"}
bug: {outcome: fail, fixed_in: "1.3.0"}
timeout: 300
code: |
  import os, time
  open(READY, "w").close()
  while not os.path.exists(GO):
      time.sleep(0.05)
  v = tuple(int(p) for p in mx.__version__.split(".")[:2])
  assert_true(v >= (1, 3), f"broken before 1.3 (this is {mx.__version__})")
"""


def source(wheels: Path) -> list[str]:
    return ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]


def mgradcheck_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=WAIT, check=False
    )


@pytest.fixture
def running(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """A ``run --mlx 1.3.0`` on a cache of its own, stopped in its entry until ``go`` exists."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    built = mgradcheck_run("envs", "path", "1.3.0", "-q", *source(fake_wheels))
    assert built.returncode == 0, built.stderr
    go, ready = tmp_path / "go", tmp_path / "ready"
    entry = tmp_path / "waits.yaml"
    entry.write_text(WAITING_ENTRY.replace("GO", repr(str(go))).replace("READY", repr(str(ready))))
    report = tmp_path / "report.json"
    args = ["run", "--corpus", str(entry), "--mlx", "1.3.0", "--json", str(report)]
    with (tmp_path / "stderr").open("wb") as err:
        process = subprocess.Popen(
            [*MGRADCHECK, *args, *source(fake_wheels)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + WAIT
        while not ready.exists():
            assert process.poll() is None, (tmp_path / "stderr").read_text()
            assert time.monotonic() < deadline, "the entry never started"
            time.sleep(0.05)
        yield process, Path(built.stdout.strip()).parent, go
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_a_prune_leaves_the_environment_of_a_run_and_says_so(
    running: tuple[subprocess.Popen[bytes], Path, Path], tmp_path: Path
) -> None:
    process, env, go = running
    pruned = mgradcheck_run("envs", "prune", "--all")
    assert pruned.returncode == 0, pruned.stderr
    assert (env / "venv").is_dir(), "pruned while a run was using it"
    assert f"left {env} (1.3.0): in use" in pruned.stdout
    assert "removed 0 environments" in pruned.stdout

    go.touch()
    assert process.wait(WAIT) == 0, (tmp_path / "stderr").read_text()
    (result,) = json.loads((tmp_path / "report.json").read_text())["results"]
    assert result["verdict"] == "as expected"

    after = mgradcheck_run("envs", "prune", "--all")  # the run is over: now it goes
    assert after.returncode == 0 and "removed 1 environment" in after.stdout, after.stdout
    assert not env.exists()
