"""Cached virtual environments, one per MLX release, backend and Python.

Each lives in ``cache_root()/envs/<name>/``::

    mgradcheck-env.json   ours, written before anything else: prune deletes only such directories
    venv/                 the environment
    kernels/              its compiled CPU kernels, its own and kept warm (mgradcheck.run.kernels)
    install.log           the installer's output
    failed.json           a failed install, remembered with its log tail until --retry-failed
    complete.json         written last: an environment without it is half-built and is rebuilt

An environment whose MLX no longer matches its installer's RECORD (a file
missing or cut short: :mod:`mgradcheck.envs.record`) is damaged, and is
rebuilt as a half-built one is; one damaged while in use fails the command
that used it, so that nothing it ran there is stored as a result.

The name holds the version, backend and Python, and a hash of everything else
that shapes the environment (index, wheel directory, installer, interpreter,
packages, what ``--with`` adds). One lock file per environment
(``envs/.locks/<name>.lock``, never deleted) serialises building and removing it: held exclusively while building,
shared while in use (for as long as anything runs in it), so two commands
sharing the cache never corrupt it and a prune never removes one in use.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.atomic import write_text
from mgradcheck.clock import now
from mgradcheck.envs import record
from mgradcheck.envs.cuda import check_driver
from mgradcheck.envs.logged_process import log_tail, run_logged
from mgradcheck.errors import EnvironmentFailure
from mgradcheck.index.installable import Source, Target
from mgradcheck.paths import cache_error, cache_root, make_dir, safe_name

FORMAT = 1
SCHEMA = "mgradcheck-env"
MARKER = "mgradcheck-env.json"
COMPLETE = "complete.json"
FAILED = "failed.json"
LOG = "install.log"
INSTALL_TIMEOUT = 1800.0
# A failure that looks like the network's is not remembered: it may work next time.
TRANSIENT = re.compile(
    r"(?i)connect|timed? ?out|dns|network|temporar|unreachable|reset by peer|SSL"
)


class Installer(enum.Enum):
    UV = "uv"
    PIP = "pip"


def find_uv() -> str | None:
    """The uv binary of the ``uv`` package (the ``mgradcheck[uv]`` extra), else one on PATH."""
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def default_installer() -> Installer:
    return Installer.UV if find_uv() else Installer.PIP


class EnvError(EnvironmentFailure):
    """An environment could not be made or used."""


class InstallFailed(EnvError):
    def __init__(
        self, version: Version, tail: str, remembered: bool, extras: tuple[str, ...] = ()
    ) -> None:
        self.version = version
        self.tail = tail
        self.remembered = remembered
        again = " (remembered; --retry-failed tries again)" if remembered else ""
        # The installer's own line names what clashed (uv: 'Because you require mlx==A and ...').
        beside = f" with {', '.join(extras)}" if extras else ""
        super().__init__(f"installing mlx {version}{beside} failed: {cause(tail)}{again}")


def cause(log: str) -> str:
    """The line of an installer's log that says why it failed (uv: 'Because ...'; pip: 'ERROR: ...').

    uv's resolver puts its reason (the requirements that clash) after its 'error:' line, boxed
    or, in newer releases, as 'cause: Because ...': that reason's first sentence is the line."""
    lines = [
        line.strip(" \u00d7\u2570\u2500\u25b6\u2502").removeprefix("cause: ")
        for line in log.splitlines()
    ]  # uv's box drawing
    lines = [line for line in lines if line]
    start = next((i for i, line in enumerate(lines) if line.startswith("Because")), None)
    if start is None:
        found = next((line for line in lines if line.startswith(("ERROR:", "error:"))), None)
    else:  # uv wraps its reason at the terminal's width (80 columns in a pipe): one sentence
        found = lines[start]
        for more in lines[start + 1 : start + 8]:
            if found.endswith("."):
                break
            found += " " + more
    text = found or (lines[-1] if lines else "no output")
    return text if len(text) <= 240 else text[:239] + "…"


