"""Reliability: nothing lost under interrupts, concurrent commands, full disks and hostile input.

Interrupts here are real signals to a real ``python -m mgradcheck`` while it installs a
release (a stand-in for uv that hangs, ignoring SIGINT and SIGTERM, with a grandchild) or
runs a bisect probe (an entry that waits for the test); two commands share one cache as
real processes. The runner's own faults (crashes, hangs, floods, grandchildren) are in
test_runner.py, loader fuzzing in test_fuzz_loader.py, interrupts of a plain ``run`` in
test_cli.py. Readiness is always a file the blocked process writes, never a sleep.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

import mgradcheck
from mgradcheck.cli import cli
from mgradcheck.corpus.loader import load
from mgradcheck.envs import inventory, venvs
from mgradcheck.paths import cache_root
from mgradcheck.releases.store import StoredRuns
from mgradcheck.reports import json_report
from tests import builders, fake_mlx
from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
PACKAGE = Path(mgradcheck.__file__).parent
RELEASES = str(fake_mlx.FIXTURES)
WAIT = 180.0  # for anything a loaded 2-core machine might be slow at; never a timing assertion
# An earlier report: a file that is not one is never replaced (tests/test_isolation.py).
OLD = '{"schema": "mgradcheck-report", "note": "a good report from an earlier run"}\n'


def source(wheels: Path) -> list[str]:
    return ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]


# --- processes -------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that never comes counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def survivors(pids: list[int]) -> list[int]:
    """The pids still running once the killing had time to land (empty when all are gone)."""
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


class Mgradcheck:
    """``python -m mgradcheck ARGS`` in its own session, its output in files (no pipe to fill)."""

    def __init__(self, args: list[str], logs: Path, extra_env: dict[str, str]) -> None:
        logs.mkdir(parents=True, exist_ok=True)
        self.err = logs / "stderr"
        with (logs / "stdout").open("wb") as out, self.err.open("wb") as err:
            self.process = subprocess.Popen(
                [*MGRADCHECK, *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env={**os.environ, **extra_env},
                start_new_session=True,
            )

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_for(self, path: Path) -> str:
        """The content of ``path`` once it appears; fails if mgradcheck exits first."""
        deadline = time.monotonic() + WAIT
        while not path.exists():
            if self.process.poll() is not None:
                pytest.fail(f"exited {self.process.returncode} before {path.name}:\n{self.stderr}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {path.name} after {WAIT:g}s:\n{self.stderr}")
            time.sleep(0.05)
        return path.read_text()

    def finish(self) -> int:
        return self.process.wait(WAIT)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)


Launch = Callable[..., Mgradcheck]


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Launch]:
    """Start mgradcheck commands; whatever a failing test left running is killed afterwards."""
    started: list[Mgradcheck] = []

    def start(args: list[str], extra_env: dict[str, str] | None = None) -> Mgradcheck:
        command = Mgradcheck(args, tmp_path / f"logs-{len(started)}", extra_env or {})
        started.append(command)
        return command

    yield start
    for command in started:
        command.kill()
    for ready in tmp_path.glob("*ready"):  # a stand-in's pids, in case mgradcheck left them
        for pid in filter(alive, map(int, ready.read_text().split())):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def mgradcheck_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=WAIT, check=False
    )


# --- interrupts during an environment install ---------------------------------------------------

# Builds the venv with the real uv, then hangs in 'pip install' like an installer stuck in
# C code: deaf to SIGINT and SIGTERM, with a grandchild that would outlive it.
HANGING_UV = """\
import os, signal, subprocess, sys, time
if sys.argv[1:3] == ["pip", "install"]:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(READY + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {grandchild.pid}")
    os.rename(READY + ".tmp", READY)
    time.sleep(600)
    sys.exit(1)
os.execv(REAL, [REAL, *sys.argv[1:]])
"""


@pytest.fixture
def hanging_uv(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment that makes mgradcheck use the hanging uv, and the file it writes once hanging."""
    real = venvs.find_uv()
    if real is None:
        pytest.skip("needs uv")
    ready = tmp_path / "uv-ready"
    script = tmp_path / "hanging-uv"
    script.write_text(f"#!{sys.executable}\nREADY = {str(ready)!r}\nREAL = {real!r}\n{HANGING_UV}")
    script.chmod(0o755)
    shim = tmp_path / "shim" / "uv"  # venvs.find_uv asks the uv package first
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(f"def find_uv_bin():\n    return {str(script)!r}\n")
    path = os.pathsep.join(p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}, ready


def simple_index(wheels: Path, root: Path) -> str:
    """A PEP 503 file:// index over the fake wheels, for ``run --mlx`` (which takes the index from the environment)."""
    for wheel in sorted(wheels.glob("*.whl")):
        page = root / wheel.name.split("-")[0].replace("_", "-")
        page.mkdir(parents=True, exist_ok=True)
        with (page / "index.html").open("a") as f:
            f.write(f'<a href="{wheel.as_uri()}">{wheel.name}</a>\n')
    return root.as_uri()


def installed_mlx(venv: Path) -> str:
    code = "import importlib.metadata as m; print(m.version('mlx'))"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("command", "sig"),
    [
        ("envs path", signal.SIGINT),
        ("run --mlx", signal.SIGTERM),
        ("bisect", signal.SIGINT),
        ("matrix", signal.SIGTERM),
    ],
)
def test_an_interrupted_install_stops_the_installer_and_is_rebuilt_later(
    command: str,
    sig: signal.Signals,
    fake_wheels: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hanging_uv: tuple[dict[str, str], Path],
    launch: Launch,
) -> None:
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    extra, ready = hanging_uv
    report = tmp_path / "report.json"
    report.write_text(OLD)
    where = source(fake_wheels)
    version = "1.3.0" if command == "bisect" else "1.1.0"  # bisect checks its good end first
    entry = ["fixed-in-1-3", "--corpus", RELEASES, "-q", "--json", str(report)]
    if command == "run --mlx":
        index = simple_index(fake_wheels, tmp_path / "simple")
        extra = {**extra, "UV_INDEX_URL": index}
        where = ["--index-url", index, "--backend", "cpu"]
    args = {
        "envs path": ["envs", "path", version, "-q", *where],
        "run --mlx": ["run", "--mlx", version, *entry],
        "bisect": ["bisect", *entry, "--good", "1.3.0", "--bad", "1.2.0", *where],
        "matrix": ["matrix", *entry, "--versions", f"=={version}", "-j", "1", *where],
    }[command]

    hung = launch(args, extra)
    installer, grandchild = map(int, hung.wait_for(ready).split())
    hung.process.send_signal(sig)
    assert hung.finish() == 128 + sig, hung.stderr
    assert "interrupted" in hung.stderr and "Traceback" not in hung.stderr
    assert survivors([installer, grandchild]) == []

    (env,) = inventory.scan()[0]
    assert (env.version, env.state) == (
        version,
        inventory.EnvState.INCOMPLETE,
    )  # not usable, not "failed"
    assert not (env.path / venvs.COMPLETE).exists() and not (env.path / venvs.FAILED).exists()
    if command == "matrix":
        data = json.loads(report.read_text())  # the partial matrix: what finished (nothing)
        assert data["interrupted"] is True
        assert data["entries"][0]["cells"][version]["outcome"] == "not run"
    elif command != "envs path":
        assert report.read_text() == OLD  # nothing finished: the earlier report stays whole

    again = mgradcheck_run("envs", "path", version, "-q", *where)
    assert again.returncode == 0, again.stderr
    assert Path(again.stdout.strip()) == env.path / "venv"  # the same environment, built anew
    assert venvs.is_ready(env.path) and installed_mlx(env.path / "venv") == version


