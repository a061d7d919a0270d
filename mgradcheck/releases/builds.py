"""Wheels of single MLX commits, built here once and kept in the cache under the commit's hash.

MLX publishes no per-commit builds, so a commit-level bisect makes its own.
Under ``cache_root()/builds/``::

    wheels/<target>/<sha>/       the commit's wheel, and build.json (written last, with the rename)
    wheels/<target>/<sha>.failed.json   a commit that does not build: remembered, with its log's tail
    logs/<target>/<sha>.log      the commit's last build output
    work/<target>/src/           one clone, checked out at each commit in turn
    work/<target>/venv/          the build tools: the commit's build-system requirements, ninja
    ccache/                      the compiler cache (unless $CCACHE_DIR names another)
    deps/<name>/<version>/       dependencies taken from --mlx-deps clones (toolchain.py)

``<target>`` is backend, platform and Python (``cpu-linux-x86_64-py3.11``): a
wheel is built for one of each. One work directory per target, one build at a
time in it (a lock), and always the same paths: MLX builds in-tree
(``src/build/temp.*``), ninja then recompiles only the files a checkout
changed, and ccache, whose keys hold absolute paths, hits for files a nearer
commit already compiled. Packaging outputs (``build/lib.*``, ``build/bdist.*``,
egg-info) are removed before each build: kept, they leak other commits' headers
and stubs into the wheel. A wheel is built with ``MLX_BUILD_STAGE`` unset, so
it holds its backend itself; MLX names its version after the commit
(``0.32.0.dev20260101+6335c834c``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.atomic import write_text
from mgradcheck.clock import now
from mgradcheck.errors import EnvironmentFailure
from mgradcheck.paths import cache_root, safe_name
from mgradcheck.releases import toolchain
from mgradcheck.releases.envs import Lock, find_uv, run_logged
from mgradcheck.releases.index import Source, Target
from mgradcheck.releases.pages import wheel_file
from mgradcheck.releases.sources import GitError, git

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SCHEMA = "mgradcheck-build"
BUILT = "build.json"
BUILD_TIMEOUT = 4 * 3600.0
LOG_TAIL = 3000
# Kept out of the build: release pipelines' switches that would split the wheel or rename it.
UNSET = ("MLX_BUILD_STAGE", "PYPI_RELEASE", "DEV_RELEASE", "VIRTUAL_ENV", "PYTHONPATH")
CMAKE_ARGS = {
    "cpu": ("-DMLX_BUILD_METAL=OFF", "-DMLX_BUILD_CUDA=OFF"),
    "cuda": ("-DMLX_BUILD_METAL=OFF", "-DMLX_BUILD_CUDA=ON"),
    "metal": (),
}
_STEP = re.compile(r"^\s*\[(\d+)/(\d+)\]\s*(.*)$")
_ERROR = (
    re.compile(r"\b(?:fatal )?error:"),
    re.compile(r"^CMake Error"),
    re.compile(r"^FAILED:"),
    re.compile(r"^ERROR:"),
)
Status = Callable[[str], None]


def default_jobs() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class BuildOptions:
    """Where commits come from and how they are built."""

    repo: Path  # the git directory of MLX's history (releases.sources.repository)
    deps: Path | None = None  # clones of the dependencies MLX's CMake fetches, for offline builds
    jobs: int = field(default_factory=default_jobs)
    retry_failed: bool = False
    timeout: float = BUILD_TIMEOUT


@dataclass(frozen=True)
class Built:
    """A commit's wheel, and what building it took (nothing when it was in the cache)."""

    sha: str
    wheel: Path
    version: Version
    seconds: float = 0.0
    steps: int = 0  # build steps run (ninja's count): how much the caches saved
    cached: bool = True


