"""Runs that share a machine, a cache and a working tree never read or overwrite each other's files.

Two ``mgradcheck run`` at once on one cache (two CI jobs on one runner), a report path
that names a corpus input, the leftovers of a run killed by SIGKILL, and a cache that
cannot be written. Each is a real ``python -m mgradcheck`` process.
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

from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.reports import json_report
from tests import builders
from tests.conftest import BEHAVIOURS, SUITES

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 180.0  # for a loaded 2-core machine; never a timing assertion

FAKE_MLX = """\
__version__ = "{version}"
float32 = "float32"

def default_device():
    return "Device(cpu, 0)"
"""


def fake_interpreter(tmp_path: Path, name: str, version: str, then: str = "") -> Path:
    """An interpreter (a shell script around this one) whose MLX is a fake of ``version``.

    ``then`` runs after the real interpreter exits and before the script does.
    """
    site = tmp_path / f"site-{name}"
    (site / "mlx").mkdir(parents=True)
    (site / "mlx" / "__init__.py").write_text("")
    (site / "mlx" / "core.py").write_text(FAKE_MLX.format(version=version))
    script = tmp_path / f"python-{name}"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={site} {sys.executable} "$@"\nstatus=$?\n{then}\nexit $status\n'
    )
    script.chmod(0o755)
    return script


def mgradcheck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env={**os.environ, **(env or {})},
    )


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert process.poll() is None, "exited before it was ready"
        assert time.monotonic() < deadline, f"no {path.name}"
        time.sleep(0.05)


def test_two_runs_at_once_each_judge_their_own_interpreter(tmp_path: Path) -> None:
    """A's child has written its result and waits; B probes and runs in full; then A goes on."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    hold = f"touch {ready}\nwhile [ ! -e {go} ]; do sleep 0.05; done"
    a = fake_interpreter(tmp_path, "a", "1.0.0", then=hold)
    b = fake_interpreter(tmp_path, "b", "2.0.0")
    corpus = ["passes", "--corpus", str(BEHAVIOURS), "-q"]
    first = subprocess.Popen(
        [*MGRADCHECK, "run", *corpus, "--python", str(a), "--json", str(tmp_path / "a.json")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(ready, first)  # A's probe child is done; its interpreter has not exited yet
        second = mgradcheck("run", *corpus, "--python", str(b), "--json", str(tmp_path / "b.json"))
        go.touch()
        assert first.wait(WAIT) == 0
    finally:
        first.kill()
    assert second.returncode == 0, second.stderr
    for name, version in (("a", "1.0.0"), ("b", "2.0.0")):
        report = json.loads((tmp_path / f"{name}.json").read_text())
        assert [e["mlx"] for e in report["environments"]] == [version], name
        assert report["results"][0]["environment"]["mlx"] == version


def test_a_killed_runs_scratch_is_removed_by_the_next_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ready, go = tmp_path / "ready", tmp_path / "go"
    # Held in the entry's child, not the probe's (whose spec lies in a directory named probe).
    hold = f'case "$*" in */probe/*) ;; *) touch {ready}; while [ ! -e {go} ]; do sleep 0.05; done;; esac'
    held = fake_interpreter(tmp_path, "held", "1.0.0", then=hold)
    env = {**os.environ, "MGRADCHECK_CACHE": str(cache)}
    killed = subprocess.Popen(
        [*MGRADCHECK, "run", "passes", "--corpus", str(BEHAVIOURS), "-q", "--python", str(held)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        wait_for(ready, killed)
        leftovers = list((cache / "runs").iterdir())
        assert leftovers  # the killed run's scratch, the running entry's spec in it
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        go.touch()  # the held interpreter is in the child's own session: let it end
    assert all(p.exists() for p in leftovers)
    again = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q"]
    done = mgradcheck(*again, env={"MGRADCHECK_CACHE": str(cache)})
    assert done.returncode == 0, done.stderr
    assert list((cache / "runs").iterdir()) == []


# Report options naming an input, as (argv, the input that must survive) in a corpus directory.
def _overwrites(corpus: Path, report: Path) -> dict[str, tuple[list[str], Path]]:
    entry = corpus / "passes.yaml"
    link = corpus.parent / "link.json"
    link.symlink_to(entry)
    beside = corpus.parent / "b.shields.json"  # where '--badge b' puts the endpoint
    beside.write_bytes(report.read_bytes())
    run = ["run", "passes", "--corpus"]
    return {
        "run --json the corpus file": ([*run, str(entry), "--json", str(entry)], entry),
        "run --json a link to it": ([*run, str(entry), "--json", str(link)], entry),
        "run --junit into the corpus directory": (
            [*run, str(corpus), "--junit", str(corpus / "passes.yaml")],
            entry,
        ),
        "run --summary a new corpus file": (
            [*run, str(corpus), "--summary", str(corpus / "sub" / "x.yml")],
            corpus / "sub" / "x.yml",
        ),
        "bisect --json": (
            ["bisect", "passes", "--corpus", str(corpus), "--json", str(entry)],
            entry,
        ),
        "matrix --markdown": (
            ["matrix", "--corpus", str(entry), "--markdown", str(entry)],
            entry,
        ),
        "report merge --json": (["report", "merge", str(report), "--json", str(report)], report),
        "badge --badge, its endpoint": (
            ["badge", str(beside), "--badge", str(corpus.parent / "b")],
            beside,
        ),
        **_more_overwrites(corpus),
    }


def _more_overwrites(corpus: Path) -> dict[str, tuple[list[str], Path]]:
    """``report upstream``, ``tests`` and ``new``: their inputs are entries, test modules, a script."""
    entry, where = corpus / "passes.yaml", corpus.parent
    (where / "wheels").mkdir()
    offline = ["--no-index", "--find-links", str(where / "wheels")]  # no release: nothing to ask
    suite = where / "suite"
    shutil.copytree(SUITES / "basic", suite)
    tests = ["tests", str(suite / "test_behaviours.py"), "-k", "test_passes", "-q"]
    script = where / "scripts" / "made.yaml"  # a script that is its own entry's file
    script.parent.mkdir()
    script.write_text("print(1)\n")
    return {
        "report upstream -o the corpus file": (
            ["report", "upstream", "passes", "--corpus", str(corpus), "-o", str(entry), *offline],
            entry,
        ),
        "report upstream -o a new corpus file": (
            [
                "report",
                "upstream",
                "passes",
                *offline,
                "--corpus",
                str(corpus),
                "-o",
                str(corpus / "x.yml"),
            ],
            corpus / "x.yml",
        ),
        "tests --junit a module the tests import": (
            [*tests, "--junit", str(suite / "suite_helpers.py")],
            suite / "suite_helpers.py",
        ),
        "tests --json a new module beside the tests": (
            [*tests, "--json", str(suite / "report.py")],
            suite / "report.py",
        ),
        "tests --summary the test file": (
            [*tests, "--summary", str(suite / "test_behaviours.py")],
            suite / "test_behaviours.py",
        ),
        "new --force onto its own script": (
            ["new", str(script), "--corpus", str(script.parent), "--force", *offline],
            script,
        ),
    }


def test_no_report_may_overwrite_an_input(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "passes.yaml").write_text((BEHAVIOURS / "passes.yaml").read_text())
    report = tmp_path / "report.json"
    json_report.write(builders.every_verdict(), report)
    for i, (name, (args, kept)) in enumerate(_overwrites(corpus, report).items()):
        before = kept.read_bytes() if kept.exists() else None
        if i == 0:  # one as a real process; the rest in this one, for speed
            refused = mgradcheck(*args)
            code, stderr = refused.returncode, refused.stderr
        else:
            result = CliRunner().invoke(cli, args)
            code, stderr = result.exit_code, result.output
        assert code == 2, (name, stderr)
        assert stderr.count("\n") == 1 and "which this command reads" in stderr, stderr
        assert (kept.read_bytes() if kept.exists() else None) == before, name


# Files a user has, outside every input, named for a report: (argv, the file).
def _foreign(where: Path, report: str) -> dict[str, tuple[list[str], Path]]:
    files = {name: where / name for name in ("tool.py", "config.yaml", "README.md", "notes.txt",
                                             "logo.svg", "package.json")}  # fmt: skip
    for path in files.values():
        path.write_text(f"{path.name}: the user's own\n")
    (where / "wheels").mkdir()
    offline = ["--no-index", "--find-links", str(where / "wheels")]
    run = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q"]
    return {
        "run --json a module": ([*run, "--json", str(files["tool.py"])], files["tool.py"]),
        "run --junit a YAML file": ([*run, "--junit", str(files["config.yaml"])], files["config.yaml"]),
        "run --summary a README": ([*run, "--summary", str(files["README.md"])], files["README.md"]),
        "run --badge a logo": ([*run, "--badge", str(where / "logo")], files["logo.svg"]),
        "report merge --json a config": (
            ["report", "merge", report, "--json", str(files["package.json"])], files["package.json"]),
        "report merge --summary notes": (
            ["report", "merge", report, "--summary", str(files["notes.txt"])], files["notes.txt"]),
        "badge --badge a logo": (["badge", report, "--badge", str(files["logo.svg"])], files["logo.svg"]),
        "report upstream -o a README": (
            ["report", "upstream", "passes", "--corpus", str(BEHAVIOURS), *offline, "-o",
             str(files["README.md"])], files["README.md"]),
        "tests --junit a module": (
            ["tests", str(SUITES / "basic" / "test_functions.py"), "-k", "test_function_passes",
             "--junit", str(files["tool.py"])], files["tool.py"]),
    }  # fmt: skip


def test_no_report_replaces_a_file_that_is_not_one(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    json_report.write(builders.every_verdict(), report)
    for name, (args, kept) in _foreign(tmp_path, str(report)).items():
        before = kept.read_bytes()
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (name, result.output)
        assert result.output.count("\n") == 1, (name, result.output)
        assert "is not an mgradcheck report" in result.output, (name, result.output)
        assert kept.read_bytes() == before, name
    # The command's own earlier reports, of every kind, are rewritten.
    reports = ["--json", "r.json", "--junit", "r.xml", "--summary", "r.md", "--badge", "b"]
    for _ in range(2):
        done = CliRunner().invoke(cli, ["run", "passes", "--corpus", str(BEHAVIOURS), "-q",
                                        *(str(tmp_path / a) if "." in a or a == "b" else a
                                          for a in reports)])  # fmt: skip
        assert done.exit_code == 0, done.output
        merged = CliRunner().invoke(cli, ["report", "merge", str(tmp_path / "r.json"),
                                          "--json", str(tmp_path / "m.json")])  # fmt: skip
        assert merged.exit_code == 0, merged.output


def test_a_killed_writers_temporary_files_are_removed_by_the_next_write(tmp_path: Path) -> None:
    import fcntl

    reports = tmp_path / "reports"
    reports.mkdir()
    # What a write killed between creating its temporary file and renaming it leaves.
    stale = [reports / ".r.json.k1ll3d_0.tmp", reports / ".r.xml.abcdefgh.tmp"]
    for path in stale:
        path.write_bytes(b"")
    live = reports / ".r.json.wr1t1ng_.tmp"  # another process is writing this one now
    live.write_bytes(b"{")
    others = [reports / ".r.json.tmp", reports / "r.json.abcdefgh.tmp", reports / "notes.tmp"]
    for path in others:
        path.write_bytes(b"not ours")
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        done = mgradcheck(
            "run", "passes", "--corpus", str(BEHAVIOURS), "-q",
            "--json", str(reports / "r.json"), "--junit", str(reports / "r.xml"),
        )  # fmt: skip
    finally:
        os.close(held)
    assert done.returncode == 0, done.stderr
    assert not any(p.exists() for p in stale)
    assert live.exists() and all(p.exists() for p in others)
