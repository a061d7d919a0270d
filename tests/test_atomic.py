"""Atomic writes against another process sweeping the same directory at the worst moments.

A writer's temporary file is removed by any other mgradcheck's sweep that finds
it unlocked; these tests run a real sweep, in its own process, exactly where a
writer's lock used to lapse: between creating the file and locking it, and
between closing it and renaming it over the report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mgradcheck import atomic

SWEEP = "import sys; from pathlib import Path; from mgradcheck.atomic import _sweep; _sweep(Path(sys.argv[1]))"


def sweep_elsewhere(path: Path) -> None:
    subprocess.run([sys.executable, "-c", SWEEP, str(path)], check=True, timeout=60)


def test_a_sweep_right_after_the_temporary_file_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "last-run.json"
    real = tempfile.mkstemp
    calls: list[str] = []

    def made_then_swept(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, name = real(*args, **kwargs)
        calls.append(name)
        if len(calls) == 1:
            sweep_elsewhere(report)  # the file exists, unlocked: the sweep removes it
            assert not Path(name).exists()
        return fd, name

    monkeypatch.setattr(tempfile, "mkstemp", made_then_swept)
    atomic.write_text(report, "{}\n")
    assert report.read_text() == "{}\n"
    assert len(calls) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["last-run.json"]


def test_a_sweep_just_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "last-run.json"
    real = os.replace

    def swept_then_renamed(src: Any, dst: Any) -> None:
        sweep_elsewhere(report)  # the writer still holds its lock: nothing is removed
        real(src, dst)

    monkeypatch.setattr(os, "replace", swept_then_renamed)
    atomic.write_text(report, "[]\n")
    assert report.read_text() == "[]\n"
