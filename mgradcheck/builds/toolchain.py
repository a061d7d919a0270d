"""What building one MLX commit needs from this machine, checked before any build starts.

Two things come from outside the source: system tools and libraries (a C++
compiler, BLAS and LAPACK headers, ``nvcc`` for CUDA), said in one line each
with how to get them; and the dependencies MLX's CMake fetches from GitHub at
configure time (``FetchContent_Declare``: nlohmann/json, fmt, nanobind, ...).
Offline, a directory of clones (``--mlx-deps DIR``: ``DIR/nanobind``,
``DIR/fmt``...) stands in for GitHub: each dependency is exported at the
version the commit pins into the cache once, submodules included, and handed
to CMake as ``FETCHCONTENT_SOURCE_DIR_<NAME>``.
"""

from __future__ import annotations

import os
import re
import shutil
import sysconfig
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.builds.sources import GitError, export, git, git_dir, resolve
from mgradcheck.errors import EnvironmentFailure, UsageError
from mgradcheck.paths import cache_root, safe_name
from mgradcheck.upstream import short

Which = Callable[[str], "str | None"]

_DECLARE = re.compile(r"FetchContent_Declare\(\s*([A-Za-z0-9_.-]+)(.*?)\)", re.DOTALL)
_FIELD = re.compile(r"\b(GIT_REPOSITORY|GIT_TAG|URL)\s+\"?([^\s\"]+)")
# A release asset or archive on GitHub names its repository and version in the URL.
_GITHUB_URL = re.compile(
    r"^(https://github\.com/[^/]+/[^/]+?)(?:\.git)?/"
    r"(?:releases/download/([^/]+)/|archive/(?:refs/tags/)?(.+?)\.(?:tar\.gz|tar\.xz|zip)$)"
)
_READY = ".mgradcheck-dependency"


class BuildSetupError(EnvironmentFailure):
    """This machine cannot build MLX as asked: a tool, a library or a dependency is missing."""


@dataclass(frozen=True)
class Missing:
    """One missing prerequisite and how to get it."""

    what: str
    debian: str
    macos: str

    def line(self) -> str:
        return f"{self.what} (Debian/Ubuntu: {self.debian}; macOS: {self.macos})"


@dataclass(frozen=True)
class Needs:
    """What one commit's build asks of the machine, read from its top-level CMakeLists.txt."""

    compiler: bool = False
    blas: bool = False
    lapack: bool = False

    @classmethod
    def of(cls, repo: Path, sha: str) -> Needs:
        try:
            text = git(repo, "show", f"{sha}:CMakeLists.txt")
        except GitError:
            return cls()  # not built with CMake: nothing native to check
        return cls(True, "find_package(BLAS" in text, "find_package(LAPACK" in text)


def include_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Where a compiler finds headers without being told: MLX's CMake looks in the same places."""
    dirs = [
        Path(p) for key in ("CPATH", "C_INCLUDE_PATH") for p in environ.get(key, "").split(":") if p
    ]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for base in ("/usr/include", "/usr/local/include", "/opt/homebrew/include"):
        dirs.append(Path(base))
        if multiarch:
            dirs.append(Path(base) / str(multiarch))
        dirs.append(Path(base) / "openblas")
    for key in ("BLAS_HOME", "LAPACK_ROOT"):
        if environ.get(key):
            dirs.append(Path(environ[key]) / "include")
    homebrew = ("/usr/local/opt/openblas/include", "/opt/homebrew/opt/openblas/include")
    return [*dirs, *map(Path, homebrew)]


