"""The child's own wire formats: a literal spec in, JSON out, without importing json."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mgradcheck.child import bootstrap
from mgradcheck.run.child_process import LAUNCHER

PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_result_encoder_agrees_with_json(value: object) -> None:
    assert json.loads(bootstrap.dumps(value)) == value


def test_encoder_handles_what_crash_logs_carry() -> None:
    text = '\x00\x1b[31mred\x1b[0m \udcff lone surrogate, \U0001f600 emoji, caf\u00e9\n\t\\"'
    assert json.loads(bootstrap.dumps({"stderr": text})) == {"stderr": text}
    assert bootstrap.dumps([math.nan, math.inf]) == "[null, null]"


@settings(max_examples=200, deadline=None)
@given(PLAIN.filter(lambda v: isinstance(v, dict)))
def test_spec_literal_round_trips(spec: dict[str, object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.txt"
        path.write_text(repr(spec), encoding="utf-8")
        assert bootstrap.read_spec(str(path)) == spec


def test_child_imports_neither_json_nor_numpy_nor_typing(tmp_path: Path) -> None:
    spec = {
        "id": "t",
        "path": "t.yaml",
        "code": "import sys\nprint(sorted(sys.modules))\n",
        "code_line": 1,
    }
    (tmp_path / "spec.txt").write_text(repr(spec))
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
    # Nor the Python halves of signal and ctypes, nor importlib: a child calls their C halves.
    unwanted = {"json", "numpy", "typing", "re", "traceback", "signal", "ctypes", "importlib"}
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
    (tmp_path / "spec.txt").write_text(repr(spec))
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


def _run(tmp_path: Path, spec: dict[str, object], *flags: str) -> str:
    """What a child running ``spec`` printed (its result: a pass)."""
    (tmp_path / "spec.txt").write_text(repr(spec))
    argv = [sys.executable, *flags, str(LAUNCHER), str(tmp_path / "spec.txt"), str(tmp_path / "r.json")]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120)
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass", out.stderr
    return out.stdout


def test_the_child_runs_the_code_the_parent_compiled_for_an_interpreter_like_its_own(
    tmp_path: Path,
) -> None:
    """What the child runs is the marshalled code when its magic number is the child's own,
    and else the source; a payload that does not load is the source too."""
    spec = {"id": "t", "path": "t.yaml", "code": "print('source')\n", "code_line": 1}
    magic, data = bootstrap.with_code({**spec, "code": "print('compiled')\n"})["compiled"]
    assert magic == bootstrap.magic() is not None
    assert _run(tmp_path, {**spec, "compiled": (magic, data)}) == "compiled\n"
    assert _run(tmp_path, {**spec, "compiled": (b"\x00\x00\r\n", data)}) == "source\n"
    assert _run(tmp_path, {**spec, "compiled": (magic, data[:7])}) == "source\n"
    assert _run(tmp_path, {**spec, "compiled": (magic, bootstrap.dumps(1).encode())}) == "source\n"
    assert _run(tmp_path, spec) == "source\n"


def test_code_compiled_by_a_parent_under_o_keeps_its_asserts(tmp_path: Path) -> None:
    """The asserts are the oracles: a parent run with -O (or PYTHONOPTIMIZE) compiles them in."""
    spec = {"id": "t", "path": "t.yaml", "code": "assert False, 'kept'\n", "code_line": 3}
    script = (
        "import sys; from mgradcheck.child.bootstrap import with_code; "
        f"sys.stdout.write(repr(with_code({spec!r})['compiled']))"
    )
    out = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / "spec.txt").write_text(repr({**spec, "compiled": eval(out.stdout)}))
    argv = [sys.executable, str(LAUNCHER), str(tmp_path / "spec.txt"), str(tmp_path / "r.json")]
    subprocess.run(argv, capture_output=True, check=True, timeout=120)
    result = json.loads((tmp_path / "r.json").read_text())
    assert (result["status"], result["message"]) == ("fail", "kept")
    assert 'File "t.yaml", line 3' in result["traceback"]  # its file, and its line there


def test_code_that_does_not_compile_goes_as_source() -> None:
    spec = {"id": "t", "path": "t.yaml", "code": "def (:\n", "code_line": 1}
    assert bootstrap.with_code(spec) is spec
    assert bootstrap.with_code({"id": "t", "probe_only": True}) == {"id": "t", "probe_only": True}