class BuildFailed(EnvironmentFailure):
    """The commit does not build here: a bisect routes around it (Unknown)."""

    def __init__(self, sha: str, cause: str, remembered: bool, seconds: float = 0.0) -> None:
        self.sha = sha
        self.cause = cause
        self.remembered = remembered
        self.seconds = seconds  # spent building now (0: a failure remembered from before)
        again = " (remembered; --retry-failed tries again)" if remembered else ""
        super().__init__(f"building {sha[:9]} failed: {cause}{again}")


def target_key(target: Target) -> str:
    return safe_name(f"{target.backend}-{target.platform}-py{target.python}")


def builds_root() -> Path:
    return cache_root() / "builds"


def _wheel_dir(target: Target, sha: str) -> Path:
    return builds_root() / "wheels" / target_key(target) / sha


def _failed_file(target: Target, sha: str) -> Path:
    return builds_root() / "wheels" / target_key(target) / f"{sha}.failed.json"


def log_path(target: Target, sha: str) -> Path:
    return builds_root() / "logs" / target_key(target) / f"{sha}.log"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def built(target: Target, sha: str) -> Built | None:
    """The commit's wheel from the cache, or None."""
    directory = _wheel_dir(target, sha)
    record = _read(directory / BUILT)
    if record is None or not (directory / str(record.get("wheel"))).is_file():
        return None
    return Built(sha, directory / record["wheel"], Version(record["version"]))


def cached_commits(target: Target, prefix: str) -> list[str]:
    """Full hashes of the built commits that start with ``prefix``."""
    root = builds_root() / "wheels" / target_key(target)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.name.startswith(prefix) and p.is_dir())


def remembered_failure(target: Target, sha: str) -> str | None:
    """Why the commit did not build last time, or None."""
    record = _read(_failed_file(target, sha))
    return str(record.get("cause", "")) if record is not None else None


