"""Prerequisites of a build, MLX's pinned dependencies, and the offline directory of clones."""

from __future__ import annotations

from pathlib import Path

import pytest

from mgradcheck.builds import sources, toolchain
from mgradcheck.builds.toolchain import BuildSetupError, Needs, Pin
from tests.fake_commits import git

# The shape of MLX's own declarations (v0.32.0's CMakeLists.txt and mlx/io/CMakeLists.txt).
CMAKE = """\
  FetchContent_Declare(metal_cpp URL ${METAL_CPP_URL})
FetchContent_Declare(
  json
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
  FetchContent_Declare(
    fmt
    GIT_REPOSITORY https://github.com/fmtlib/fmt.git
    GIT_TAG 12.1.0
    EXCLUDE_FROM_ALL)
  FetchContent_Declare(
    gguflib
    GIT_REPOSITORY https://github.com/antirez/gguf-tools/
    GIT_TAG 8fa6eb65236618e28fd7710a0fba565f7faa1848)
"""


def test_pins_are_read_from_the_declarations() -> None:
    assert toolchain.parse_pins(CMAKE) == [
        Pin("json", "https://github.com/nlohmann/json", "v3.11.3"),
        Pin("fmt", "https://github.com/fmtlib/fmt.git", "12.1.0"),
        Pin(
            "gguflib",
            "https://github.com/antirez/gguf-tools/",
            "8fa6eb65236618e28fd7710a0fba565f7faa1848",
        ),
    ]  # metal_cpp's URL is a CMake variable: nothing to provide it from
    fmt = toolchain.parse_pins(CMAKE)[1]
    assert (fmt.variable, fmt.repo_name) == ("FETCHCONTENT_SOURCE_DIR_FMT", "fmt")
    assert toolchain.parse_pins(CMAKE)[2].repo_name == "gguf-tools"


def test_missing_prerequisites_are_named_with_how_to_get_them(tmp_path: Path) -> None:
    mlx = Needs(compiler=True, blas=True, lapack=True)
    nothing = toolchain.missing(mlx, "cpu", "Linux", headers=[tmp_path], which=lambda name: None)
    lines = [m.line() for m in nothing]
    assert lines[0].startswith("git (Debian/Ubuntu: apt-get install git;")
    assert (
        "a C++ compiler (Debian/Ubuntu: apt-get install build-essential; macOS: xcode-select --install)"
        in lines
    )
    assert (
        "BLAS (cblas.h) (Debian/Ubuntu: apt-get install libopenblas-dev; macOS: nothing)" in lines
    )
    assert (
        "LAPACK (lapacke.h) (Debian/Ubuntu: apt-get install liblapacke-dev; macOS: nothing)"
        in lines
    )
    (tmp_path / "cblas.h").write_text("")
    (tmp_path / "lapacke.h").write_text("")
    found = toolchain.missing(
        mlx, "cpu", "Linux", headers=[tmp_path], which=lambda name: f"/usr/bin/{name}"
    )
    assert found == []
    cuda = toolchain.missing(
        mlx,
        "cuda",
        "Linux",
        [tmp_path],
        lambda n: None if n == "nvcc" else n,
        {"CUDA_HOME": str(tmp_path)},
    )
    assert [m.what for m in cuda] == ["the CUDA toolkit (nvcc)"]
    assert toolchain.missing(Needs(), "cpu", "Linux", [], lambda n: "/usr/bin/git") == []
    assert toolchain.missing(mlx, "metal", "Darwin", [], lambda n: n) == []  # Accelerate


def _repo(path: Path, files: dict[str, str], tag: str) -> str:
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "t"), ("user.email", "t@example.invalid")):
        git(path, "config", key, value)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", tag)
    git(path, "tag", tag)
    return git(path, "rev-parse", "HEAD")