@dataclass(frozen=True)
class EnvSpec:
    """Everything that shapes one environment."""

    version: Version
    target: Target
    source: Source
    installer: Installer
    packages: tuple[str, ...] = ("numpy",)
    # A wheel built here from one commit (mgradcheck.builds): installed from its file, and
    # self-contained (its backend inside), so no extra names a companion package.
    wheel: Path | None = None
    extras: tuple[str, ...] = ()  # --with: what the user's tests import beside MLX

    def requirements(self) -> list[str]:
        mlx = (
            f"mlx @ {self.wheel.as_uri()}"
            if self.wheel is not None
            else self.target.requirement(self.version)
        )
        return [mlx, *self.packages, *self.extras]

    def key(self) -> dict[str, Any]:
        key = {
            "format": FORMAT,
            "mlx": str(self.version),
            "backend": self.target.backend,
            "python": self.target.python,
            "interpreter": self.target.interpreter,
            "installer": self.installer.value,
            "packages": list(self.packages),
            **self.source.key(),
        }
        if self.wheel is not None:  # only then, so that every release keeps its environment's name
            key["wheel"] = str(self.wheel)
        if self.extras:  # likewise
            key["with"] = list(self.extras)
        return key

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.key(), sort_keys=True).encode()).hexdigest()[:10]

    @property
    def name(self) -> str:
        return safe_name(
            f"mlx-{self.version}-{self.target.backend}-py{self.target.python}-{self.digest}"
        )

    def commands(self, venv: Path, uv: str | None) -> list[list[str]]:
        """The argv lists that build the environment (no shell anywhere)."""
        python = str(venv / "bin" / "python")
        install = [*self.source.installer_args(), *self.requirements()]
        if self.installer is Installer.UV:
            if uv is None:
                raise EnvError("uv is not available; use --installer pip")
            return [
                [uv, "venv", "--quiet", "--python", self.target.interpreter, str(venv)],
                [uv, "pip", "install", "--python", python, *install],
            ]
        return [
            [self.target.interpreter, "-m", "venv", str(venv)],
            [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *install],
        ]


def envs_root() -> Path:
    root = cache_root() / "envs"
    make_dir(root / ".locks")
    return root


