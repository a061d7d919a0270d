"""Release environments: built once, locked, never reused half-built, failures remembered."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.envs import inventory, logged_process, venvs
from mgradcheck.index.installable import Source, Target


def spec(
    wheels: Path,
    version: str = "1.1.0",
    installer: venvs.Installer = venvs.Installer.UV,
    packages: tuple[str, ...] = ("numpy",),
) -> venvs.EnvSpec:
    return venvs.EnvSpec(
        Version(version), Target.current("cpu"), Source(None, wheels), installer, packages
    )


@pytest.fixture
def wheels(fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake wheels, and an environment cache of this test's own."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    return fake_wheels


def installed_mlx(python: str) -> str:
    code = "import mlx.core as mx, numpy; print(mx.__version__)"
    return subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_an_environment_is_built_once_then_reused(wheels: Path) -> None:
    wanted = spec(wheels)
    with venvs.using(wanted) as env:
        assert not env.reused
        assert installed_mlx(env.python) == "1.1.0"
        assert env.kernels.is_dir() and env.kernels.parent == env.path
        for name in (venvs.MARKER, venvs.COMPLETE, venvs.LOG):
            assert (env.path / name).is_file()
    assert (venvs.envs_root().parent / "CACHEDIR.TAG").is_file()
    with venvs.using(wanted) as again:
        assert again.reused and again.path == env.path


def test_names_say_what_and_hash_the_rest(wheels: Path, tmp_path: Path) -> None:
    name = spec(wheels).name
    assert name.startswith(f"mlx-1.1.0-cpu-py{Target.current().python}-")
    assert spec(wheels, installer=venvs.Installer.PIP).name != name
    other = venvs.EnvSpec(
        Version("1.1.0"),
        Target.current("cpu"),
        Source("https://example.com/simple", wheels),
        venvs.Installer.UV,
    )
    assert other.name != name


def test_commands_never_go_through_a_shell(wheels: Path) -> None:
    venv = Path("/cache/env/venv")
    uv_install = spec(wheels).commands(venv, "/bin/uv")[1]
    assert uv_install[:5] == ["/bin/uv", "pip", "install", "--python", "/cache/env/venv/bin/python"]
    assert uv_install[5:] == ["--no-index", "--find-links", str(wheels), "mlx[cpu]==1.1.0", "numpy"]
    pip = spec(wheels, installer=venvs.Installer.PIP).commands(venv, None)
    assert pip[0][1:3] == ["-m", "venv"] and pip[1][1:4] == ["-m", "pip", "install"]


def test_a_half_built_environment_is_rebuilt(wheels: Path) -> None:
    wanted = spec(wheels)
    path = venvs.envs_root() / wanted.name
    (path / "venv" / "bin").mkdir(parents=True)
    (path / "venv" / "bin" / "python").write_text("half an interpreter")
    (path / venvs.MARKER).write_text(json.dumps({"schema": venvs.SCHEMA, "spec": wanted.key()}))
    assert not venvs.is_ready(path, wanted.digest)
    assert [e.state for e in inventory.scan()[0]] == [inventory.EnvState.INCOMPLETE]
    with venvs.using(wanted) as env:
        assert not env.reused
        assert installed_mlx(env.python) == "1.1.0"


def test_a_failed_install_is_remembered_until_retried(
    wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = spec(wheels, "1.5.0")
    with pytest.raises(venvs.InstallFailed) as first, venvs.using(broken):
        pass
    assert first.value.remembered
    assert "mgradcheck-test-no-such-package" in first.value.tail
    failed = json.loads((venvs.envs_root() / broken.name / venvs.FAILED).read_text())
    assert failed["mlx"] == "1.5.0" and "no-such-package" in failed["log_tail"]

    def no_installer(*args: object, **kwargs: object) -> int:
        raise AssertionError("a remembered failure ran the installer again")

    installer = logged_process.run_logged
    monkeypatch.setattr(venvs, "run_logged", no_installer)
    with pytest.raises(venvs.InstallFailed, match="--retry-failed"), venvs.using(broken):
        pass
    monkeypatch.setattr(venvs, "run_logged", installer)
    with pytest.raises(venvs.InstallFailed), venvs.using(broken, retry_failed=True):
        pass
    assert inventory.scan()[0][0].state is inventory.EnvState.FAILED


def test_a_second_builder_waits_for_the_lock(wheels: Path) -> None:
    wanted = spec(wheels)
    holder = venvs.Lock(wanted.name)
    holder.acquire(exclusive=True)
    waiting, built = threading.Event(), []

    def build() -> None:
        with venvs.using(wanted, on_wait=waiting.set) as env:
            built.append(env.reused)

    thread = threading.Thread(target=build)
    thread.start()
    try:
        assert waiting.wait(30), "the second builder did not notice the lock"
        assert not built and thread.is_alive()
        assert not (venvs.envs_root() / wanted.name).exists(), "built while another held the lock"
    finally:
        holder.close()
        thread.join(120)
    assert built == [False]


def test_prune_removes_only_our_broken_environments(wheels: Path) -> None:
    with venvs.using(spec(wheels)):
        pass
    with pytest.raises(venvs.InstallFailed), venvs.using(spec(wheels, "1.5.0")):
        pass
    foreign = (
        venvs.envs_root() / "mlx-9.9.9-cpu-py3.11-0000000000"
    )  # our naming, but not our marker
    (foreign / "venv").mkdir(parents=True)
    removed = inventory.prune().removed
    assert [e.version for e in removed] == ["1.5.0"]
    assert foreign.is_dir()
    ours, others = inventory.scan()
    assert [e.state for e in ours] == [inventory.EnvState.READY] and others == [foreign]
    with venvs.using(spec(wheels)):
        left = inventory.prune(everything=True)
        assert left.removed == [] and [e.version for e in left.in_use] == ["1.1.0"]
        assert [e.state for e in inventory.scan()[0]] == [inventory.EnvState.IN_USE]
    assert [e.version for e in inventory.prune(everything=True, dry_run=True).removed] == ["1.1.0"]
    assert [e.version for e in inventory.prune(everything=True).removed] == ["1.1.0"]
    assert inventory.scan() == ([], [foreign])


@pytest.mark.slow
def test_venv_and_pip_when_uv_is_not_wanted(wheels: Path) -> None:
    with venvs.using(spec(wheels, "1.0.0", venvs.Installer.PIP, packages=())) as env:
        code = "import mlx.core as mx; print(mx.__version__)"
        done = subprocess.run([env.python, "-c", code], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "1.0.0"


def test_envs_commands(wheels: Path) -> None:
    runner = CliRunner()
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]
    listed = runner.invoke(cli, ["envs", "releases", *source])
    assert listed.exit_code == 0 and listed.output.split() == [
        "1.0.0",
        "1.1.0",
        "1.2.0",
        "1.3.0",
        "1.4.0",
        "1.5.0",
        "1.6.0",
    ]
    path = runner.invoke(cli, ["envs", "path", "1.2.0", "-q", *source])
    assert path.exit_code == 0, path.output
    venv = Path(path.stdout.strip())
    assert installed_mlx(str(venv / "bin" / "python")) == "1.2.0"
    missing = runner.invoke(cli, ["envs", "path", "7.0.0", "-q", *source])
    assert missing.exit_code == 2 and "mlx 7.0.0 is not installable" in missing.output
    # A release that is listed but will not install is the environment's failure, not bad usage.
    broken = runner.invoke(cli, ["envs", "path", "1.5.0", "-q", *source])
    assert broken.exit_code == 3, broken.output
    assert "mgradcheck: error: installing mlx 1.5.0 failed" in broken.output
    shown = runner.invoke(cli, ["envs", "list"])
    assert "1.2.0" in shown.output and "ready" in shown.output
    pruned = runner.invoke(cli, ["envs", "prune", "--all"])
    assert pruned.exit_code == 0 and "removed 2 environments" in pruned.output  # and the failed one


@pytest.mark.parametrize("version", ["-rf", "1.0/../..", "1.0 2", "newest"])
def test_bad_versions_stop_before_anything_runs(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "Popen", None)  # any subprocess at all would fail loudly
    result = CliRunner().invoke(cli, ["envs", "path", "--", version])
    assert result.exit_code == 2
    assert "is not" in result.output and "Traceback" not in result.output


@pytest.mark.network
def test_a_real_release_installs(real_cache: Path) -> None:
    """One real mlx[cpu] release from the real index (small and usually in uv's cache already)."""
    from mgradcheck.index.installable import list_releases

    target = Target.current()
    listing = list_releases(Source.from_options(), target)
    newest = listing.versions[-1]
    real = venvs.EnvSpec(newest, target, listing.source, venvs.default_installer())
    with venvs.using(real) as env:
        code = "import mlx.core as mx; print(mx.__version__, mx.default_device())"
        done = subprocess.run([env.python, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[0] == str(newest)
