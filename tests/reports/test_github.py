"""GitHub annotations: one workflow command per verdict that needs a person, at its entry's line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mgradcheck.outcomes import Verdict
from mgradcheck.reports.github import annotate, annotation, in_actions
from tests import builders
from tests.conftest import BEHAVIOURS


def test_levels_follow_the_verdicts_tone(tmp_path: Path) -> None:
    report = builders.every_verdict()
    commands = annotate(report, {}, {"GITHUB_WORKSPACE": str(Path.cwd())})
    levels = {c.split(" ", 1)[0] for c in commands}
    assert levels == {"::error", "::warning"}
    failing = [v for v in Verdict if v.is_failure]
    assert len(commands) == len(failing)
    assert commands[0].startswith(
        "::error file=corpus/regressed.yaml,title=mgradcheck%3A regressed REGRESSED::"
    )


def test_messages_and_properties_are_escaped(tmp_path: Path) -> None:
    result = builders.result(
        "odd", Verdict.REGRESSED, reason="100% wrong\nsecond line, with: colon"
    )
    line = annotation(result, 7, Path.cwd())
    assert line is not None
    head, message = line.split("::", 2)[1:]
    assert head == "error file=corpus/odd.yaml,line=7,title=mgradcheck%3A odd REGRESSED"
    assert "100%25 wrong%0Asecond line, with: colon" in message and "\n" not in line


def test_a_childs_escape_sequences_and_newlines_cannot_forge_a_command() -> None:
    result = builders.result(
        "odd", Verdict.UNEXPECTED, reason="\x1b]0;retitled\x07\x1b[2J\n::error file=x::forged\r"
    )
    line = annotation(result, 1, Path.cwd())
    assert line is not None and line.startswith("::error file=")  # one command, on one line
    assert not any(c in line for c in "\x1b\x07\n\r")
    assert "\\x1b]0;retitled\\x07\\x1b[2J%0A::error file=x::forged" in line


def test_an_entry_outside_the_checkout_gets_no_file(tmp_path: Path) -> None:
    result = builders.result("x", Verdict.UNEXPECTED)
    line = annotation(result, 3, tmp_path)
    assert line is not None and "file=" not in line and "line=" not in line
    assert annotation(builders.result("ok"), 1, tmp_path) is None


def test_run_annotates_inside_github_actions_only(tmp_path: Path) -> None:
    def run(**env: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(BEHAVIOURS), "passes",
             "segfaults", "-q"],
            capture_output=True, text=True, timeout=120, check=False, cwd=BEHAVIOURS.parent,
            env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"} | env,
        ).stdout  # fmt: skip

    assert in_actions({"GITHUB_ACTIONS": "true"}) and not in_actions({})
    inside = run(GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(BEHAVIOURS.parent.parent.parent))
    assert "::error file=tests/fixtures/behaviours/segfaults.yaml,line=1," in inside
    assert inside.count("::error") == 1
    assert "::" not in run()
