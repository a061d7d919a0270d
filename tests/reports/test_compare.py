"""``mgradcheck report compare``: two real runs on fake MLX releases, compared by a real command.

The base runs fake MLX 1.3.0, the head 1.4.0 (standing in for a branch): one entry's bug
stops reproducing, one fixed bug comes back, one fails differently, one stays as it was,
and one entry is in the base's run only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_entry

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
ENTRY = """\
id: {id}
title: A fake bug for compare
summary: Used by the tests of report compare.
upstream: {{report: "https://example.invalid/{id}"}}
bug: {{outcome: fail{fixed}}}
timeout: 20
code: |
  v = tuple(int(p) for p in mx.__version__.split(".")[:2])
  {check}
"""
ENTRIES = {
    # open bug, gone from 1.4: the head fixes it
    "open-until-1-4": ("", 'assert_true(v >= (1, 4), "broken before 1.4")'),
    # fixed in 1.0, back in 1.4: the head breaks it (REGRESSED)
    "back-in-1-4": (', fixed_in: "1.0.0"', 'assert_true(v < (1, 4), "back since 1.4")'),
    # an open bug that fails differently on each: changed
    "reason-moves": ("", 'assert_true(False, f"wrong on {mx.__version__} <b>@team|x</b>")'),
    "steady": ("", 'assert_true(False, "always broken")'),
    "gone-in-head": ("", 'assert_true(False, "always broken")'),
}


def _run(corpus: Path, version: str, wheels: Path, out: Path, *ids: str) -> None:
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]
    args = ["run", *ids, "--corpus", str(corpus), "--mlx", version, *source, "--json", str(out)]
    done = subprocess.run([*MGRADCHECK, *args, "-q"], capture_output=True, text=True, timeout=300)
    assert out.is_file(), done.stdout + done.stderr


def _reports(tmp_path: Path, wheels: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, (fixed, check) in ENTRIES.items():
        write_entry(corpus, name, ENTRY.format(id=name, fixed=fixed, check=check))
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    _run(corpus, "1.3.0", wheels, base)
    _run(corpus, "1.4.0", wheels, head, *(n for n in ENTRIES if n != "gone-in-head"))
    return base, head


def test_compare_lists_fixed_broken_changed_and_exits_1(fake_wheels: Path, tmp_path: Path) -> None:
    base, head = _reports(tmp_path, fake_wheels)
    md = tmp_path / "pr.md"
    args = ["report", "compare", str(base), str(head), "--markdown", str(md)]
    done = subprocess.run([*MGRADCHECK, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    sections = {
        title: out.split(title, 1)[1].split("\n\n", 1)[0]
        for title in ("BROKEN (1)", "FIXED (1)", "CHANGED (1)", "ONLY IN BASE (1)")
    }
    assert "back-in-1-4" in sections["BROKEN (1)"] and "REGRESSED" in sections["BROKEN (1)"]
    assert "open-until-1-4" in sections["FIXED (1)"] and "FIXED" in sections["FIXED (1)"]
    assert "reason-moves" in sections["CHANGED (1)"] and "1.4.0" in sections["CHANGED (1)"]
    assert "gone-in-head" in sections["ONLY IN BASE (1)"]
    assert "steady" not in out and "1 unchanged" in out
    text = md.read_text()
    assert "#### Broken (1)" in text and "`back-in-1-4`" in text
    assert "<b>" not in text and "&lt;b&gt;" in text and "@team" not in text  # escaped


def test_compare_exits_0_when_nothing_broke(fake_wheels: Path, tmp_path: Path) -> None:
    _, head = _reports(tmp_path, fake_wheels)
    args = ["report", "compare", str(head), str(head), "--markdown", "-"]
    done = subprocess.run([*MGRADCHECK, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No entry differs." in done.stdout and "5 unchanged" not in done.stdout
    assert "4 unchanged" in done.stderr


def test_compare_of_a_malformed_report_is_one_line_and_exit_2(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"schema": "mgradcheck-report", "schema_version": 1}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "mgradcheck-report", "schema_version": 1, "results": "x"}))
    args = ["report", "compare", str(good), str(bad)]
    done = subprocess.run([*MGRADCHECK, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in done.stderr
