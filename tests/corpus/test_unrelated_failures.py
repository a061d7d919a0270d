"""A bundled entry whose call under test fails for another cause reads UNEXPECTED, not as its bug.

Each entry runs in a real child under the installed MLX, made to look like a release
that has the bug (0.26.1) and with the transform the entry tests replaced by one that
raises an error unrelated to the bug, as an API an old release lacks would. A
reproducer that caught any exception around that call and a match that any message of
the call fits would take the error for the bug and judge the entry as expected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.outcomes import Verdict

pytestmark = [pytest.mark.mlx, pytest.mark.slow]

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
UNRELATED = "TypeError: an unrelated failure"
# Read by every interpreter that starts with it on its path: the entry's child, and the
# interpreter where-jvp-zero-tangent starts for its jvps.
SITECUSTOMIZE = """\
import mlx.core as mx

def _unrelated(*args, **kwargs):
    raise TypeError("an unrelated failure")

mx.__version__ = "0.26.1"
for _name in ("jvp", "vmap", "compile"):
    setattr(mx, _name, _unrelated)
"""
# Each wraps a broken call in a try: mx.jvp, mx.vmap, mx.compile, or mx.jvp in a
# grandchild. The first six are fixed after 0.26.1, so the error would read as the bug
# reproduced; the last two before it, so it would read as the bug come back.
ENTRIES = (
    "reduction-jvp-missing",
    "logsumexp-jvp-axis",
    "fft-jvp-axes-subset",
    "vmap-partition-kth",
    "compiled-abs-unsigned",
    "where-jvp-zero-tangent",
    "vmap-negative-in-axis",
    "vmap-gather-source-axis",
)


def interpreter(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    script = tmp_path / "python"
    script.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    script.chmod(0o755)
    return script


def test_an_unrelated_error_in_the_call_under_test_is_not_the_bug(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [*MGRADCHECK, "run", *ENTRIES, "--python", str(interpreter(tmp_path)),
         "--json", str(report), "-q", "-j", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MGRADCHECK_CACHE": str(tmp_path / "cache")},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    results = {r["id"]: r for r in json.loads(report.read_text())["results"]}
    assert sorted(results) == sorted(ENTRIES)
    for entry_id, result in results.items():
        assert result["environment"]["mlx"] == "0.26.1", entry_id
        assert result["verdict"] == Verdict.UNEXPECTED.label, (entry_id, result["reason"])
        assert result["reason"].startswith("error: "), (entry_id, result["reason"])
        assert UNRELATED in result["reason"], (entry_id, result["reason"])
