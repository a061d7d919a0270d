"""A cache that holds release environments and cannot be written: one line, exit 2, for every
command that would lock one of them, never a traceback and never a release judged unusable.

The cache is made read-only as a full disk or a read-only mount makes it: a read-only bind
mount in a mount namespace of the command's own (``unshare -m``, which needs root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.envs.test_damaged import GRAD_ENTRY, mgradcheck_run, source

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare"
)


def read_only(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mgradcheck ARGS`` with ``cache`` mounted read-only over itself, for this command alone."""
    command = " ".join(['mount --bind -o ro "$0" "$0" && exec', *['"$@"']])
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", command, str(cache), sys.executable, "-m", "mgradcheck",
         *args],
        capture_output=True, text=True, timeout=180, check=False,
        env={**os.environ, "MGRADCHECK_CACHE": str(cache)},
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["run", "grad-halved", "--mlx", "1.4.0"],
        ["matrix", "grad-halved", "--versions", "==1.4.0"],
        ["envs", "list"],
        ["envs", "prune", "--all"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_read_only_cache_with_environments_is_one_line(
    args: list[str], fake_wheels: Path, tmp_path: Path
) -> None:
    cache = Path(os.environ["MGRADCHECK_CACHE"])
    built = mgradcheck_run("envs", "path", "1.4.0", "-q", *source(fake_wheels))
    assert built.returncode == 0, built.stderr
    (tmp_path / "grad-halved.yaml").write_text(GRAD_ENTRY)
    corpus = ["--corpus", str(tmp_path)] if args[0] != "envs" else []
    releases = source(fake_wheels) if args[0] != "envs" else []
    done = read_only(cache, *args, *corpus, *releases)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("mgradcheck: error: the cache is not writable: cannot open ")
    assert "Read-only file system" in line