# --- interrupt during a bisect probe, then resume from the results store -----------------------

WAITING_ENTRY = r"""id: waits-on-1-3
title: Fake bug fixed in fake MLX 1.3 whose run on 1.3 waits for the test
summary: Stops a bisect at a known probe (with a grandchild running); checks mx.__version__ only.
upstream: {report: "https://example.invalid/waits-on-1-3"}
tags: [fixture]
bug: {outcome: fail, match: "broken before 1\\.3", fixed_in: "1.3.0"}
timeout: 300
code: |
  import os, subprocess, sys, time
  if mx.__version__ == "1.3.0" and not os.path.exists(GO):
      grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
      with open(READY + ".tmp", "w") as f:
          f.write(f"{os.getpid()} {grandchild.pid}")
      os.rename(READY + ".tmp", READY)
      while not os.path.exists(GO):
          time.sleep(0.05)
  v = tuple(int(p) for p in mx.__version__.split(".")[:2])
  assert_true(v >= (1, 3), f"broken before 1.3 (this is {mx.__version__})")
"""


def stored_versions(wheels: Path, entry_hash: str) -> set[str]:
    return {v for v in fake_mlx.VERSIONS if fake_mlx.stored(wheels, entry_hash, v)}


def test_an_interrupted_bisect_stops_its_probe_and_resumes_from_the_store(
    fake_wheels: Path, tmp_path: Path, launch: Launch
) -> None:
    go, ready = tmp_path / "go", tmp_path / "probe-ready"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = WAITING_ENTRY.replace("GO", repr(str(go))).replace("READY", repr(str(ready)))
    (corpus / "waits-on-1-3.yaml").write_text(text)
    (entry,) = load([corpus])
    out = tmp_path / "bisect.json"
    out.write_text(OLD)
    args = ["bisect", "waits-on-1-3", "--corpus", str(corpus), "--json", str(out), "-q"]
    args += source(fake_wheels)

    first = launch(args)
    child, grandchild = map(int, first.wait_for(ready).split())
    first.process.send_signal(signal.SIGINT)
    assert first.finish() == 130, first.stderr
    assert "interrupted by SIGINT" in first.stderr and "Traceback" not in first.stderr
    assert survivors([child, grandchild]) == []
    assert out.read_text() == OLD  # no result yet: the old file is left whole
    stored = stored_versions(fake_wheels, entry.content_hash)
    assert {"1.6.0", "1.2.0"} <= stored  # both ends were checked before the search began
    assert "1.3.0" not in stored  # the interrupted probe says nothing and is not kept

    go.touch()
    resumed = mgradcheck_run(*args)
    assert resumed.returncode == 0, resumed.stderr
    data = json.loads(out.read_text())
    assert data["boundary"] == ["1.2.0", "1.3.0"]
    cached = {p["version"] for p in data["probes"] if p["cached"]}
    assert cached == stored  # every probe that finished before ran no second time
    assert "1.3.0" in {p["version"] for p in data["probes"] if not p["cached"]}