class Lock:
    """An flock on one environment's lock file; exclusive to build or remove, shared to use."""

    def __init__(self, name: str) -> None:
        self.path = envs_root() / ".locks" / f"{name}.lock"
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a read-only cache that already holds environments
            raise cache_error(
                self.path, f"cannot open {self.path}: {exc.strerror or exc}"
            ) from None

    def acquire(self, exclusive: bool, on_wait: Callable[[], None] | None = None) -> None:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(self.fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(self.fd, mode)

    def try_acquire(self) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        os.close(self.fd)  # releases the lock


@dataclass(frozen=True)
class ReleaseEnv:
    """A built environment, ready to run entries in."""

    spec: EnvSpec
    path: Path
    reused: bool
    seconds: float = 0.0

    @property
    def python(self) -> str:
        return str(self.path / "venv" / "bin" / "python")

    @property
    def kernels(self) -> Path:
        return self.path / "kernels"


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def is_ready(path: Path, digest: str | None = None) -> bool:
    """Complete, built for this spec, and not damaged since."""
    done = read_json(path / COMPLETE)
    if done is None or (digest is not None and done.get("digest") != digest):
        return False
    return damage(path) is None


def damage(path: Path) -> str | None:
    """What is wrong with an environment's interpreter (its base Python may be gone) or its MLX."""
    if not os.path.exists(path / "venv" / "bin" / "python"):
        return "its interpreter is gone"
    return record.check(path / "venv")


def rebuilding(spec: EnvSpec) -> str | None:
    """Why the complete environment of ``spec`` is to be built again (what damaged it), or None."""
    path = envs_root() / spec.name
    return damage(path) if read_json(path / COMPLETE) is not None else None


def needs_install(spec: EnvSpec, retry_failed: bool = False) -> bool:
    """Whether :func:`using` would run the installer (a remembered failure is not retried)."""
    path = envs_root() / spec.name
    return not is_ready(path, spec.digest) and (retry_failed or not (path / FAILED).exists())


def _installed_version(python: str) -> str | None:
    """The mlx the environment reports, read from its metadata (no MLX import, so it is quick)."""
    code = "import importlib.metadata as m; print(m.version('mlx'))"
    try:
        done = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _build(spec: EnvSpec, path: Path, cancel: threading.Event | None) -> float:
    """Build into ``path`` (our marker already written); return seconds taken, or raise InstallFailed."""
    started = time.monotonic()
    log = path / LOG
    log.unlink(missing_ok=True)
    # A half-built environment from an earlier attempt that was killed.
    shutil.rmtree(path / "venv", ignore_errors=True)
    for argv in spec.commands(path / "venv", find_uv()):
        code = run_logged(argv, log, path, INSTALL_TIMEOUT, cancel)
        if code != 0:
            tail = log_tail(log)
            remembered = code > 0 and not TRANSIENT.search(tail)
            if remembered:
                failure = {
                    "schema": SCHEMA,
                    "mlx": str(spec.version),
                    "returncode": code,
                    "when": now(),
                    "command": argv,
                    "log_tail": tail,
                }
                write_text(path / FAILED, json.dumps(failure, indent=1))
            raise InstallFailed(spec.version, tail, remembered, spec.extras)
    found = _installed_version(str(path / "venv" / "bin" / "python"))
    if found is None or Version(found) != spec.version:
        raise InstallFailed(
            spec.version, f"the environment holds mlx {found}, not {spec.version}", False
        )
    # Once, when the environment is made: each later use compares only the sizes.
    problem = record.check(path / "venv", hashes=True)
    if problem is not None:
        # uv links the files of its cache into the environment: one damaged there comes back.
        hint = "; 'uv cache clean mlx' clears uv's copy" if spec.installer is Installer.UV else ""
        raise InstallFailed(
            spec.version, f"the installed mlx does not match its RECORD: {problem}{hint}", False
        )
    return time.monotonic() - started


@contextlib.contextmanager
def using(
    spec: EnvSpec,
    retry_failed: bool = False,
    on_wait: Callable[[], None] | None = None,
    cancel: threading.Event | None = None,
) -> Iterator[ReleaseEnv]:
    """The environment for ``spec``, built first if needed (or rebuilt, damaged), held
    (shared lock) while in use.

    A CUDA build is refused first, in one line, where the driver cannot run it.
    Raises :class:`EnvError` on leaving when the environment was damaged while in
    use: what ran in it says nothing about the release.
    """
    check_driver(spec.target.backend)
    path = envs_root() / spec.name
    lock = Lock(spec.name)
    try:
        while True:
            lock.acquire(exclusive=True, on_wait=on_wait)
            reused = is_ready(path, spec.digest)
            seconds = 0.0
            if not reused:
                failed = read_json(path / FAILED)
                if failed is not None and not retry_failed:
                    raise InstallFailed(
                        spec.version, str(failed.get("log_tail", "")), True, spec.extras
                    )
                path.mkdir(parents=True, exist_ok=True)
                (path / FAILED).unlink(missing_ok=True)
                (path / COMPLETE).unlink(missing_ok=True)
                marker = {
                    "schema": SCHEMA,
                    "name": spec.name,
                    "digest": spec.digest,
                    "spec": spec.key(),
                    "created": now(),
                }
                write_text(path / MARKER, json.dumps(marker, indent=1))
                seconds = _build(spec, path, cancel)
                (path / "kernels").mkdir(exist_ok=True)
                write_text(
                    path / COMPLETE,
                    json.dumps({**marker, "seconds": round(seconds, 2), "completed": now()}),
                )
            # Let others use it too, but not remove it. flock(2) drops the exclusive lock
            # before taking the shared one, so a prune can remove it in between: build again.
            lock.acquire(exclusive=False)
            if is_ready(path, spec.digest):
                break
        yield ReleaseEnv(spec, path, reused, seconds)
        problem = damage(path)
        if problem is not None:
            raise EnvError(
                f"the environment of mlx {spec.version} was damaged while in use ({problem}): "
                "what ran in it says nothing about the release"
            )
    finally:
        lock.close()
