"""A child's verdict is its own: what it inherits, where its result travels, where its paths
point, what a full disk or a stopped runner makes of it, which signals end the run.

Each test is a real ``python -m mgradcheck run`` over entries written here (no MLX needed
in their code), as a user would run it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mgradcheck import paths
from mgradcheck.run.child_process import CHILD_UNSET
from tests.conftest import write_entry

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 120.0


def entry(id_: str, code: str, *, fixed: bool = True, timeout: int = 30) -> str:
    """A fixed bug (expected to pass on MLX >= 0.1.0) or an open one, with ``code`` as its check."""
    bug = '{outcome: fail, fixed_in: "0.1.0"}' if fixed else "{outcome: fail}"
    body = "".join(f"  {line}\n" for line in code.strip().splitlines())
    return (
        f"id: {id_}\ntitle: A test entry\nsummary: Written by the test.\n"
        f'upstream: {{report: "https://example.invalid/{id_}"}}\n'
        f"bug: {bug}\ntimeout: {timeout}\ncode: |\n{body}"
    )


def run(
    where: Path, *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, "run", *args],
        capture_output=True,
        text=True,
        cwd=where,
        env={**os.environ, **(env or {})},
        timeout=WAIT,
        check=False,
        **kw,
    )


def verdicts(report: Path) -> dict[str, tuple[str, str, str]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {
        r["id"]: (r["runs"][0]["outcome"], r["verdict"], r["runs"][0]["message"])
        for r in data["results"]
    }


# Each variable with a value that, inherited, turns this regression (a fixed bug whose
# check fails again) into "pass, as expected" or into an error of its own making.
INHERITED = {
    "PYTHONOPTIMIZE": "1",  # the bare assert is stripped
    "PYTHONWARNINGS": "error",  # the warning becomes the failure
}
REGRESSION = """
import warnings
warnings.warn("a harmless warning")
assert 1 + 1 == 3, "the fixed bug is back"
"""


@pytest.mark.parametrize("variable", INHERITED)
def test_the_child_never_inherits_an_interpreter_setting_that_changes_the_verdict(
    variable: str, tmp_path: Path
) -> None:
    assert variable in CHILD_UNSET
    write_entry(tmp_path, "back", entry("back", REGRESSION))
    done = run(
        tmp_path, "--corpus", "back.yaml", "--json", "r.json", env={variable: INHERITED[variable]}
    )
    assert done.returncode == 1, done.stdout + done.stderr
    outcome, verdict, message = verdicts(tmp_path / "r.json")["back"]
    assert (outcome, verdict) == ("fail", "REGRESSED") and "the fixed bug is back" in message


def test_a_child_under_O_is_our_error_not_a_pass(tmp_path: Path) -> None:
    """An interpreter that strips asserts whatever the environment says (a wrapper with -O)."""
    wrapper = tmp_path / "python-O"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -O "$@"\n')
    wrapper.chmod(0o755)
    write_entry(tmp_path, "back", entry("back", REGRESSION))
    done = run(tmp_path, "--corpus", "back.yaml", "--python", str(wrapper), "--json", "r.json")
    assert done.returncode != 0, done.stdout + done.stderr
    assert "asserts off" in done.stdout + done.stderr
    assert "as expected" not in done.stdout


FORGER = """
import glob, json, os, sys, time
forged = json.dumps({"version": 1, "status": "pass", "phase": "entry"})
end = time.monotonic() + 3
while time.monotonic() < end:  # every place a sibling might keep its result, again and again
    for sibling in glob.glob("../*/"):
        if "forger" in sibling:
            continue
        try:
            os.makedirs(sibling + "result.json.tmp", exist_ok=True)  # where it would write
            for path in glob.glob(sibling + "*"):
                if os.path.isfile(path):
                    with open(path, "w") as f:
                        f.write(forged)
        except OSError:
            pass
    time.sleep(0.01)
with open(sys.argv[2], "w") as f:  # and its own result, claiming to be someone else's
    f.write(json.dumps({"version": 1, "status": "pass", "nonce": "not-mine"}))
