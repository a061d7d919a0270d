"""The probe cache: a second run asks no child, and never answers for an interpreter that changed.

Real virtual environments made with uv from the fake MLX wheels (tests/fake_mlx.py),
offline; real ``python -m mgradcheck`` processes for the concurrent case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.envs import venvs
from mgradcheck.paths import cache_root
from mgradcheck.run import runner, stages
from mgradcheck.run.observation import Environment
from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def make_venv(where: Path, wheels: Path, version: str) -> str:
    uv = venvs.find_uv()
    if uv is None:
        pytest.skip("needs uv")
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(where)], check=True)
    install(where, wheels, version)
    return str(where / "bin" / "python")


def install(venv: Path, wheels: Path, version: str) -> None:
    uv = venvs.find_uv()
    assert uv is not None
    python = str(venv / "bin" / "python")
    args = [
        "pip",
        "install",
        "--quiet",
        "--python",
        python,
        "--no-index",
        "--find-links",
        str(wheels),
    ]
    subprocess.run([uv, *args, f"mlx=={version}"], check=True)


class Probes:
    """Counts the probe children by wrapping the stage's probe."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = runner.probe

        def counting(*args: object) -> Environment:
            self.count += 1
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr("mgradcheck.run.stages.probe", counting)


@pytest.fixture
def python(fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An environment of fake MLX 1.1.0 of its own, and a cache of its own."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    return make_venv(tmp_path / "venv", fake_wheels, "1.1.0")


def test_a_second_run_asks_no_child_and_a_new_release_is_probed_again(
    python: str, fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = Probes(monkeypatch)
    assert stages.prepare(python)[1].mlx == "1.1.0" and probes.count == 1
    assert stages.prepare(python)[1].mlx == "1.1.0" and probes.count == 1  # from the cache
    install(tmp_path / "venv", fake_wheels, "1.3.0")  # another release, the same environment
    assert stages.prepare(python)[1].mlx == "1.3.0" and probes.count == 2
    assert stages.prepare(python)[1].mlx == "1.3.0" and probes.count == 2
    assert len(list((cache_root() / "probes").iterdir())) == 2


def test_an_interpreter_whose_imports_the_files_cannot_tell_is_probed_every_time(
    python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = Probes(monkeypatch)
    for _ in range(2):
        stages.prepare(python, extra_env={"PYTHONPATH": str(tmp_path)})
    assert probes.count == 2


def test_concurrent_runs_on_two_environments_share_the_cache_correctly(
    fake_wheels: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    pythons = {v: make_venv(tmp_path / f"venv-{v}", fake_wheels, v) for v in ("1.1.0", "1.3.0")}
    env = {**os.environ, "MGRADCHECK_CACHE": str(cache)}
    for round_ in ("cold", "warm"):
        runs = []
        for i in range(4):
            version = ("1.1.0", "1.3.0")[i % 2]
            report = tmp_path / f"{round_}-{i}.json"
            args = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q", "--json", str(report)]
            process = subprocess.Popen(
                [*MGRADCHECK, *args, "--python", pythons[version]],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
            )
            runs.append((process, version, report))
        for process, version, report in runs:
            _, err = process.communicate(timeout=180)
            assert process.returncode == 0, err.decode()
            data = json.loads(report.read_text())
            assert [e["mlx"] for e in data["environments"]] == [version], round_
    stored = [json.loads(p.read_text()) for p in (cache / "probes").iterdir()]
    assert sorted(s["environment"]["mlx"] for s in stored) == ["1.1.0", "1.3.0"]
