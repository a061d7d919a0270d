"""Runs that share a machine, a cache and a working tree never read or overwrite each other's files.

Two ``mgradcheck run`` at once on one cache (two CI jobs on one runner), a report path
that names a corpus input, the leftovers of a run killed by SIGKILL, and a cache that
cannot be written. Each is a real ``python -m mgradcheck`` process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.reports import json_report
from tests import builders
from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 180.0  # for a loaded 2-core machine; never a timing assertion

FAKE_MLX = """\
__version__ = "{version}"
float32 = "float32"

def default_device():
    return "Device(cpu, 0)"
"""


def fake_interpreter(tmp_path: Path, name: str, version: str, then: str = "") -> Path:
    """An interpreter (a shell script around this one) whose MLX is a fake of ``version``.

    ``then`` runs after the real interpreter exits and before the script does.
    """
    site = tmp_path / f"site-{name}"
    (site / "mlx").mkdir(parents=True)
    (site / "mlx" / "__init__.py").write_text("")
    (site / "mlx" / "core.py").write_text(FAKE_MLX.format(version=version))
    script = tmp_path / f"python-{name}"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={site} {sys.executable} "$@"\nstatus=$?\n{then}\nexit $status\n'
    )
    script.chmod(0o755)
    return script


def mgradcheck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env={**os.environ, **(env or {})},
    )


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert process.poll() is None, "exited before it was ready"
        assert time.monotonic() < deadline, f"no {path.name}"
        time.sleep(0.05)


def test_two_runs_at_once_each_judge_their_own_interpreter(tmp_path: Path) -> None:
    """A's child has written its result and waits; B probes and runs in full; then A goes on."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    hold = f"touch {ready}\nwhile [ ! -e {go} ]; do sleep 0.05; done"
    a = fake_interpreter(tmp_path, "a", "1.0.0", then=hold)
    b = fake_interpreter(tmp_path, "b", "2.0.0")
    corpus = ["passes", "--corpus", str(BEHAVIOURS), "-q"]
    first = subprocess.Popen(
        [*MGRADCHECK, "run", *corpus, "--python", str(a), "--json", str(tmp_path / "a.json")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(ready, first)  # A's probe child is done; its interpreter has not exited yet
        second = mgradcheck("run", *corpus, "--python", str(b), "--json", str(tmp_path / "b.json"))
        go.touch()
        assert first.wait(WAIT) == 0
    finally:
        first.kill()
    assert second.returncode == 0, second.stderr
    for name, version in (("a", "1.0.0"), ("b", "2.0.0")):
        report = json.loads((tmp_path / f"{name}.json").read_text())
        assert [e["mlx"] for e in report["environments"]] == [version], name
        assert report["results"][0]["environment"]["mlx"] == version


def test_a_killed_runs_scratch_is_removed_by_the_next_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ready, go = tmp_path / "ready", tmp_path / "go"
    # Held in the entry's child, not the probe's (whose spec lies in a directory named probe).
    hold = f'case "$*" in */probe/*) ;; *) touch {ready}; while [ ! -e {go} ]; do sleep 0.05; done;; esac'
    held = fake_interpreter(tmp_path, "held", "1.0.0", then=hold)
    env = {**os.environ, "MGRADCHECK_CACHE": str(cache)}
    killed = subprocess.Popen(
        [*MGRADCHECK, "run", "passes", "--corpus", str(BEHAVIOURS), "-q", "--python", str(held)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        wait_for(ready, killed)
        leftovers = list((cache / "runs").iterdir())
        assert leftovers  # the killed run's scratch, the running entry's spec in it
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        go.touch()  # the held interpreter is in the child's own session: let it end
    assert all(p.exists() for p in leftovers)
    again = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q"]
    done = mgradcheck(*again, env={"MGRADCHECK_CACHE": str(cache)})
    assert done.returncode == 0, done.stderr
    assert list((cache / "runs").iterdir()) == []


# Report options naming an input, as (argv, the input that must survive) in a corpus directory.
def _overwrites(corpus: Path, report: Path) -> dict[str, tuple[list[str], Path]]:
    entry = corpus / "passes.yaml"
    link = corpus.parent / "link.json"
    link.symlink_to(entry)
    beside = corpus.parent / "b.shields.json"  # where '--badge b' puts the endpoint
    beside.write_bytes(report.read_bytes())
    run = ["run", "passes", "--corpus"]
    return {
        "run --json the corpus file": ([*run, str(entry), "--json", str(entry)], entry),
        "run --json a link to it": ([*run, str(entry), "--json", str(link)], entry),
        "run --junit into the corpus directory": (
            [*run, str(corpus), "--junit", str(corpus / "passes.yaml")],
            entry,
        ),
        "run --summary a new corpus file": (
            [*run, str(corpus), "--summary", str(corpus / "sub" / "x.yml")],
            corpus / "sub" / "x.yml",
        ),
        "bisect --json": (
            ["bisect", "passes", "--corpus", str(corpus), "--json", str(entry)],
            entry,
        ),
        "matrix --markdown": (
            ["matrix", "--corpus", str(entry), "--markdown", str(entry)],
            entry,
        ),
        "report merge --json": (["report", "merge", str(report), "--json", str(report)], report),
        "badge --badge, its endpoint": (
            ["badge", str(beside), "--badge", str(corpus.parent / "b")],
            beside,
        ),
    }


def test_no_report_may_overwrite_an_input(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "passes.yaml").write_text((BEHAVIOURS / "passes.yaml").read_text())
    report = tmp_path / "report.json"
    json_report.write(builders.every_verdict(), report)
    for i, (name, (args, kept)) in enumerate(_overwrites(corpus, report).items()):
        before = kept.read_bytes() if kept.exists() else None
        if i == 0:  # one as a real process; the rest in this one, for speed
            refused = mgradcheck(*args)
            code, stderr = refused.returncode, refused.stderr
        else:
            result = CliRunner().invoke(cli, args)
            code, stderr = result.exit_code, result.output
        assert code == 2, (name, stderr)
        assert stderr.count("\n") == 1 and "which this command reads" in stderr, stderr
        assert (kept.read_bytes() if kept.exists() else None) == before, name


def test_a_killed_writers_temporary_files_are_removed_by_the_next_write(tmp_path: Path) -> None:
    import fcntl

    reports = tmp_path / "reports"
    reports.mkdir()
    # What a write killed between creating its temporary file and renaming it leaves.
    stale = [reports / ".r.json.k1ll3d_0.tmp", reports / ".r.xml.abcdefgh.tmp"]
    for path in stale:
        path.write_bytes(b"")
    live = reports / ".r.json.wr1t1ng_.tmp"  # another process is writing this one now
    live.write_bytes(b"{")
    others = [reports / ".r.json.tmp", reports / "r.json.abcdefgh.tmp", reports / "notes.tmp"]
    for path in others:
        path.write_bytes(b"not ours")
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        done = mgradcheck(
            "run", "passes", "--corpus", str(BEHAVIOURS), "-q",
            "--json", str(reports / "r.json"), "--junit", str(reports / "r.xml"),
        )  # fmt: skip
    finally:
        os.close(held)
    assert done.returncode == 0, done.stderr
    assert not any(p.exists() for p in stale)
    assert live.exists() and all(p.exists() for p in others)
