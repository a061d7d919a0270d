"""The child's own wire formats (a JSON spec in, JSON out), what it imports, and when it runs the entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mgradcheck.child import bootstrap
from mgradcheck.run.child_process import LAUNCHER


def test_a_result_keeps_what_crash_logs_carry(tmp_path: Path) -> None:
    """Control characters, lone surrogates (from undecodable output) and emoji survive the
    result file, written in ASCII."""
    text = '\x00\x1b[31mred\x1b[0m \udcff lone surrogate, \U0001f600 emoji, caf\u00e9\n\t\\"'
    bootstrap._write(str(tmp_path / "r.json"), {"stderr": text})
    data = (tmp_path / "r.json").read_bytes()
    assert data.isascii()
    assert json.loads(data) == {"stderr": text}


def test_child_imports_neither_numpy_nor_typing(tmp_path: Path) -> None:
    spec = {
        "id": "t",
        "path": "t.yaml",
        "code": "import sys\nprint(sorted(sys.modules))\n",
        "code_line": 1,
    }
    (tmp_path / "spec.txt").write_text(json.dumps(spec))
    out = subprocess.run(
        [
            sys.executable,
            "-X",
            "faulthandler",
            str(LAUNCHER),
            str(tmp_path / "spec.txt"),
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(eval(out.stdout))
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"
    unwanted = {"numpy", "typing", "traceback", "importlib"}
    assert not unwanted & loaded, sorted(unwanted & loaded)


def _held_cgroup(tmp_path: Path) -> Path:
    """A stand-in for a cgroup's ``cgroup.procs``: a FIFO, whose writer waits for a reader."""
    fifo = tmp_path / "cgroup.procs"
    os.mkfifo(fifo)
    return fifo


def _joined(fifo: Path, child: subprocess.Popen[bytes]) -> int:
    with open(fifo) as f:  # lets the child's move go through
        moved = int(f.read())
    assert moved == child.pid  # it moved itself, the whole process
    return moved


def test_the_entry_runs_only_once_the_child_is_in_its_cgroup(tmp_path: Path) -> None:
    """The move into the cgroup goes on beside MLX's import; the entry waits for it."""
    fifo, marker = _held_cgroup(tmp_path), tmp_path / "ran"
    spec = {"id": "t", "path": "t.yaml", "code": f"open({str(marker)!r}, 'w').close()\n"}
    (tmp_path / "spec.txt").write_text(json.dumps(spec))
    argv = [sys.executable, str(LAUNCHER), str(tmp_path / "spec.txt"), str(tmp_path / "r.json")]
    child = subprocess.Popen(argv, env={**os.environ, "MGRADCHECK_CGROUP": str(fifo)})
    try:
        time.sleep(1.0)  # long enough for MLX's import, and for an entry that did not wait
        assert child.poll() is None and not marker.exists()
        _joined(fifo, child)
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert marker.exists()
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"


def test_a_program_run_by_the_launcher_starts_only_once_it_is_in_its_cgroup(
    tmp_path: Path,
) -> None:
    fifo, marker = _held_cgroup(tmp_path), tmp_path / "ran"
    argv = [sys.executable, str(LAUNCHER), "--exec", "/bin/sh", "-c", f"touch '{marker}'"]
    child = subprocess.Popen(argv, env={**os.environ, "MGRADCHECK_CGROUP": str(fifo)})
    try:
        time.sleep(0.5)
        assert child.poll() is None and not marker.exists()
        _joined(fifo, child)
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert marker.exists()


def test_the_entry_fails_on_its_assert_at_its_line_in_its_file(tmp_path: Path) -> None:
    """The asserts are the oracles; a traceback names the entry's file and its line there."""
    spec = {"id": "t", "path": "t.yaml", "code": "assert False, 'kept'\n", "code_line": 3}
    (tmp_path / "spec.txt").write_text(json.dumps(spec))
    argv = [sys.executable, str(LAUNCHER), str(tmp_path / "spec.txt"), str(tmp_path / "r.json")]
    subprocess.run(argv, capture_output=True, check=True, timeout=120)
    result = json.loads((tmp_path / "r.json").read_text())
    assert (result["status"], result["message"]) == ("fail", "kept")
    assert 'File "t.yaml", line 3' in result["traceback"]
