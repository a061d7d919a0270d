"""What ``validate`` says of an entry ``new`` left half written, and of a scalar field."""

from __future__ import annotations

from pathlib import Path

from tests.builders import mgradcheck

ENTRY = """\
id: left-over
title: "TODO: one line saying what goes wrong."
summary: "TODO: what goes wrong and why, in your own words (corpus/README.md)."
upstream: {{report: "https://example.invalid/report"}}
bug: {{outcome: {outcome}, match: "grad of x at 3"}}
code: |
  assert_true(True, "ok")
"""


def test_validate_warns_of_the_todo_new_wrote(tmp_path: Path) -> None:
    (tmp_path / "entry.yaml").write_text(ENTRY.format(outcome="fail"))
    done = mgradcheck("validate", "entry.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "mgradcheck: warning: entry.yaml:2: title: still the TODO that 'mgradcheck new' wrote",
        "mgradcheck: warning: entry.yaml:3: summary: still the TODO that 'mgradcheck new' wrote",
    ]


def test_a_scalar_outcome_is_not_called_a_list_item(tmp_path: Path) -> None:
    (tmp_path / "entry.yaml").write_text(ENTRY.format(outcome="fial"))
    done = mgradcheck("validate", "entry.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "mgradcheck: error: entry.yaml:5: bug.outcome: 'fial' is not one of fail, crash, error, "
        "timeout"
    ]
    (tmp_path / "entry.yaml").write_text(ENTRY.format(outcome="[fail, fial]"))
    listed = mgradcheck("validate", "entry.yaml", cwd=tmp_path)
    assert "entry.yaml:5: bug.outcome[1]: 'fial' is not one of" in listed.stderr
