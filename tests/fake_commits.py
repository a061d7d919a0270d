"""A tiny MLX-like git history whose build writes fake MLX wheels, for commit-level bisects offline.

Each commit holds a PEP 517 backend standing in for MLX's ``setup.py``: it
names its wheel as MLX's own builds are named (``1.3.0.dev20260101+<hash>``,
the hash from ``git rev-parse`` in the checkout), prints ninja-like
``[n/m]`` lines for the sources it has not compiled before (objects are kept
in ``build/temp.fake``, as MLX keeps them in ``build/temp.*``), packs what
gathered in ``build/lib.fake`` (where MLX's install step puts headers and
stubs) and fails like a compiler where the commit has a ``BROKEN`` file. The
wheel's ``mlx.core.FIXED`` says whether the commit has the fake bug fixed. With
``$FAKE_BUILD_PIDFILE`` set, a build starts a "compiler" in a process group of its
own (as ninja does), writes both pids there and takes ten minutes.

History, oldest first (``HISTORY``): tag v1.2.0, the bug; a broken build at 3;
the fix at 4 (#104); the bug back at 6 (#106) and fixed again at 7; tag v1.3.0.
The fake releases 1.2.0 and 1.3.0 (tests/fake_mlx.py) agree with the tags.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BACKEND = """\
'''The fake MLX build: a PEP 517 backend (see tests/fake_commits.py).'''
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, @ROOT@)
from tests.fake_mlx import CORE, write_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if Path("BROKEN").exists():
        print("src/kernels.cpp:3:1: error: expected ';' before '}' token", flush=True)
        raise SystemExit(1)
    objects = Path("build/temp.fake")
    objects.mkdir(parents=True, exist_ok=True)
    wanted = [objects / (hashlib.sha256(s.read_bytes()).hexdigest() + ".o")
              for s in sorted(Path("src").glob("*.cpp"))]
    stale = [o for o in wanted if not o.exists()]
    for i, obj in enumerate(stale, 1):
        print("[%d/%d] Building CXX object %s" % (i, len(stale), obj.name), flush=True)
        obj.write_bytes(b"")
    if os.environ.get("FAKE_BUILD_PIDFILE"):  # a long build, for tests that stop one
        # A "compiler" in a process group of its own, as ninja starts them.
        compiler = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                    preexec_fn=lambda: os.setpgid(0, 0))
        pids = "%d %d" % (os.getpid(), compiler.pid)
        Path(os.environ["FAKE_BUILD_PIDFILE"] + ".part").write_text(pids)
        os.rename(os.environ["FAKE_BUILD_PIDFILE"] + ".part", os.environ["FAKE_BUILD_PIDFILE"])
        time.sleep(600)
    short = subprocess.run(["git", "rev-parse", "--short=9", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
    version = Path("VERSION").read_text().strip() + ".dev20260101+" + short
    lib = Path("build/lib.fake")
    lib.mkdir(parents=True, exist_ok=True)
    (lib / ("stub_" + short + ".pyi")).write_text("")
    files = {"mlx/" + p.name: p.read_bytes() for p in lib.iterdir()}
    fixed = Path("FIXED").read_text().strip() == "yes"
    core = CORE.format(version=version) + "FIXED = %r\\n" % fixed
    files.update({"mlx/__init__.py": b"", "mlx/core.py": core.encode()})
    return write_wheel(Path(wheel_directory), "mlx", version, files).name
"""

PYPROJECT = """\
[build-system]
requires = []
build-backend = "fakebuild"
backend-path = ["."]
"""


@dataclass(frozen=True)
class Change:
    subject: str
    fixed: bool
    version: str = "1.3.0"
    broken: bool = False
    tag: str | None = None


HISTORY = (
    Change("Release 1.2.0", fixed=False, version="1.2.0", tag="v1.2.0"),
    Change("Bump the version to 1.3.0 (#101)", fixed=False),
    Change("Tidy the docs (#102)", fixed=False),
    Change("Refactor the kernels (#103)", fixed=False, broken=True),
    Change("Fix the jvp of where (#104)", fixed=True),
    Change("Speed up conv (#105)", fixed=True),
    Change("Rewrite select (#106)", fixed=False),
    Change("Fix select again (#107)", fixed=True),
    Change("Release 1.3.0", fixed=True, tag="v1.3.0"),
)
FIX = 4  # the first commit with the fix (after the release 1.2.0)
BROKEN_AT = 3
REGRESSION = 6


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@dataclass(frozen=True)
class FakeHistory:
    path: Path  # the work tree (its .git is the repository)
    shas: tuple[str, ...]  # oldest first, one per HISTORY item


def make_history(path: Path) -> FakeHistory:
    """The fake MLX repository at ``path``, one commit per ``HISTORY`` item on ``main``."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "Fake Maintainer"), ("user.email", "fake@example.invalid")):
        git(path, "config", key, value)
    (path / "fakebuild.py").write_text(BACKEND.replace("@ROOT@", repr(str(ROOT))))
    (path / "pyproject.toml").write_text(PYPROJECT)
    (path / "src").mkdir()
    shas = []
    for number, change in enumerate(HISTORY):
        (path / "VERSION").write_text(f"{change.version}\n")
        (path / "FIXED").write_text("yes\n" if change.fixed else "no\n")
        (path / "src" / f"file{number % 3}.cpp").write_text(f"// {change.subject}\n")
        broken = path / "BROKEN"
        if change.broken:
            broken.write_text("")
        else:
            broken.unlink(missing_ok=True)
        git(path, "add", "--all")
        git(path, "commit", "--quiet", "-m", change.subject)
        if change.tag:
            git(path, "tag", change.tag)
        shas.append(git(path, "rev-parse", "HEAD"))
    return FakeHistory(path, tuple(shas))


def gone(pid: int, wait: float = 10.0) -> bool:
    """Whether the process has ended (a zombie waiting for a reaper counts as ended)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


@dataclass(frozen=True)
class Stopped:
    returncode: int
    stdout: str
    stderr: str
    builder_gone: bool  # the build, and the compiler in a group of its own, went with mgradcheck


def ctrl_c_during_a_build(args: list[str], scratch: Path) -> Stopped:
    """Run ``mgradcheck ARGS`` in a real process, press Ctrl-C (SIGINT) while its first build
    runs (one that would take ten minutes), and say how it ended."""
    pidfile = scratch / "build.pid"
    env = {**os.environ, "FAKE_BUILD_PIDFILE": str(pidfile)}
    child = subprocess.Popen(
        [sys.executable, "-m", "mgradcheck", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not pidfile.exists() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.1)
    if not pidfile.exists():
        out, err = child.communicate(timeout=60)
        raise AssertionError(f"no build started: {out}{err}")
    pids = [int(pid) for pid in pidfile.read_text().split()]
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    return Stopped(child.returncode, out, err, all(gone(pid) for pid in pids))
