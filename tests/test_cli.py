"""The command line as a user runs it: a real subprocess, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.conftest import BEHAVIOURS, MINIMAL, write_entry

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def mgradcheck(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


def test_help_lists_the_commands_and_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "list", "show", "validate"):
        assert f"  {command} " in result.output
    assert "0 every verdict as expected, 1 an unexpected verdict" in result.output


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    return [
        found
        for name, command in group.commands.items()
        for found in (
            _commands(command, (*path, name))
            if isinstance(command, click.Group)
            else [(*path, name)]
        )
    ]


def test_every_help_lists_its_exit_statuses_in_one_form() -> None:
    tail = "4 an mgradcheck bug, 130 interrupted (143 on SIGTERM)."
    for path in [(), *_commands(cli)]:
        result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        assert text.count("Exit status: 0 ") == 1 and tail in text, path
        said = text[text.index("Exit status: 0 ") : text.index(tail) + len(tail)]
        assert "2 bad usage or corpus" in said, (path, said)
        if path == ():
            top = said
        elif path == ("run",):  # the top level's is run's
            assert said == top
    sweep = " ".join(CliRunner().invoke(cli, ["sweep", "--help"]).output.split())
    assert "1 findings, 2 bad usage or corpus, 3 an environment that" in sweep


def test_run_help_pins_the_options() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert result.exit_code == 0
    for option in (
        "--tag",
        "--jobs",
        "--timeout",
        "--repeat",
        "--python",
        "--json",
        "--quiet",
        "--max-memory",
    ):
        assert option in result.output


def test_run_writes_report_and_exit_status(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = mgradcheck(
        "run", "--corpus", str(BEHAVIOURS), "passes", "raises", "--json", str(out), "-q"
    )
    assert result.returncode == 1, result.stderr
    data = json.loads(out.read_text())
    assert [r["id"] for r in data["results"]] == ["passes", "raises"]
    assert data["counts"]["REGRESSED"] == 1 and data["counts"]["as expected"] == 1
    assert "2 entries: 1 REGRESSED, 1 as expected" in result.stdout
    assert "Traceback" not in result.stderr


def test_all_as_expected_exits_zero(tmp_path: Path) -> None:
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "passes", "floods-output")
    assert result.returncode == 0, result.stderr
    assert "[2/2]" in result.stderr  # the plain progress lines of a non-terminal


def test_tag_selection_and_unknown_id(tmp_path: Path) -> None:
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "no-such-entry")
    assert result.returncode == 2
    assert "no corpus entry with id 'no-such-entry'" in result.stderr
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "--tag", "no-such-tag")
    assert result.returncode == 2


def test_bad_corpus_is_exit_2_without_traceback(tmp_path: Path) -> None:
    write_entry(
        tmp_path,
        "bad",
        MINIMAL.format(id="bad").replace("{outcome: fail,", "{outcome: fail, fixed_in: 0.30,"),
    )
    for args in (
        ["validate", str(tmp_path)],
        ["run", "--corpus", str(tmp_path)],
        ["list", "--corpus", str(tmp_path)],
    ):
        result = mgradcheck(*args)
        assert result.returncode == 2
        assert result.stderr.startswith(
            f"mgradcheck: error: {tmp_path / 'bad.yaml'}:5: bug.fixed_in: write versions"
        )
        assert "Traceback" not in result.stderr


def test_unwritable_report_path_fails_before_running(tmp_path: Path) -> None:
    result = mgradcheck(
        "run", "--corpus", str(BEHAVIOURS), "--json", str(tmp_path / "missing" / "r.json")
    )
    assert result.returncode == 2
    assert "directory" in result.stderr and "does not exist" in result.stderr
    assert "[1/" not in result.stderr  # nothing ran


@pytest.mark.parametrize("stdout", ["closed", "read-only"])
def test_a_report_to_a_closed_stdout_is_one_line_before_anything_runs(
    tmp_path: Path, stdout: str
) -> None:
    from mgradcheck.reports import json_report
    from tests import builders

    report = tmp_path / "r.json"
    json_report.write(builders.every_verdict(), report)
    shell = "exec >&-" if stdout == "closed" else "exec 1</dev/null"
    for args in (
        ["run", "passes", "--corpus", str(BEHAVIOURS), "--json", "-"],
        ["run", "passes", "--corpus", str(BEHAVIOURS), "--summary", "-", "-q"],
        ["report", "merge", str(report), "--junit", "-"],
        ["badge", str(report), "--badge", "-"],
    ):
        done = subprocess.run(
            ["sh", "-c", f'{shell}; exec "$@"', "sh", *MGRADCHECK, *args],
            stderr=subprocess.PIPE, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("mgradcheck: error: cannot write to standard output: it is")
        assert done.stderr.count("\n") == 1, done.stderr  # no traceback, and nothing ran


def test_existing_report_survives_a_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mgradcheck import atomic
    from mgradcheck.errors import WriteError

    target = tmp_path / "report.json"
    target.write_text("good old report")

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(WriteError, match="No space left on device"):
        atomic.write_text(target, "new")
    assert target.read_text() == "good old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left behind


def test_validate_and_list_and_show(tmp_path: Path) -> None:
    result = mgradcheck("validate", str(BEHAVIOURS))
    assert result.returncode == 0 and "8 entries valid" in result.stdout
    result = mgradcheck("list", "--corpus", str(BEHAVIOURS), "--tag", "fixture")
    assert result.returncode == 0 and "segfaults" in result.stdout
    result = mgradcheck("show", "segfaults", "--corpus", str(BEHAVIOURS))
    assert result.returncode == 0
    assert "os.kill(os.getpid(), signal.SIGSEGV)" in result.stdout
    assert "When present the bug shows as: crash" in result.stdout


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_children_and_keeps_what_finished(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("passes", "raises"):
        (corpus / f"{name}.yaml").write_text((BEHAVIOURS / f"{name}.yaml").read_text())
    hang = (BEHAVIOURS / "hangs.yaml").read_text().replace("timeout: 2", "timeout: 300")
    (corpus / "zz-hangs.yaml").write_text(hang)
    out = tmp_path / "report.json"
    process = subprocess.Popen(
        [*MGRADCHECK, "run", "--corpus", str(corpus), "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stderr is not None
    process.stderr.readline()  # the title; then a mark per finished entry, as pytest's dots
    marks = ""
    while len(marks) < 2:  # the two quick entries finished; the hang is running
        mark = process.stderr.read(1)
        assert mark, "mgradcheck exited early"
        marks += mark
    assert sorted(marks) == [".", "R"]  # -j 2: in either order
    time.sleep(0.5)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == status, stderr
    # What did not run is one line, not a row each; what finished and needs attention is shown.
    assert "1 entry did not run: the run was interrupted" in stdout
    assert "REGRESSED raises" in stdout and "hangs" not in stdout
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    verdicts = {r["id"]: r["verdict"] for r in data["results"]}
    assert verdicts == {"passes": "as expected", "raises": "REGRESSED", "hangs": "not run"}
    assert "interrupted by" in stderr and "Traceback" not in stderr
    # No child of the run is left behind.
    runs = Path(os.environ["MGRADCHECK_CACHE"]) / "runs"
    leftover = subprocess.run(
        ["pgrep", "-f", str(runs)], capture_output=True, text=True, check=False
    )
    assert leftover.stdout.strip() == ""


def test_reports_are_readable_by_others(tmp_path: Path) -> None:
    from mgradcheck.atomic import write_text

    fresh = tmp_path / "fresh.json"
    write_text(fresh, "{}")
    assert fresh.stat().st_mode & 0o777 == 0o644 & ~_umask()
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    write_text(kept, "new")
    assert kept.stat().st_mode & 0o777 == 0o640


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_run_verbose_shows_each_childs_command_line_and_what_it_changed_in_the_environment() -> (
    None
):
    import shlex

    args = ["run", "--corpus", str(BEHAVIOURS), "passes", "raises", "-q"]
    env = {"PYTHONWARNINGS": "error", "PYTHON_COLORS": None}  # one removed, one set for the child
    verbose = CliRunner().invoke(cli, [*args, "-vv"], env=env)
    assert verbose.exit_code == 1, verbose.output
    for name in ("passes", "raises"):
        start = f"mgradcheck: {name}: "
        argv, changes = [
            line[len(start) :] for line in verbose.output.splitlines() if line.startswith(start)
        ]
        assert argv.startswith(f"{shlex.quote(sys.executable)} -X faulthandler ")
        assert "child/launch.py /dev/fd/" in argv
        assert changes.startswith("set ") and changes.endswith("; removed PYTHONWARNINGS")
        for variable in ("MGRADCHECK_CHILD=", "PYTHON_COLORS=0", "TMPDIR="):
            assert f" {variable}" in changes or changes.startswith(f"set {variable}")
    quiet = CliRunner().invoke(cli, args, env=env)
    assert "faulthandler" not in quiet.output and "removed" not in quiet.output