@pytest.fixture
def deps(tmp_path: Path) -> Path:
    """A directory of clones: a binding library pinned at v2.0, with a submodule in ext/map."""
    directory = tmp_path / "deps"
    inner = _repo(directory / "robin-map", {"include/map.h": "// map\n"}, "v1.0")
    binder = directory / "binder"
    _repo(binder, {"CMakeLists.txt": "# binder 1\n"}, "v1.0")
    gitmodules = (
        '[submodule "ext/map"]\n\tpath = ext/map\n\turl = https://github.com/Tessil/robin-map\n'
    )
    (binder / ".gitmodules").write_text(gitmodules)
    (binder / "CMakeLists.txt").write_text("# binder 2\n")
    git(binder, "add", "--all")
    git(binder, "update-index", "--add", "--cacheinfo", f"160000,{inner},ext/map")
    git(binder, "commit", "--quiet", "-m", "v2.0")
    git(binder, "tag", "v2.0")
    return directory


def test_a_pinned_dependency_is_exported_with_its_submodules(deps: Path) -> None:
    pin = Pin("binder", "https://github.com/example/binder.git", "v2.0")
    tree = toolchain.provide(pin, deps)
    assert tree is not None
    assert (tree / "CMakeLists.txt").read_text() == "# binder 2\n"  # the pinned version, not v1.0
    assert (tree / "ext" / "map" / "include" / "map.h").read_text() == "// map\n"
    assert toolchain.provide(pin, deps) == tree  # exported once
    older = toolchain.provide(Pin("binder", pin.url, "v1.0"), deps)
    assert older is not None and (older / "CMakeLists.txt").read_text() == "# binder 1\n"
    assert toolchain.provide(Pin("absent", "https://github.com/x/absent", "v1"), deps) is None


def test_what_the_directory_lacks_is_said_in_one_line(deps: Path) -> None:
    with pytest.raises(BuildSetupError, match=r"binder has no v9\.9, which MLX pins for binder"):
        toolchain.provide(Pin("binder", "https://github.com/example/binder", "v9.9"), deps)
    git(deps / "robin-map", "tag", "--delete", "v1.0")
    (deps / "robin-map").rename(deps / "elsewhere")
    with pytest.raises(BuildSetupError) as missing:
        toolchain.provide(Pin("binder", "https://github.com/example/binder", "v2.0"), deps)
    assert str(missing.value) == (
        f"binder v2.0 needs its submodule ext/map: clone https://github.com/Tessil/robin-map into {deps / 'robin-map'}"
    )


def test_cmake_is_pointed_at_what_the_directory_provides(deps: Path, tmp_path: Path) -> None:
    mlx = tmp_path / "mlx"
    cmake = "FetchContent_Declare(binder GIT_REPOSITORY https://github.com/example/binder.git GIT_TAG v2.0)\n"
    sha = _repo(mlx, {"CMakeLists.txt": cmake + CMAKE}, "v0.1.0")
    provided, absent = toolchain.cmake_sources(sources.repository(mlx), sha, deps)
    binder = toolchain.provide(Pin("binder", "https://github.com/example/binder.git", "v2.0"), deps)
    assert provided == {
        "FETCHCONTENT_SOURCE_DIR_BINDER": str(binder),
        "FETCHCONTENT_SOURCE_DIR_JSON": "",  # not one an earlier build left in CMake's cache
        "FETCHCONTENT_SOURCE_DIR_FMT": "",
        "FETCHCONTENT_SOURCE_DIR_GGUFLIB": "",
    }
    assert [p.name for p in absent] == ["json", "fmt", "gguflib"]
    assert Needs.of(sources.repository(mlx), sha) == Needs(compiler=True)


def test_a_download_that_failed_offline_names_the_dependency() -> None:
    pins = toolchain.parse_pins(CMAKE)
    log = (
        "-- Populating fmt\nfatal: unable to access 'https://github.com/fmtlib/fmt.git/': "
        "Could not resolve host: github.com\nCMake Error at fmt-subbuild/CMakeLists.txt"
    )
    assert toolchain.download_failure(log, pins) == pins[1]
    assert toolchain.download_failure("src/a.cpp:1:1: error: nope", pins) is None
    hint = toolchain.offline_hint(pins[1], "6335c834c24425dae655ee384b63524ed25c4574", None)
    assert hint == (
        "MLX at 6335c834c needs fmt 12.1.0 (https://github.com/fmtlib/fmt.git) and cannot download "
        "it (offline?): clone it into DIR/fmt, and give --mlx-deps DIR"
    )
