"""Without uv, environments are made with pip: said once, as a line that stays; and
``envs list`` names each environment's installer, and why one release has two."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
NOTICE = (
    "mgradcheck: uv not found: environments are made with venv + pip, more slowly "
    "(pip install 'mgradcheck[uv]' for uv)"
)


def mgradcheck(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=300, check=False, env=env
    )


def without_uv(tmp_path: Path) -> dict[str, str]:
    """The uv package finds no binary, and PATH holds none."""
    shim = tmp_path / "shim" / "uv"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("def find_uv_bin():\n    raise FileNotFoundError\n")
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "env"):
        os.symlink(f"/bin/{tool}", bare / tool)
    python_path = os.pathsep.join(p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": python_path, "PATH": str(bare)}


def test_pip_is_said_once_and_envs_list_names_the_installer(
    fake_wheels: Path, tmp_path: Path
) -> None:
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu"]
    env = {**os.environ, "MGRADCHECK_CACHE": str(tmp_path / "cache")}
    with_uv = mgradcheck("envs", "path", "1.0.0", *source, env=env)
    assert with_uv.returncode == 0, with_uv.stderr
    assert "uv not found" not in with_uv.stderr

    pip_env = {**without_uv(tmp_path), "MGRADCHECK_CACHE": env["MGRADCHECK_CACHE"]}
    with_pip = mgradcheck("envs", "path", "1.0.0", *source, env=pip_env)
    assert with_pip.returncode == 0, with_pip.stderr
    assert with_pip.stderr.splitlines().count(NOTICE) == 1  # whole, on a line of its own

    listed = mgradcheck("envs", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines() if line.startswith("1.0.0")]
    assert sorted(row[3] for row in rows) == ["pip", "uv"]  # the installer's column
    python = f"py{sys.version_info.major}.{sys.version_info.minor}"
    assert (
        f"note: mlx 1.0.0 (cpu, {python}) has 2 environments: one per installer and package "
        "source, each built and kept on its own"
    ) in listed.stdout.splitlines()
