"""Children that attack the run through what they write: their result file and their text.

Each test is a real ``python -m mgradcheck run`` over fixture entries in
tests/fixtures/hostile that need no MLX; its timeout turns a hang into a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

HOSTILE = FIXTURES / "hostile"
MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 120.0  # a hang fails the test; no timing is asserted


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``run`` with every report, its table 160 columns wide: room for the reasons to show."""
    reports = ["--json", "r.json", "--junit", "r.xml", "--summary", "r.md", "--badge", "b.svg"]
    return subprocess.run(
        [*MGRADCHECK, "run", *args, *reports],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "160"},
    )


def strict_json(text: str) -> Any:
    """Parse as RFC 8259 demands: no NaN or Infinity, no lone surrogate escape."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    assert "\\ud8" not in text.lower() and "\\udc" not in text.lower()  # no surrogate halves
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def hostile(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    where = tmp_path_factory.mktemp("hostile")
    return where, run(where, "--corpus", str(HOSTILE), "-j", "2")


def runs(where: Path) -> dict[str, dict[str, Any]]:
    report = strict_json((where / "r.json").read_text(encoding="utf-8"))
    return {r["id"]: r["runs"][0] for r in report["results"]}


@pytest.mark.parametrize(
    ("entry", "outcome", "why"),
    [
        # The result is a file with no name, passed down as /dev/fd/N: nothing can take its place.
        ("links-its-result", "error", "File exists"),
        ("fifo-result", "error", "File exists"),
        ("huge-result", "crash", "over the 1048576 read"),
    ],
)
def test_the_result_cannot_be_replaced_and_is_read_capped(
    hostile: tuple[Path, subprocess.CompletedProcess[str]], entry: str, outcome: str, why: str
) -> None:
    where, done = hostile
    assert done.returncode == 1, done.stderr  # REGRESSED/UNEXPECTED verdicts, no error of ours
    run = runs(where)[entry]
    assert run["outcome"] == outcome
    assert why in run["message"]


def test_every_report_caps_a_huge_message(
    hostile: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    where, _ = hostile
    message = runs(where)["huge-message"]["message"]
    assert message.startswith("entry called sys.exit('HEAD") and message.endswith("TAIL')")
    assert "characters not kept" in message and len(message) < 5000
    for name in ("r.json", "r.xml", "r.md", "b.svg"):
        assert (where / name).stat().st_size < 1 << 20, name


def test_every_report_is_strict_json_or_well_formed_xml(
    hostile: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    where, _ = hostile
    run = runs(where)["writes-bad-json"]
    assert run["exc_type"] is None
    assert run["message"].startswith("observed \ufffd [/]")
    strict_json((where / "b.shields.json").read_text(encoding="utf-8"))
    for name in ("r.xml", "b.svg"):
        ET.parse(where / name)
    (where / "r.md").read_text(encoding="utf-8")


def test_a_result_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (HOSTILE / "fifo-result.yaml").read_text()
    (corpus / "zero.yaml").write_text(
        text.replace("fifo-result", "zero-result").replace(
            "os.mkfifo(sys.argv[2])", "os.symlink('/dev/zero', sys.argv[2])"
        )
    )
    done = run(tmp_path, "--corpus", str(corpus))
    assert done.returncode == 1, done.stderr
    (run_,) = runs(tmp_path).values()
    assert run_["outcome"] == "error" and "File exists" in run_["message"]


def test_text_from_a_child_or_a_corpus_is_shown_never_obeyed(
    hostile: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    where, done = hostile
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
    terminal = done.stdout + done.stderr
    assert "\x1b" not in terminal and "\x07" not in terminal
    for shown in ("[/]", "[nan, nan]", "[broadcast_shapes]", "\\x1b"):
        assert shown in done.stdout, shown  # the reason column, as the child wrote it
    summary = (where / "r.md").read_text(encoding="utf-8")
    assert "\\[a\\](http://x)" in summary and "\\*x\\*" in summary
    assert "[a](http://x)" not in summary.replace("\\[a\\](http://x)", "")
    for command in (["show", "hostile-title"], ["list"]):
        listed = subprocess.run(
            [*MGRADCHECK, *command, "--corpus", str(HOSTILE)],
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=True,
            env={**os.environ, "COLUMNS": "200"},  # the title on one line
        )
        assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout, command
        assert "\\x1b]0;pwned\\x07, [/] closes markup" in listed.stdout


def test_an_ascii_terminal_changes_nothing_but_how_text_looks(tmp_path: Path) -> None:
    for variables in ({"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}):
        env = {
            **os.environ,
            **variables,
            "PYTHONIOENCODING": variables.get("PYTHONIOENCODING", ""),
        }
        done = subprocess.run(
            [*MGRADCHECK, "run", "hostile-title", "--corpus", str(HOSTILE), "-v"],
            capture_output=True, timeout=WAIT, check=False, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert b"Traceback" not in done.stderr and b"hostile-title" in done.stdout
        # The run table has no title now; 'show' has it, its non-ASCII dash kept or escaped.
        shown = subprocess.run(
            [*MGRADCHECK, "show", "hostile-title", "--corpus", str(HOSTILE)],
            capture_output=True, timeout=WAIT, check=False, env=env,
        )  # fmt: skip
        assert shown.returncode == 0 and b"Traceback" not in shown.stderr
        assert b"\\u20" in shown.stdout or "\u2014".encode() in shown.stdout


def test_a_catastrophic_regex_costs_a_bounded_time_and_validate_warns(tmp_path: Path) -> None:
    corpus = FIXTURES / "patterns"
    done = run(tmp_path, "--corpus", str(corpus))
    assert done.returncode == 1, done.stderr
    (result,) = strict_json((tmp_path / "r.json").read_text())["results"]
    assert result["verdict"] == "UNEXPECTED"
    assert "ran past its 1s limit" in result["reason"]
    checked = subprocess.run(
        [*MGRADCHECK, "validate", str(corpus)], capture_output=True, text=True, timeout=WAIT
    )
    assert checked.returncode == 0, checked.stderr
    (warning,) = checked.stderr.splitlines()
    assert (
        warning.startswith("mgradcheck: warning: ") and "backtracks.yaml:8: bug.match:" in warning
    )


def test_a_child_that_signals_the_runner_is_named_and_the_run_goes_on(tmp_path: Path) -> None:
    done = run(tmp_path, "--corpus", str(FIXTURES / "signals"))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "a child signalled the runner" in done.stderr
    results = {r["id"]: r for r in strict_json((tmp_path / "r.json").read_text())["results"]}
    assert results["passes"]["verdict"] == "as expected"
    culprit = results["signals-its-parent"]
    assert culprit["outcome"] == "error"
    assert "sent SIGTERM to the mgradcheck runner" in culprit["runs"][0]["message"]


def test_a_sigterm_from_elsewhere_still_stops_the_run(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*MGRADCHECK, "run", "hangs", "--corpus", str(FIXTURES / "behaviours"), "--json", "r.json"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + WAIT
    while not (tmp_path / "r.json").exists():  # the first snapshot: the run has begun
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=WAIT)
    assert process.returncode == 143, stderr
    assert "interrupted by SIGTERM" in stderr


FAKE_MLX = (
    'float32 = "float32"\n__version__ = "1.0.0"\n\n\ndef default_device():\n    return {device!r}\n'
)
CONTROLS = "\x1b[31m\x07\x1b]0;pwned\x07"


def test_every_xml_report_is_well_formed_whatever_it_carries(tmp_path: Path) -> None:
    """ESC and BEL in the environment, in the corpus's path and in a label: JUnit and the badge,
    from a run, from a merge of its report and from ``badge``, all parse."""
    site = tmp_path / "site" / "mlx"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    (site / "core.py").write_text(FAKE_MLX.format(device=f"Device({CONTROLS}cpu, 0)"))
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site.parent} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    corpus = tmp_path / f"corpus{CONTROLS}"
    corpus.mkdir()
    (corpus / "raises.yaml").write_text((FIXTURES / "behaviours" / "raises.yaml").read_text())
    done = run(tmp_path, "--corpus", str(corpus), "--python", str(python))
    assert done.returncode == 1, done.stderr  # the entry's REGRESSED verdict, a failure in JUnit
    label = os.fsencode(f"mlx {CONTROLS}\udcff")  # a byte that is no UTF-8: a lone surrogate
    commands: list[list[str | bytes]] = [
        ["report", "merge", "r.json", "--junit", "merged.xml"],
        ["badge", "r.json", "--badge", "labelled.svg", "--label", label],
    ]
    for command in commands:
        made = subprocess.run(
            [*MGRADCHECK, *command], capture_output=True, text=True, timeout=WAIT, cwd=tmp_path
        )
        assert made.returncode == 0, made.stderr
    for name in ("r.xml", "b.svg", "merged.xml", "labelled.svg"):
        ET.parse(tmp_path / name)  # well-formed
    for name in ("r.xml", "merged.xml", "labelled.svg"):  # the run's badge shows no environment
        assert "\\x1b]0;pwned\\x07" in (tmp_path / name).read_text(encoding="utf-8"), name