def missing(
    needs: Needs,
    backend: str,
    system: str,
    headers: Sequence[Path] | None = None,
    which: Which = shutil.which,
    environ: Mapping[str, str] = os.environ,
) -> list[Missing]:
    """Every prerequisite of ``needs`` this machine lacks, with how to get it."""
    found: list[Missing] = []
    if which("git") is None:
        found.append(Missing("git", "apt-get install git", "xcode-select --install"))
    if needs.compiler and not any(
        which(c) for c in (environ.get("CXX", ""), "c++", "g++", "clang++") if c
    ):
        found.append(
            Missing("a C++ compiler", "apt-get install build-essential", "xcode-select --install")
        )
    search = list(headers) if headers is not None else include_dirs(environ)

    def header(name: str) -> bool:
        return any((d / name).is_file() for d in search)

    # macOS builds use Accelerate, which comes with the system.
    if system != "Darwin" and needs.blas and not header("cblas.h"):
        found.append(Missing("BLAS (cblas.h)", "apt-get install libopenblas-dev", "nothing"))
    if system != "Darwin" and needs.lapack and not header("lapacke.h"):
        found.append(Missing("LAPACK (lapacke.h)", "apt-get install liblapacke-dev", "nothing"))
    if backend == "cuda" and which("nvcc") is None:
        cuda = Path(environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvcc"
        if not cuda.is_file():
            found.append(
                Missing(
                    "the CUDA toolkit (nvcc)",
                    "apt-get install nvidia-cuda-toolkit, or NVIDIA's CUDA repository",
                    "not available",
                )
            )
    return found


def check(needs: Needs, backend: str, system: str) -> None:
    """Raise one line naming everything missing, before any build starts."""
    if backend == "metal" and system != "Darwin":
        raise BuildSetupError("MLX's Metal backend builds only on macOS; use --backend cpu or cuda")
    lacking = missing(needs, backend, system)
    if lacking:
        raise BuildSetupError(
            "cannot build MLX here: missing " + "; ".join(m.line() for m in lacking)
        )


@dataclass(frozen=True)
class Pin:
    """One dependency MLX's CMake fetches: its FetchContent name, repository and version."""

    name: str
    url: str
    ref: str

    @property
    def variable(self) -> str:
        return f"FETCHCONTENT_SOURCE_DIR_{self.name.upper()}"

    @property
    def repo_name(self) -> str:
        return self.url.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]

    def describe(self) -> str:
        return f"{self.name} {self.ref} ({self.url})"


def parse_pins(text: str) -> list[Pin]:
    """The ``FetchContent_Declare`` blocks of one CMake file that name a git repository and version."""
    pins = []
    for name, body in _DECLARE.findall(text):
        fields = dict(_FIELD.findall(body))
        url, ref = fields.get("GIT_REPOSITORY"), fields.get("GIT_TAG")
        if url is None and "URL" in fields:
            found = _GITHUB_URL.match(fields["URL"])
            if found:
                url, ref = found.group(1), found.group(2) or found.group(3)
        if url and ref and "$" not in url + ref:  # a CMake variable cannot be resolved here
            pins.append(Pin(name, url, ref))
    return pins


def pins(repo: Path, sha: str) -> list[Pin]:
    """Every dependency the commit's CMake files pin, once each."""
    try:
        listed = git(
            repo, "grep", "-l", "FetchContent_Declare", sha, "--", "*CMakeLists.txt", "*.cmake"
        )
    except GitError:
        return []  # no match (git grep exits 1), or no CMake at all
    found: dict[str, Pin] = {}
    for line in listed.splitlines():
        path = line.split(":", 1)[1] if ":" in line else line
        for pin in parse_pins(git(repo, "show", f"{sha}:{path}")):
            found.setdefault(pin.name, pin)
    return list(found.values())


def _clone(directory: Path, *names: str) -> tuple[Path, Path] | None:
    """The first of ``directory/<name>`` that is a clone: (its path, its git directory)."""
    for name in names:
        candidate = directory / name
        if candidate.is_dir():
            try:
                return candidate, git_dir(candidate)
            except UsageError:
                continue
    return None


