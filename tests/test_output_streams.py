"""Outputs that are not files, standard streams that are closed or gone, and an environment
that is no use: the command line as a user runs it, in real subprocesses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
PASSES = ["run", "passes", "--corpus", str(BEHAVIOURS), "-q"]


def mgradcheck(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
        env={**os.environ, **(env or {})}, check=False,
    )  # fmt: skip


def one_error_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert done.returncode == code, done.stderr
    assert done.stderr.startswith("mgradcheck: error: "), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def a_report(tmp_path: Path) -> Path:
    report = tmp_path / "good.json"
    done = mgradcheck(*PASSES, "--json", str(report))
    assert done.returncode == 0, done.stderr
    return report


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_as_report_path_is_written_through_never_replaced(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    link = tmp_path / "to-null"
    link.symlink_to(null)
    done = mgradcheck(*PASSES, "--json", str(null))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(null.lstat().st_mode) and link.is_symlink()
    report = a_report(tmp_path)
    for args in (["run", "passes", "--corpus", str(BEHAVIOURS), "-q", "--junit", str(link)],
                 ["report", "merge", str(report), "--json", str(link)],
                 ["badge", str(report), "--badge", str(null)]):  # fmt: skip
        assert mgradcheck(*args).returncode == 0
        assert stat.S_ISCHR(null.lstat().st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.json", "null", "to-null"]


def test_a_fifo_with_a_reader_gets_one_whole_report(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = mgradcheck(*PASSES, "--json", str(fifo))
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert json.loads(got[0])["counts"]["as expected"] == 1  # one report, not the run's snapshots
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_with_no_reader_is_one_line_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "no process is reading it" in one_error_line(mgradcheck(*PASSES, "--json", str(fifo)))
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dev_stdout_is_the_descriptor_itself(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    link = tmp_path / "stdout"
    link.symlink_to("/dev/stdout")
    with out.open("w") as f:
        done = subprocess.run(
            [*MGRADCHECK, *PASSES, "--json", str(link)], stdout=f, stderr=subprocess.PIPE,
            text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and out.read_text().startswith("{")
    assert "1 entry: 1 as expected" in out.read_text()  # the table after it, in the same file


def test_a_link_to_a_report_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "latest.json"
    link.symlink_to(target.name)
    assert mgradcheck(*PASSES, "--json", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(target.read_text())["schema"] == "mgradcheck-report"


def test_a_closed_stderr_drops_the_messages_and_the_run_goes_on(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    # Not quiet: the progress display is chosen by asking standard error if it is a terminal.
    for args, code in ((["run", "passes", "--corpus", str(BEHAVIOURS), "--json", str(report)], 0),
                       (["run", "raises", "--corpus", str(BEHAVIOURS)], 1),
                       (["run", "no-such-entry", "--corpus", str(BEHAVIOURS)], 2)):  # fmt: skip
        done = subprocess.run(
            ["sh", "-c", 'exec 2>&-; exec "$@"', "sh", *MGRADCHECK, *args],
            stdout=subprocess.PIPE, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == code, (args, done.stdout)
    assert json.loads(report.read_text())["counts"]["as expected"] == 1


def test_a_table_reader_that_goes_away_leaves_the_verdicts_status(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    for entry, code in (("passes", 0), ("raises", 1)):
        # `mgradcheck run | true`, the pipe made here to see the status sh would not give
        reader_gone = subprocess.Popen(["true"], stdin=subprocess.PIPE)
        reader_gone.wait()
        assert reader_gone.stdin is not None
        child = subprocess.run(
            [*MGRADCHECK, "run", entry, "--corpus", str(BEHAVIOURS), "--json", str(report)],
            stdout=reader_gone.stdin, stderr=subprocess.PIPE, text=True, timeout=120,
            check=False,
        )  # fmt: skip
        reader_gone.stdin.close()
        assert child.returncode == code, child.stderr
        assert "Traceback" not in child.stderr and "mgradcheck: error" not in child.stderr
        assert json.loads(report.read_text())["results"][0]["id"] == entry


@pytest.mark.parametrize("columns", ["abc", "-5", "\N{SUPERSCRIPT TWO}", "9" * 5000])
def test_a_columns_no_terminal_could_have_is_ignored(columns: str) -> None:
    for args in (PASSES, ["list", "--corpus", str(BEHAVIOURS)], ["run", "--help"]):
        done = mgradcheck(*args, env={"COLUMNS": columns, "FORCE_COLOR": "1"})
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)


def test_durations_of_hundreds_of_digits_are_one_line(tmp_path: Path) -> None:
    durations = tmp_path / "durations.json"
    durations.write_text('{"passes": ' + "9" * 400 + "}")
    args = ["run", "--corpus", str(BEHAVIOURS), "--shard", "1/2", "--durations", str(durations)]
    assert "not a number of seconds" in one_error_line(mgradcheck(*args))


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        (("results", 0, "runs", 0, "duration"), '"slow"', "duration: 'slow' is not a number"),
        (("results", 0, "runs", 0, "duration"), "1" + "0" * 400, "is not a number"),
        (("results", 0, "runs", 0, "duration"), "1e400", "duration: None is not a number"),
        (("results", 0, "id"), "null", "id: None is not a string"),
        (("started",), "5", "started: 5 is not a string"),
    ],
)
def test_report_fields_of_the_wrong_type_are_one_line(
    tmp_path: Path, where: tuple[str | int, ...], value: str, said: str
) -> None:
    data = json.loads(a_report(tmp_path).read_text())
    holder = data
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = "@@"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data).replace('"@@"', value))
    for args in (["report", "merge", str(bad), "--json", str(tmp_path / "m.json")],
                 ["badge", str(bad), "--badge", str(tmp_path / "b.svg")],
                 ["report", "durations", str(bad), "-o", str(tmp_path / "d.json")]):  # fmt: skip
        line = one_error_line(mgradcheck(*args))
        assert str(bad) in line and said in line, (args, line)


def test_a_deleted_working_directory_is_one_line(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone),
         *MGRADCHECK, *PASSES],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "working directory is gone" in one_error_line(done)