# --- two commands on one cache -----------------------------------------------------------------


def assert_cache_whole(cache: Path, judged: set[tuple[str, str]]) -> None:
    """No half-built environment, no temporary file, every stored result readable, none lost."""
    ours, foreign = inventory.scan()
    assert foreign == []
    for env in ours:
        assert env.state in (inventory.EnvState.READY, inventory.EnvState.FAILED), (
            env.path,
            env.state,
        )
        if env.state is inventory.EnvState.READY:
            assert installed_mlx(env.path / "venv") == env.version
        else:
            assert env.version in fake_mlx.BROKEN
    assert list(cache.glob("**/.*.tmp")) == []
    kept = set()
    for path in (cache / "results").glob("*/*.json"):
        key = StoredRuns.from_json(json.loads(path.read_text())).key
        kept.add((key.content_hash, key.release))
    assert judged <= kept


def judged_probes(report: Path) -> set[tuple[str, str]]:
    data = json.loads(report.read_text())
    return {(data["content_hash"], p["version"]) for p in data["probes"] if p["state"] != "unknown"}


def test_two_bisects_at_once_on_one_cache(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launch: Launch
) -> None:
    cache = tmp_path / "cache"  # empty: both must build every environment they probe
    monkeypatch.setenv("MGRADCHECK_CACHE", str(cache))
    args = ["bisect", "fixed-in-1-3", "--corpus", RELEASES, "-q", *source(fake_wheels)]
    reports = [tmp_path / "a.json", tmp_path / "b.json"]
    both = [launch([*args, "--json", str(r)]) for r in reports]
    for command in both:
        assert command.finish() == 0, command.stderr
    first, second = (json.loads(r.read_text()) for r in reports)
    assert first["boundary"] == second["boundary"] == ["1.2.0", "1.3.0"]
    assert_cache_whole(cache, judged_probes(reports[0]) | judged_probes(reports[1]))