def _submodules(repo: Path, ref: str) -> list[tuple[str, str, str]]:
    """(path, commit, url) of each submodule of ``ref``."""
    links = [
        line.split(None, 3)
        for line in git(repo, "ls-tree", "-r", ref).splitlines()
        if line.startswith("160000 ")
    ]
    if not links:
        return []
    urls: dict[str, str] = {}
    config = git(
        repo,
        "config",
        "--blob",
        f"{ref}:.gitmodules",
        "--get-regexp",
        r"^submodule\..*\.(path|url)$",
    )
    names: dict[str, str] = {}
    for line in config.splitlines():
        key, _, value = line.partition(" ")
        section, field = key.rsplit(".", 1)
        names.setdefault(section, "")
        if field == "path":
            names[section] = value
        else:
            urls[section] = value
    by_path = {path: urls.get(section, "") for section, path in names.items()}
    return [(path, sha, by_path.get(path, "")) for _, _, sha, path in links]


def provide(pin: Pin, directory: Path) -> Path | None:
    """The dependency's source at its pinned version, exported from ``directory`` into the cache.

    None when ``directory`` holds no clone of it (CMake then fetches it, or says it cannot).
    """
    found = _clone(directory, pin.name, pin.repo_name)
    if found is None:
        return None
    path, clone = found
    dest = cache_root() / "builds" / "deps" / safe_name(pin.name) / safe_name(pin.ref)
    if (dest / _READY).is_file():
        return dest
    try:
        sha = resolve(clone, pin.ref, fetch=False)
    except UsageError:
        raise BuildSetupError(
            f"{path} has no {pin.ref}, which MLX pins for {pin.name} (fetch its tags: git fetch --tags)"
        ) from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        partial.chmod(0o755)  # as in builds: others sharing the cache build with it too
        export(clone, sha, [], partial)
        for where, commit, url in _submodules(clone, sha):
            basename = url.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]
            sub = _clone(directory, basename, Path(where).name)
            if sub is None:
                raise BuildSetupError(
                    f"{pin.name} {pin.ref} needs its submodule {where}: clone {url} into {directory / basename}"
                )
            export(sub[1], commit, [], partial / where)
        (partial / _READY).write_text(f"{pin.describe()}\n", encoding="utf-8")
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def cmake_sources(repo: Path, sha: str, directory: Path | None) -> tuple[dict[str, str], list[Pin]]:
    """``FETCHCONTENT_SOURCE_DIR_*`` for every pin of the commit, and the pins ``directory``
    does not provide.

    Those are set empty: CMake keeps such variables in its cache, and the build
    directory is shared, so one left from an earlier build would hand this
    commit another commit's version of the dependency.
    """
    variables: dict[str, str] = {}
    absent: list[Pin] = []
    for pin in pins(repo, sha):
        path = provide(pin, directory) if directory is not None else None
        if path is None:
            absent.append(pin)
        variables[pin.variable] = str(path) if path is not None else ""
    return variables, absent


# What CMake and git print when a download fails for want of the network.
_OFFLINE = re.compile(
    r"(?i)could not resolve host|couldn't resolve host|unable to access|failed to connect|"
    r"network is unreachable|connection timed out|temporary failure in name resolution"
)


def download_failure(log: str, absent: Sequence[Pin]) -> Pin | None:
    """The dependency a failed build could not download, when the log says so (None: another failure)."""
    if not _OFFLINE.search(log):
        return None
    for pin in absent:
        if pin.url.removesuffix(".git") in log or f"{pin.name}-populate" in log:
            return pin
    return absent[0] if absent else None


def offline_hint(pin: Pin, sha: str, directory: Path | None) -> str:
    where = directory if directory is not None else Path("DIR")
    give = "" if directory is not None else ", and give --mlx-deps DIR"
    return (
        f"MLX at {short(sha)} needs {pin.describe()} and cannot download it (offline?): "
        f"clone it into {where / pin.repo_name}{give}"
    )


__all__ = [
    "BuildSetupError",
    "Missing",
    "Needs",
    "Pin",
    "check",
    "cmake_sources",
    "download_failure",
    "include_dirs",
    "missing",
    "offline_hint",
    "parse_pins",
    "pins",
    "provide",
]