os._exit(0)
"""


def test_no_child_can_forge_another_childs_result(tmp_path: Path) -> None:
    write_entry(tmp_path, "back", entry("back", "import time\ntime.sleep(1.5)\n" + REGRESSION))
    write_entry(tmp_path, "forger", entry("forger", FORGER))
    done = run(tmp_path, "--corpus", ".", "-j", "2", "--json", "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    found = verdicts(tmp_path / "r.json")
    assert found["back"][:2] == ("fail", "REGRESSED"), found
    assert found["forger"][0] == "crash" and "written for another child" in found["forger"][2]


def test_relative_paths_mean_where_the_user_is(tmp_path: Path) -> None:
    """--python and $MGRADCHECK_CACHE given relative to the directory the command runs in."""
    venv = Path(sys.executable).parent.parent  # the test interpreter's environment
    corpus = write_entry(tmp_path, "ok", entry("ok", "assert 1 + 1 == 2"))
    python = os.path.relpath(sys.executable, venv)
    for attempt in (1, 2):  # a fresh cache, then one that knows the interpreter
        done = run(
            venv, "--corpus", str(corpus), "--python", python, "--json", str(tmp_path / "r.json"),
            env={"MGRADCHECK_CACHE": os.path.relpath(tmp_path / "cache", venv)},
        )  # fmt: skip
        assert done.returncode == 0, (attempt, done.stdout + done.stderr)
        assert verdicts(tmp_path / "r.json")["ok"][:2] == ("pass", "as expected")
    assert (tmp_path / "cache" / "CACHEDIR.TAG").is_file()
    # The same from the entry's point of view: a relative cache on its own.
    done = run(tmp_path, "--corpus", "ok.yaml", "--json", "r.json", env={"MGRADCHECK_CACHE": "c2"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "c2" / "CACHEDIR.TAG").is_file()


def test_the_cache_tag_goes_only_where_mgradcheck_made_the_directory(tmp_path: Path) -> None:
    """A cache pointed at a directory of the user's must not hide their files from backups."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("mine")
    write_entry(tmp_path, "ok", entry("ok", "assert 1 + 1 == 2"))
    done = run(tmp_path, "--corpus", "ok.yaml", env={"MGRADCHECK_CACHE": str(home)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (home / "CACHEDIR.TAG").exists()
    assert (home / "mgradcheck" / "CACHEDIR.TAG").is_file()
    assert sorted(p.name for p in home.iterdir()) == ["mgradcheck", "thesis.tex"]


FILLS_THE_DISK = """
try:
    with open("filler", "wb") as f:
        while True:
            f.write(b"x" * 65536)
            f.flush()
except OSError:
    pass
assert 1 + 1 == 2
"""


def _can_mount() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs unshare and a mount namespace for a tmpfs")
def test_a_full_disk_is_the_environments_error_not_the_entrys(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    write_entry(tmp_path, "ok", entry("ok", FILLS_THE_DISK))
    script = f'mount -t tmpfs -o size=8m tmpfs "{cache}" && exec "$@"'  # a cache with a few MiB, filled by the entry itself before its result is written
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", *MGRADCHECK, "run", "--corpus", "ok.yaml",
         "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, cwd=tmp_path, timeout=WAIT, check=False,
        env={**os.environ, "MGRADCHECK_CACHE": str(cache), "MGRADCHECK_CGROUPS": "0"},
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "no space left in" in errors[0] and str(cache) in errors[0]
    assert "Traceback" not in done.stderr and "crash" not in done.stdout


STARTS_THEN_SLEEPS = """
import os, time
open(os.environ["MARKER"], "w").close()
time.sleep(3)
assert 1 + 1 == 2
"""


def started(where: Path, *args: str) -> subprocess.Popen[str]:
    """``mgradcheck run ARGS --json r.json``, returned once its entry's child has started."""
    marker = where / "started"
    process = subprocess.Popen(
        [*MGRADCHECK, "run", *args, "--json", "r.json"],
        cwd=where,
        env={**os.environ, "MARKER": str(marker)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return process


@pytest.mark.slow
def test_a_stopped_runner_still_enforces_each_timeout(tmp_path: Path) -> None:
    write_entry(tmp_path, "slow", entry("slow", STARTS_THEN_SLEEPS, timeout=2))
    process = started(tmp_path, "--corpus", "slow.yaml")
    process.send_signal(signal.SIGSTOP)  # the child runs on, 3 s, past its 2 s timeout
    time.sleep(5)
    process.send_signal(signal.SIGCONT)
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 1, out + err
    assert verdicts(tmp_path / "r.json")["slow"][0] == "timeout"


SIGNALS_ITS_PARENT = """
import os, signal, time
for name in ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPROF", "SIGVTALRM", "SIGIO", "SIGPWR"):
    os.kill(os.getppid(), getattr(signal, name))
    time.sleep(0.05)
assert 1 + 1 == 2
"""


def test_signals_that_mean_nothing_here_do_not_end_a_run(tmp_path: Path) -> None:
    write_entry(tmp_path, "back", entry("back", "import time\ntime.sleep(1)\n" + REGRESSION))
    write_entry(tmp_path, "noisy", entry("noisy", SIGNALS_ITS_PARENT))
    done = run(tmp_path, "--corpus", ".", "-j", "2", "--json", "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    found = verdicts(tmp_path / "r.json")
    assert found["back"][:2] == ("fail", "REGRESSED") and found["noisy"][1] == "as expected"


@pytest.mark.parametrize("name", ["SIGHUP", "SIGQUIT", "SIGXCPU"])
def test_a_hangup_or_quit_is_an_interrupt_with_the_report_written(
    name: str, tmp_path: Path
) -> None:
    write_entry(tmp_path, "quick", entry("quick", "assert 1 + 1 == 2"))
    write_entry(tmp_path, "slow", entry("slow", STARTS_THEN_SLEEPS.replace("3", "60")))
    process = started(tmp_path, "--corpus", ".", "-j", "1")
    signum = getattr(signal, name)
    process.send_signal(signum)
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 128 + signum, out + err
    assert f"interrupted by {name}" in err and "Traceback" not in err
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["interrupted"] is True
    assert {r["id"]: r["runs"][0]["outcome"] for r in data["results"]}["quick"] == "pass"


CLOSES_EVERYTHING = """
import os
os.closerange(3, 1 << 20)  # the result's descriptor among them
os.open(os.devnull, os.O_RDONLY)  # and something else at its number
assert 1 + 1 == 3, "the fixed bug is back"
"""


def test_an_entry_that_closes_every_descriptor_still_has_its_result_read(tmp_path: Path) -> None:
    write_entry(tmp_path, "closes", entry("closes", CLOSES_EVERYTHING))
    done = run(tmp_path, "--corpus", "closes.yaml", "--json", "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdicts(tmp_path / "r.json")["closes"][:2] == ("fail", "REGRESSED")


@pytest.mark.parametrize(
    ("platform", "environ"),
    [
        ("linux", {}),
        ("linux", {"XDG_CACHE_HOME": "/srv/cache"}),
        ("linux", {"XDG_CACHE_HOME": "  "}),
        ("linux", {"XDG_CACHE_HOME": "relative/cache"}),
        ("darwin", {}),
        ("darwin", {"XDG_CACHE_HOME": "/srv/cache"}),
    ],
)
def test_the_default_cache_is_where_platformdirs_puts_it(
    monkeypatch: pytest.MonkeyPatch, platform: str, environ: dict[str, str]
) -> None:
    """Named without importing platformdirs on Linux and macOS; the same directory."""
    import platformdirs

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "platform", platform)
    expected = platformdirs.PlatformDirs("mgradcheck", appauthor=False).user_cache_dir
    if platform == "darwin":  # PlatformDirs picks its class at import: ask macOS's for it
        from platformdirs.macos import MacOS

        expected = MacOS("mgradcheck", appauthor=False).user_cache_dir
    assert paths.user_cache_dir(os.environ, platform) == Path(expected)
