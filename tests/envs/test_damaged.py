"""A release environment whose MLX was damaged is never trusted: rebuilt before use, or its runs dropped.

Real installs of the fake releases (tests/fake_mlx.py), real ``python -m mgradcheck``
commands and real children; the damage is what a cleanup script or a full disk
leaves: an MLX file cut short, after the environment was complete.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.corpus.loader import load
from mgradcheck.envs import venvs
from mgradcheck.releases import on_release
from tests import fake_mlx

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 180.0

# grad is right before 1.2 and from 1.4 on (tests/fake_mlx.py halves it in 1.2 and 1.3).
GRAD_ENTRY = """\
id: grad-halved
title: Fake grad halved in fake MLX 1.2 and 1.3
summary: Used by the tests; needs the fake mlx.core whole.
upstream: {report: "https://example.invalid/grad-halved"}
bug: {outcome: fail, fixed_in: "1.4.0"}
timeout: 20
code: |
  g = mx.grad(lambda x: x * x)(3.0)
  assert_true(abs(g - 6.0) < 1e-3, f"d/dx x^2 at 3 is {g}, not 6")
"""

# An entry that writes into its own MLX: the environment it ran in is not the one it was given.
SCRIBBLER = """\
id: scribbles-on-mlx
title: An entry that appends to mlx/core.py
summary: Used by the tests.
upstream: {report: "https://example.invalid/scribbles"}
bug: {outcome: fail}
timeout: 20
code: |
  with open(mx.__file__, "a") as f:
      f.write("# scribbled\\n")
  assert_true(False, "the bug")
"""


def source(wheels: Path) -> list[str]:
    return ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]


def mgradcheck_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=WAIT, check=False
    )


def core_file(venv: Path) -> Path:
    (core,) = venv.glob("lib/python*/site-packages/mlx/core.py")
    return core


def cut_short(path: Path) -> None:
    """What a copy stopped halfway leaves: the probe's part of the fake core, and not grad.

    A new file, as a copy makes: the installed one may be a hard link into uv's cache.
    """
    text = path.read_text()
    path.unlink()
    path.write_text(text[: text.index("_RELEASE")])


@pytest.fixture
def wheels(fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake wheels, into caches of this test's own: uv links the files of its cache into
    environments, so damage done in place to one reaches every other."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    return fake_wheels


def test_a_damaged_environment_is_rebuilt_before_a_bisect_probes_it(
    wheels: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "grad-halved.yaml").write_text(GRAD_ENTRY)
    built = mgradcheck_run("envs", "path", "1.4.0", "-q", *source(wheels))
    assert built.returncode == 0, built.stderr
    venv = Path(built.stdout.strip())
    cut_short(core_file(venv))

    report = tmp_path / "bisect.json"
    args = ["bisect", "grad-halved", "--corpus", str(corpus), "-q", "--json", str(report)]
    args += ["--bad", "1.3.0", "--good", "1.4.0", *source(wheels)]
    done = mgradcheck_run(*args)
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())["boundary"] == ["1.3.0", "1.4.0"]
    assert "_RELEASE" in core_file(venv).read_text()  # installed again, whole

    (entry,) = load([corpus])
    stored = fake_mlx.stored(wheels, entry.content_hash, "1.4.0")
    assert stored is not None and {r.outcome.label for r in stored.runs} == {"pass"}


def test_envs_list_says_damaged_and_prune_removes_it(wheels: Path) -> None:
    built = mgradcheck_run("envs", "path", "1.1.0", "-q", *source(wheels))
    assert built.returncode == 0, built.stderr
    venv = Path(built.stdout.strip())
    core_file(venv).unlink()
    listed = mgradcheck_run("envs", "list")
    assert listed.returncode == 0 and " damaged " in listed.stdout, listed.stdout
    pruned = mgradcheck_run("envs", "prune")  # not --all: a damaged one is not ready
    assert pruned.returncode == 0 and "removed 1 environment" in pruned.stdout, pruned.stdout
    assert not venv.exists()


def test_runs_in_an_environment_damaged_meanwhile_are_not_kept(
    wheels: Path, tmp_path: Path
) -> None:
    (tmp_path / "scribbles.yaml").write_text(SCRIBBLER)
    (entry,) = load([tmp_path / "scribbles.yaml"])
    settings = fake_mlx.settings(wheels)
    (run,) = on_release.run_release(Version("1.3.0"), [entry], settings)
    assert run.runs == () and run.problem is not None and "damaged" in run.problem
    assert fake_mlx.stored(wheels, entry.content_hash, "1.3.0") is None
    # Its next use finds the environment damaged, and builds it again.
    spec = settings.spec(Version("1.3.0"))
    assert not venvs.is_ready(venvs.envs_root() / spec.name, spec.digest)


def test_damage_shared_with_the_installers_cache_is_refused_in_one_line(
    wheels: Path, tmp_path: Path
) -> None:
    """uv links the files of its cache into environments: a file cut short in place is damaged
    there too, and comes back with every reinstall. The hashes checked at build say so."""
    (tmp_path / "grad-halved.yaml").write_text(GRAD_ENTRY)
    built = mgradcheck_run("envs", "path", "1.4.0", "-q", *source(wheels))
    assert built.returncode == 0, built.stderr
    core = core_file(Path(built.stdout.strip()))
    text = core.read_text()
    with core.open("r+") as stream:  # in place, as a disk that filled up mid-write leaves it
        stream.truncate(text.index("_RELEASE"))

    args = ["run", "--corpus", str(tmp_path / "grad-halved.yaml"), "--mlx", "1.4.0", "-q"]
    done = mgradcheck_run(*args, *source(wheels))
    assert done.returncode == 3, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("mgradcheck: error: installing mlx 1.4.0 failed: ")
    assert "mlx/core.py" in line and "uv cache clean mlx" in line
