"""Commands started at once on a new cache agree on its root (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mgradcheck.paths import cache_root

# Imports first, then waits for the go file, so that every process looks at the new cache at once.
AT_ONCE = """\
import os, sys, time
from mgradcheck.paths import cache_root
while not os.path.exists(sys.argv[1]):
    time.sleep(0.001)
print(cache_root())
"""


def test_commands_started_at_once_on_a_new_cache_share_one_root(tmp_path: Path) -> None:
    for round_ in range(6):
        go, cache = tmp_path / f"go-{round_}", tmp_path / f"cache-{round_}"
        env = {**os.environ, "MGRADCHECK_CACHE": str(cache)}
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", AT_ONCE, str(go)], env=env, stdout=subprocess.PIPE, text=True
            )
            for _ in range(6)
        ]
        time.sleep(1.0)  # all imported and waiting
        go.touch()
        roots = {p.communicate(timeout=60)[0].strip() for p in processes}
        assert roots == {str(cache)}, round_  # one root: none took cache/mgradcheck


def test_a_directory_of_other_things_gets_a_cache_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("the user's")
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path))
    assert cache_root() == tmp_path / "mgradcheck"