def cause(log: str) -> str:
    """The line of a build's output that says why it failed."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for pattern in _ERROR:
        found = next((line for line in lines if pattern.search(line)), None)
        if found is not None:
            return found if len(found) <= 240 else found[:239] + "…"
    return lines[-1][:240] if lines else "no output"


def _tail(path: Path, size: int = LOG_TAIL) -> str:
    try:
        return path.read_bytes()[-size:].decode("utf-8", "replace")
    except OSError:
        return ""


def requirements(repo: Path, sha: str, needs: toolchain.Needs) -> list[str]:
    """The commit's build-system requirements (they change across MLX's history), plus ninja."""
    try:
        text = git(repo, "show", f"{sha}:pyproject.toml")
        requires = tomllib.loads(text).get("build-system", {}).get("requires")
    except (GitError, tomllib.TOMLDecodeError):
        requires = None
    found = [str(r) for r in requires] if isinstance(requires, list) else ["setuptools>=40.8.0"]
    return [*found, "ninja"] if needs.compiler else found


def _checkout(repo: Path, sha: str, src: Path) -> None:
    """``src`` at ``sha``: untracked files gone but for MLX's in-tree build directory's objects."""
    local = src / ".git"
    if not (local / "HEAD").is_file():
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        git(local, "init", "--quiet", work_tree=src)
    try:
        git(local, "cat-file", "-e", f"{sha}^{{commit}}")
    except GitError:
        git(local, "fetch", "--quiet", "--no-tags", str(repo), sha)
    git(local, "checkout", "--quiet", "--force", "--detach", sha, work_tree=src)
    git(local, "clean", "-ffdxq", "-e", "/build/", work_tree=src)
    build = src / "build"
    if build.is_dir():
        for stale in build.iterdir():
            if stale.name.startswith(("lib.", "bdist.")):
                shutil.rmtree(stale, ignore_errors=True)


def _tools(venv: Path, wanted: list[str], target: Target, source: Source, log: Path) -> list[str]:
    """The build tools' environment, made once and updated when a commit asks for other tools;
    return the command that builds a wheel with them (``uv build``, else ``pip wheel``)."""
    uv = find_uv()
    stamp = venv / "mgradcheck-requires.json"
    python = str(venv / "bin" / "python")
    if not Path(python).exists():
        shutil.rmtree(venv, ignore_errors=True)
        make = (
            [uv, "venv", "--quiet", "--python", target.interpreter, str(venv)]
            if uv is not None
            else [target.interpreter, "-m", "venv", str(venv)]
        )
        _step(make, log, venv.parent, "making the build tools' environment")
    if wanted and not (stamp.is_file() and json.loads(stamp.read_text()) == wanted):
        install = [*source.installer_args(), *wanted]
        argv = (
            [uv, "pip", "install", "--python", python, *install]
            if uv is not None
            else [python, "-m", "pip", "install", "--disable-pip-version-check", *install]
        )
        _step(argv, log, venv.parent, f"installing the build tools ({', '.join(wanted)})")
        write_text(stamp, json.dumps(wanted))
    # No build isolation: the tools above, and the same paths every time (see the module's doc).
    if uv is not None:
        return [uv, "build", "--wheel", "--no-build-isolation", "--python", python, "--out-dir"]
    return [
        python,
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-build-isolation",
        "--no-deps",
        "--no-index",
        "-w",
    ]


def _step(argv: list[str], log: Path, cwd: Path, what: str) -> None:
    if run_logged(argv, log, cwd, 1800.0, None) != 0:
        raise toolchain.BuildSetupError(f"{what} failed: {cause(_tail(log))} (log: {log})")


def _environment(
    target: Target, venv: Path, jobs: int, sources: Mapping[str, str], needs: toolchain.Needs
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    cmake = [*CMAKE_ARGS.get(target.device, ()), *(f"-D{k}={v}" for k, v in sources.items())]
    if any(" " in arg for arg in cmake):  # MLX's setup.py splits CMAKE_ARGS on spaces
        raise toolchain.BuildSetupError(
            f"the cache path holds a space, which MLX's build cannot take: {builds_root()}"
        )
    env["CMAKE_ARGS"] = " ".join([*cmake, env.get("CMAKE_ARGS", "")]).strip()
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs)
    if needs.compiler:
        env.setdefault("CMAKE_GENERATOR", "Ninja")
    env.setdefault("CCACHE_DIR", str(builds_root() / "ccache"))
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


class _Steps:
    """Reads the build's output as it comes: ninja's ``[n/m]`` lines become progress."""

    def __init__(self, label: str, status: Status) -> None:
        self.label, self.status = label, status
        self.total = 0
        self.shown = 0.0

    def __call__(self, line: str) -> None:
        found = _STEP.match(line)
        if found is None:
            if "Created wheel for" in line or line.startswith("Successfully built"):
                self.status(f"{self.label}: packaging the wheel")
            return
        self.total = int(found.group(2))
        if time.monotonic() - self.shown >= 0.5:  # a terminal needs no more than two a second
            self.shown = time.monotonic()
            what = found.group(3).rsplit("/", 1)[-1]
            self.status(f"{self.label}: [{found.group(1)}/{found.group(2)}] {what}")


def build(
    sha: str,
    target: Target,
    options: BuildOptions,
    source: Source,
    status: Status | None = None,
    cancel: threading.Event | None = None,
) -> Built:
    """The commit's wheel: from the cache, else built here (and kept).

    Raises :class:`BuildFailed` when the commit does not build (remembered
    unless it looks like the network's fault), and
    :class:`~mgradcheck.releases.toolchain.BuildSetupError` when this machine
    cannot build MLX at all (a missing tool or dependency): that is no answer
    about the commit.
    """
    say = status or (lambda text: None)
    found = built(target, sha)
    if found is not None:
        return found
    failure = remembered_failure(target, sha)
    if failure is not None and not options.retry_failed:
        raise BuildFailed(sha, failure, remembered=True)
    needs = toolchain.Needs.of(options.repo, sha)
    toolchain.check(needs, target.device, target.system)
    key = target_key(target)
    work = builds_root() / "work" / key
    lock = Lock(f"build-{key}")
    try:
        lock.acquire(
            exclusive=True, on_wait=lambda: say(f"waiting for another mgradcheck's build ({key})")
        )
        found = built(target, sha)  # built by the one we waited for
        if found is not None:
            return found
        return _build(sha, target, options, source, needs, work, say, cancel)
    finally:
        lock.close()


def _build(
    sha: str,
    target: Target,
    options: BuildOptions,
    source: Source,
    needs: toolchain.Needs,
    work: Path,
    say: Status,
    cancel: threading.Event | None,
) -> Built:
    started = time.monotonic()
    label = f"building {sha[:9]}"
    log = log_path(target, sha)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    say(f"{label}: checking out")
    _checkout(options.repo, sha, work / "src")
    wheel_command = _tools(
        work / "venv", requirements(options.repo, sha, needs), target, source, log
    )
    say(f"{label}: preparing dependencies")
    sources, absent = toolchain.cmake_sources(options.repo, sha, options.deps)
    env = _environment(target, work / "venv", options.jobs, sources, needs)
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv = [*wheel_command, str(out), str(work / "src")]
    say(f"{label}: configuring")
    steps = _Steps(label, say)
    code = run_logged(argv, log, work / "src", options.timeout, cancel, env, steps)
    if code != 0:
        if code < 0:
            stopped = cancel is not None and cancel.is_set()
            why = "stopped" if stopped else f"took more than {options.timeout:g}s"
            raise BuildFailed(sha, why, False, time.monotonic() - started)
        text = log.read_text(encoding="utf-8", errors="replace")
        offline = toolchain.download_failure(text, absent)
        if offline is not None:
            raise toolchain.BuildSetupError(toolchain.offline_hint(offline, sha, options.deps))
        why = cause(text)
        record = {
            "schema": SCHEMA,
            "sha": sha,
            "cause": why,
            "when": now(),
            "log": str(log),
            "log_tail": _tail(log),
        }
        _failed_file(target, sha).parent.mkdir(parents=True, exist_ok=True)
        write_text(_failed_file(target, sha), json.dumps(record, indent=1))
        raise BuildFailed(sha, why, True, time.monotonic() - started)
    wheels = [p for p in out.iterdir() if (w := wheel_file(p.name)) and w.project == "mlx"]
    if len(wheels) != 1:
        raise BuildFailed(sha, f"the build made {len(wheels)} mlx wheels, not one", False)
    seconds = time.monotonic() - started
    return _keep(sha, target, wheels[0], seconds, steps.total)


def _keep(sha: str, target: Target, wheel: Path, seconds: float, steps: int) -> Built:
    """Move the wheel into the cache; its directory appears whole (a rename) or not at all."""
    found = wheel_file(wheel.name)
    assert found is not None  # checked by the caller
    dest = _wheel_dir(target, sha)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{sha}.", dir=dest.parent))
    try:
        partial.chmod(0o755)  # mkdtemp's 0700 would hide the wheel from others sharing the cache
        shutil.move(str(wheel), partial / wheel.name)
        record = {
            "schema": SCHEMA,
            "sha": sha,
            "version": str(found.version),
            "wheel": wheel.name,
            "seconds": round(seconds, 1),
            "steps": steps,
            "target": target_key(target),
            "built": now(),
        }
        write_text(partial / BUILT, json.dumps(record, indent=1))
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    _failed_file(target, sha).unlink(missing_ok=True)
    return Built(sha, dest / wheel.name, found.version, seconds, steps, cached=False)


__all__ = [
    "BuildFailed",
    "BuildOptions",
    "Built",
    "build",
    "builds_root",
    "built",
    "cached_commits",
    "cause",
    "log_path",
    "remembered_failure",
    "requirements",
    "target_key",
]
