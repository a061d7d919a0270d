"""``--python NAME`` is looked up on PATH as the shell looks up a command; a path is taken as given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def run(tmp_path: Path, python: str) -> subprocess.CompletedProcess[str]:
    report = tmp_path / "report.json"
    bin_dir = tmp_path / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    args = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q", "--json", str(report)]
    return subprocess.run(
        [*MGRADCHECK, *args, "--python", python],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_a_name_is_found_on_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "mgc-test-python"
    used = tmp_path / "used"
    wrapper.write_text(f'#!/bin/sh\ntouch {used}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    done = run(tmp_path, "mgc-test-python")
    assert done.returncode == 0, done.stderr
    assert used.exists()  # the children ran under the command found on PATH
    (result,) = json.loads((tmp_path / "report.json").read_text())["results"]
    assert result["verdict"] == "as expected"


def test_a_name_not_on_path_is_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, "mgc-no-such-python")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "mgradcheck: error: Invalid value for '--python': "
        "'mgc-no-such-python': no such command on PATH"
    )
    assert "Traceback" not in done.stderr
