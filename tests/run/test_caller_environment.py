"""What the caller's environment may not change: the text encoding a child's output is read
in, and what running out of descriptors or processes means (the environment's failure, exit
3, the run stopped with what finished reported; never an entry's verdict).

Each test is a real ``python -m mgradcheck`` over entries written here (no MLX needed in
their code), as a user would run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_entry

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 120.0


def entry(id_: str, bug: str, code: str) -> str:
    body = "".join(f"  {line}\n" for line in code.strip().splitlines())
    return (
        f"id: {id_}\ntitle: A test entry\nsummary: Written by the test.\n"
        f'upstream: {{report: "https://example.invalid/{id_}"}}\n'
        f"bug: {bug}\ntimeout: 30\ncode: |\n{body}"
    )


def mgradcheck(
    where: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        cwd=where,
        env={**os.environ, **(env or {})},
        timeout=WAIT,
        check=False,
    )


def report(path: Path) -> dict[str, Any]:
    return {r["id"]: r for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


# Open bugs whose signature is a non-ASCII text: on stderr before a crash, in an exception's
# message (as MLX's own errors may hold), and one printed on stdout by an entry that passes.
NON_ASCII = {
    "crashes": (
        '{outcome: crash, match: "gradient ∞ différent"}',
        'import os, sys\nprint("gradient ∞ différent", file=sys.stderr, flush=True)\nos.abort()',
    ),
    "raises": (
        '{outcome: error, match: "shapes 2 ≠ 3"}',
        'raise ValueError("[grad] shapes 2 ≠ 3")',
    ),
    "prints": (
        '{outcome: fail, fixed_in: "0.1.0"}',
        'print("max |Δ| = 0 ✓")\nassert 1 + 1 == 2',
    ),
}
CALLERS = {
    "C locale, latin-1": {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "latin-1"},
    "C locale, ascii": {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"},
    "ascii, strict errors": {"PYTHONIOENCODING": "ascii:strict", "PYTHONUTF8": "0"},
}


@pytest.mark.parametrize("caller", CALLERS)
def test_the_callers_encoding_changes_no_verdict(caller: str, tmp_path: Path) -> None:
    for id_, (bug, code) in NON_ASCII.items():
        write_entry(tmp_path, id_, entry(id_, bug, code))
    done = mgradcheck(tmp_path, "run", "--corpus", ".", "--json", "r.json", env=CALLERS[caller])
    found = {
        id_: (r["runs"][0]["outcome"], r["verdict"])
        for id_, r in report(tmp_path / "r.json").items()
    }
    assert found == {
        "crashes": ("crash", "as expected"),
        "raises": ("error", "as expected"),
        "prints": ("pass", "as expected"),
    }, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gradient ∞ différent" in report(tmp_path / "r.json")["crashes"]["runs"][0]["stderr"]


SUITE = """\
import unittest


class Reports(unittest.TestCase):
    def test_prints_its_residual(self):
        print("max |Δ| = 0 ✓")
        with open("note.txt", "w") as f:  # the locale's encoding, unless told
            f.write("∞")
"""


@pytest.mark.parametrize("caller", CALLERS)
def test_the_callers_encoding_changes_no_suite_test(caller: str, tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_prints.py").write_text(SUITE, encoding="utf-8")
    done = mgradcheck(tmp_path, "tests", "suite", "--json", "r.json", env=CALLERS[caller])
    outcomes = [r["runs"][0]["outcome"] for r in report(tmp_path / "r.json").values()]
    assert (done.returncode, outcomes) == (0, ["pass"]), done.stdout + done.stderr