def test_a_bisect_while_environments_are_pruned(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launch: Launch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MGRADCHECK_CACHE", str(cache))
    report = tmp_path / "bisect.json"
    args = ["bisect", "broke-in-1-4", "--corpus", RELEASES, "-q", "--json", str(report)]
    bisecting = launch([*args, *source(fake_wheels)])
    prunes = 0
    while bisecting.process.poll() is None:
        pruned = mgradcheck_run("envs", "prune", "--all")
        assert pruned.returncode == 0 and "Traceback" not in pruned.stderr, pruned.stderr
        prunes += 1
    assert bisecting.finish() == 0, bisecting.stderr
    assert prunes >= 1
    assert json.loads(report.read_text())["boundary"] == ["1.3.0", "1.4.0"]
    assert_cache_whole(cache, judged_probes(report))


def test_an_environment_pruned_while_its_lock_changes_hands_is_built_again(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flock(2) drops an exclusive lock before taking the shared one; a prune may run in between."""
    import fcntl

    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    spec = fake_mlx.settings(fake_wheels).spec(Version("1.0.0"))
    acquire, pruned = venvs.Lock.acquire, list[inventory.CachedEnv]()

    def acquire_with_a_prune_between(
        self: venvs.Lock, exclusive: bool, on_wait: Callable[[], None] | None = None
    ) -> None:
        if not exclusive and not pruned:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            pruned.extend(inventory.prune(everything=True).removed)
        acquire(self, exclusive, on_wait)

    monkeypatch.setattr(venvs.Lock, "acquire", acquire_with_a_prune_between)
    with venvs.using(spec) as env:
        assert [e.version for e in pruned] == ["1.0.0"]  # the prune did remove it
        assert installed_mlx(env.path / "venv") == "1.0.0"  # and what is handed out is whole


# --- report paths: checked before anything runs, never left truncated --------------------------


def good_report(tmp_path: Path) -> str:
    path = tmp_path / "good.json"
    json_report.write(builders.every_verdict(), path)
    return str(path)


# Commands with a report option, as functions of (good report, wheels, the path under test).
WRITERS: dict[str, Callable[[str, Path, str], list[str]]] = {
    "run --json": lambda g, w, p: ["run", "--corpus", str(BEHAVIOURS), "passes", "--json", p],
    "run --junit": lambda g, w, p: ["run", "--corpus", str(BEHAVIOURS), "passes", "--junit", p],
    "run --badge": lambda g, w, p: ["run", "--corpus", str(BEHAVIOURS), "passes", "--badge", p],
    "run --summary": lambda g, w, p: ["run", "--corpus", str(BEHAVIOURS), "--summary", p],
    "bisect --json": lambda g, w, p: ["bisect", "fixed-in-1-3", "--corpus", RELEASES, *source(w), "--json", p],
    "matrix --json": lambda g, w, p: ["matrix", "--corpus", RELEASES, *source(w), "--json", p],
    "matrix --markdown": lambda g, w, p: ["matrix", "--corpus", RELEASES, *source(w), "--markdown", p],
    "report merge --json": lambda g, w, p: ["report", "merge", g, "--json", p],
    "report merge --junit": lambda g, w, p: ["report", "merge", g, "--junit", p],
    "report merge --summary": lambda g, w, p: ["report", "merge", g, "--summary", p],
    "badge --badge": lambda g, w, p: ["badge", g, "--badge", p],
    "list --markdown": lambda g, w, p: ["list", "--markdown", p],
}  # fmt: skip


class NoSubprocess:
    """Stands in for subprocess.Popen: any child at all is a failure of the test."""

    def __init__(self) -> None:
        self.calls: list[object] = []

    def __call__(self, *args: object, **kwargs: object) -> None:
        self.calls.append(args[0] if args else kwargs.get("args"))
        raise AssertionError(f"a subprocess was started: {self.calls[-1]!r}")


@pytest.fixture
def no_subprocess(monkeypatch: pytest.MonkeyPatch) -> NoSubprocess:
    guard = NoSubprocess()
    monkeypatch.setattr(subprocess, "Popen", guard)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the package index was asked")

    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    return guard


def refused(result: object, *, what: str) -> str:
    """Exit 2, one error line saying ``what``, no traceback; the line."""
    from click.testing import Result

    assert isinstance(result, Result)
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    errors = [
        line
        for line in result.output.splitlines()
        if line.startswith(("Error:", "mgradcheck: error:"))
    ]
    assert len(errors) == 1, result.output
    assert what in errors[0], errors[0]
    assert "Traceback" not in result.output
    return errors[0]


@pytest.mark.parametrize("where", ["missing directory", "a directory"])
@pytest.mark.parametrize("writer", WRITERS)
def test_an_unwritable_report_path_stops_the_command_before_it_starts(
    writer: str,
    where: str,
    fake_wheels: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_subprocess: NoSubprocess,
) -> None:
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    taken = tmp_path / "taken.svg"  # a directory, whatever suffix a writer adds
    taken.mkdir()
    path = tmp_path / "missing" / "out.svg" if where == "missing directory" else taken
    args = WRITERS[writer](good_report(tmp_path), fake_wheels, str(path))
    refused(CliRunner().invoke(cli, args), what="cannot write")
    assert no_subprocess.calls == []
    assert not (cache_root() / "results").exists()
    assert [p.name for p in venvs.envs_root().iterdir()] == [".locks"]


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make writes of one file fail as on a full disk (ENOSPC when its data is flushed)."""
    mkstemp, fsync, doomed = tempfile.mkstemp, os.fsync, set()

    def fill(target: Path) -> None:
        def recording_mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
            fd, name = mkstemp(*args, **kwargs)  # type: ignore[call-overload]
            if Path(name).name.startswith(f".{target.name}."):
                doomed.add(fd)
            return fd, name

        def failing_fsync(fd: int) -> None:
            if fd in doomed:
                raise OSError(errno.ENOSPC, "No space left on device")
            fsync(fd)

        # The functions atomic.write_text calls: its temporary file, then flushing it.
        monkeypatch.setattr(tempfile, "mkstemp", recording_mkstemp)
        monkeypatch.setattr(os, "fsync", failing_fsync)

    return fill


@pytest.mark.parametrize(
    "writer",
    ["bisect --json", "matrix --markdown", "report merge --json", "badge --badge", "run --junit"],
)
def test_a_full_disk_leaves_the_previous_report_whole(
    writer: str, fake_wheels: Path, tmp_path: Path, full_disk: Callable[[Path], None]
) -> None:
    target = tmp_path / "reports" / "out.svg"
    target.parent.mkdir()
    target.write_text(OLD)
    args = WRITERS[writer](good_report(tmp_path), fake_wheels, str(target))
    if writer.startswith("matrix"):
        args += ["fixed-in-1-3", "--versions", ">=1.2,<1.4"]
    full_disk(target)
    refused(CliRunner().invoke(cli, [*args]), what="No space left on device")
    assert target.read_text() == OLD
    assert [p.name for p in target.parent.iterdir()] == ["out.svg"]  # no temporary file left


# --- hostile versions and index URLs ---------------------------------------------------------

VERSIONS = [
    "", " ", "-rf", "--pre", "--index-url=http://x", "-e.", "../x", "..", "/etc/passwd",
    "0.32.0/..", "C:\\x", "~/x", "$HOME", "0.1 ; rm -rf /", "0.32.0;rm", "0.32.0|ls",
    "0.32.0&&ls", "$(touch x)", "`id`", "0.32.0\n--pre", "0.32.0\r\n", "0.32.0\t",
    " 0.32.0", "0.32.0 ", "0.32.0 --target /", "0.32.0\x00", "0.32.0\u2028", "0.32.0\u00a0",
    "\x1b[31m0.32", "@", "file:///etc", "https://x/mlx.whl", "git+https://x/y",
    "mlx==0.32.0", "mlx[cpu]", "==0.32", ">=0", "~=0.32", "!=0.1", "0.32.*", "0.32.0,<1",
    "0.32.0; python_version>'3'", "latest", "newest", "v", "0..32", "0.32.0.", ".0.32",
    "0.32.0+", "0.32.0+-x", "0.32-", "\uff10.\uff13\uff12", "\u0660.\u0663\u0662", "\u221e",
    "1." * 40 + "0", "9" * 300, "0.32.0" + "\u0301",
]  # fmt: skip
URLS = [
    "", " ", "-rf", "--extra-index-url=http://x", "http://x --trusted-host x", "http://x\n--pre",
    "https://x\t", "https://x/simple\r\n", "https://ex ample.com/simple", "\x00http://x",
    "http://x/\x00", "http://x/\u2028", "ftp://x/simple", "javascript:alert(1)", "x/simple",
    "../simple", "/etc", "http://", "https://", "http:///simple", "file:", "file:///",
    "http://[::1", "http://x:port/", "git+https://x/y", "ssh://x/y", "data:text/html,x",
    "mailto:x@y",
]  # fmt: skip
FIND_LINKS = ["", "-rf", "../no-such-directory", "/etc/passwd", "--no-index"]
REQUIREMENTS = [
    "", " ", "-rf", "-e.", "--index-url=http://x", "-r/etc/passwd", "../x", "/etc/passwd",
    "file:///etc", "https://x/p.whl", "git+https://x/y", "x; rm -rf /", "x;rm", "x|ls", "x&&ls",
    "$(touch x)", "`id`", "x\n--pre", "x\r\n", "x\x00", "x\u2028", "\x1b[31mx", "@", "==1.0",
    "x==", "x<>1", "x[", "x (>=1", "x @", "x>=1 --target /", "\uff58", "x; os_name=='",
]  # fmt: skip

# Each option that takes one of them, as (argv for the value, environment for it).
Site = Callable[[str], tuple[list[str], dict[str, str]]]
VERSION_SITES: dict[str, Site] = {
    "bisect --good": lambda v: (["bisect", "fixed-in-1-3", "--corpus", RELEASES, f"--good={v}"], {}),
    "bisect --bad": lambda v: (["bisect", "fixed-in-1-3", "--corpus", RELEASES, f"--bad={v}"], {}),
    "run --mlx": lambda v: (["run", "--corpus", RELEASES, f"--mlx={v}"], {}),
    "envs path": lambda v: (["envs", "path", "--", v], {}),
}  # fmt: skip
URL_SITES: dict[str, Site] = {
    "bisect --index-url": lambda u: (["bisect", "fixed-in-1-3", "--corpus", RELEASES, "--good", "1.3.0", "--bad", "1.2.0", f"--index-url={u}"], {}),
    "matrix --index-url": lambda u: (["matrix", "--corpus", RELEASES, f"--index-url={u}"], {}),
    "envs path --index-url": lambda u: (["envs", "path", "1.1.0", f"--index-url={u}"], {}),
    "envs releases --index-url": lambda u: (["envs", "releases", f"--index-url={u}"], {}),
    "run --mlx with $UV_INDEX_URL": lambda u: (["run", "--corpus", RELEASES, "--mlx", "1.1.0"], {"UV_INDEX_URL": u}),
    "envs releases with $PIP_INDEX_URL": lambda u: (["envs", "releases"], {"PIP_INDEX_URL": u}),
}  # fmt: skip
FIND_LINKS_SITES: dict[str, Site] = {
    "bisect --find-links": lambda d: (["bisect", "fixed-in-1-3", "--corpus", RELEASES, f"--find-links={d}"], {}),
    "matrix --find-links": lambda d: (["matrix", "--corpus", RELEASES, f"--find-links={d}"], {}),
    "envs path --find-links": lambda d: (["envs", "path", "1.1.0", f"--find-links={d}"], {}),
    "envs releases --find-links": lambda d: (["envs", "releases", f"--find-links={d}"], {}),
}  # fmt: skip
REQUIREMENT_SITES: dict[str, Site] = {
    "run --mlx --with": lambda r: (["run", "--corpus", RELEASES, "--mlx", "1.1.0", f"--with={r}"], {}),
    "matrix --with": lambda r: (["matrix", "--corpus", RELEASES, f"--with={r}"], {}),
    "bisect --with": lambda r: (["bisect", "fixed-in-1-3", "--corpus", RELEASES, "--good", "1.3.0", "--bad", "1.2.0", f"--with={r}"], {}),
    "tests --matrix --with": lambda r: (["tests", RELEASES, "--matrix", f"--with={r}"], {}),
}  # fmt: skip
# run --mlx also takes a branch or tag of MLX's clone (``main``): these three are such names,
# looked up in the clone and refused there (test_a_name_that_is_no_branch_is_refused_by_the_clone).
BRANCH_NAMES = ("latest", "newest", "v")
TABLE = [
    *(
        (
            site,
            make,
            [v for v in VERSIONS if site != "run --mlx" or v not in BRANCH_NAMES],
            "version",
        )
        for site, make in VERSION_SITES.items()
    ),
    *((site, make, URLS, "index URL") for site, make in URL_SITES.items()),
    *((site, make, FIND_LINKS, "--find-links") for site, make in FIND_LINKS_SITES.items()),
    *((site, make, REQUIREMENTS, "--with") for site, make in REQUIREMENT_SITES.items()),
]


def cases(make: Site, values: list[str]) -> Iterator[tuple[str, list[str], dict[str, str]]]:
    """Each value with its command line and environment.

    An empty variable means "not set" (the default index would be asked) and a NUL cannot
    be put into the environment at all: such values are left out where they travel in one.
    """
    for value in values:
        args, env = make(value)
        if not env or (value and "\x00" not in value):
            yield value, args, env


BAD_INPUTS = sum(len(list(cases(make, values))) for _, make, values, _ in TABLE)


def test_a_name_that_is_no_branch_is_refused_by_the_clone(tmp_path: Path) -> None:
    from tests.fake_commits import make_history

    history = make_history(tmp_path / "mlx")
    for name in BRANCH_NAMES:
        argv = ["run", "--corpus", RELEASES, "--mlx", name, "--mlx-repo", str(history.path)]
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 2, result.output
        assert f"no commit {name!r} in " in result.output
    assert [p.name for p in venvs.envs_root().iterdir()] == [".locks"]  # no environment begun


def test_the_hostile_inputs_are_all_refused_by_the_parsers_too() -> None:
    from mgradcheck.errors import ReleaseError
    from mgradcheck.index.installable import check_index_url, parse_version

    for text in VERSIONS:
        with pytest.raises(ReleaseError):
            parse_version(text)
    for url in URLS:
        with pytest.raises(ReleaseError):
            check_index_url(url)


@pytest.mark.parametrize(("site", "make", "values", "what"), TABLE, ids=[t[0] for t in TABLE])
def test_hostile_input_is_refused_before_any_subprocess(
    site: str,
    make: Site,
    values: list[str],
    what: str,
    no_subprocess: NoSubprocess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in (
        "UV_DEFAULT_INDEX",
        "UV_INDEX_URL",
        "PIP_INDEX_URL",
        "UV_NO_INDEX",
        "PIP_NO_INDEX",
    ):
        monkeypatch.delenv(variable, raising=False)
    tried = 0
    for value, args, env in cases(make, values):
        result = CliRunner().invoke(cli, args, env=env)
        refused(result, what=what)
        if "\n" in value or "\r" in value:
            assert value not in result.output  # shown escaped: it cannot forge a line of its own
        tried += 1
    assert tried and no_subprocess.calls == []
    assert [p.name for p in venvs.envs_root().iterdir()] == [".locks"]  # no environment begun


RELIABILITY_PAGE = PACKAGE.parent / "docs" / "reliability.md"


def test_the_reliability_page_gives_these_figures() -> None:
    section = RELIABILITY_PAGE.read_text(encoding="utf-8")
    times = " \N{MULTIPLICATION SIGN} "
    for figure in (
        f"{BAD_INPUTS} hostile inputs",
        f"{len(VERSIONS)} versions{times}{len(VERSION_SITES)} options",
        f"{len(URLS)} index URLs{times}{len(URL_SITES)} options and variables",
        f"{len(FIND_LINKS)} wheel directories{times}{len(FIND_LINKS_SITES)} options",
        f"{len(REQUIREMENTS)} requirements{times}{len(REQUIREMENT_SITES)} options",
        f"for {len(WRITERS)} report options",
    ):
        assert figure in section


def test_the_reliability_page_gives_the_limits_the_code_has() -> None:
    from mgradcheck.reports.incremental import INTERVAL
    from mgradcheck.run.child_process import DRAIN_SECONDS
    from mgradcheck.run.child_result import RESULT_BYTES
    from mgradcheck.run.observation import MESSAGE_CHARS, TRACEBACK_CHARS
    from mgradcheck.run.verdict import MATCH_CHARS, MATCH_SECONDS
    from tests.test_bad_input import CASES, REPORTS, YAML

    section = RELIABILITY_PAGE.read_text(encoding="utf-8")
    assert INTERVAL == 1.0 and "at most once a second" in section
    for figure in (
        f"{len(CASES)} bad inputs",
        f"YAML nested 50,000 levels ({len(YAML)} shapes",
        f"{len(REPORTS)} malformed reports",
        f"a result over {RESULT_BYTES >> 20} MiB is a crash",
        f"keep a {MESSAGE_CHARS:,}- and {TRACEBACK_CHARS:,}-character head and tail",
        f"stops after {MATCH_SECONDS:g} s",
        f"at most {MATCH_CHARS >> 10} KiB of evidence",
        f"read for {DRAIN_SECONDS:g} s more",
    ):
        assert figure in section, figure


# --- no shell anywhere -------------------------------------------------------------------------

SHELLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
          "asyncio.create_subprocess_shell", "pty.spawn"}  # fmt: skip
SPAWNERS = {"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
            "subprocess.check_output"}  # fmt: skip


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def test_no_module_starts_a_subprocess_through_a_shell() -> None:
    problems, spawns = [], 0
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and node.module in ("os", "subprocess", "pty"):
                names = {f"{node.module}.{a.name}" for a in node.names}
                problems += [f"{where}: imports {n}" for n in sorted(names & (SHELLS | SPAWNERS))]
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if name in SHELLS:
                problems.append(f"{where}: {name}")
            for keyword in node.keywords:
                if keyword.arg == "shell" and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                ):
                    problems.append(f"{where}: shell=...")
            if name in SPAWNERS:
                spawns += 1
                command = node.args[0] if node.args else None
                if isinstance(command, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                    problems.append(f"{where}: {name} with a string command")
    assert problems == []
    assert spawns >= 3  # the check saw the real call sites (child, installer, probes)


# --- the loader runs nothing -------------------------------------------------------------------


def test_validating_a_corpus_never_runs_its_code(
    tmp_path: Path, no_subprocess: NoSubprocess
) -> None:
    marker = tmp_path / "ran"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    touch = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    (corpus / "writes-a-file.yaml").write_text(
        "id: writes-a-file\ntitle: Code that writes a file\nsummary: It must never run here.\n"
        'upstream: {report: "https://example.invalid/r"}\nbug: {outcome: fail}\n'
        f"code: |\n  {touch}\n  import os\n  os.system('touch {marker}')\n"
    )
    (corpus / "gradchecks-a-file.yaml").write_text(
        "id: gradchecks-a-file\ntitle: A gradcheck whose function writes a file\n"
        'summary: It must never run here.\nupstream: {report: "https://example.invalid/r"}\n'
        f'bug: {{outcome: fail}}\ngradcheck:\n  fn: "({touch}, lambda x: x)[1]"\n'
        "  inputs:\n    - {shape: [2]}\n"
    )
    assert len(load([corpus])) == 2
    runner = CliRunner()
    for args in (
        ["validate", str(corpus)],
        ["list", "--corpus", str(corpus)],
        ["show", "writes-a-file", "--corpus", str(corpus)],
        ["show", "gradchecks-a-file", "--corpus", str(corpus)],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
    assert not marker.exists() and no_subprocess.calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_an_installer_dies_with_a_command_killed_by_sigkill(
    fake_wheels: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hanging_uv: tuple[dict[str, str], Path],
    launch: Launch,
) -> None:
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    extra, ready = hanging_uv
    hung = launch(["envs", "path", "1.1.0", "-q", *source(fake_wheels)], extra)
    installer, _ = map(int, hung.wait_for(ready).split())
    hung.process.send_signal(signal.SIGKILL)  # mgradcheck alone, as the OOM killer would
    hung.process.wait(WAIT)
    assert survivors([installer]) == []
