"""validate warns about a bug signature that would take any failure for its bug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.signatures import CRASHES, GENERIC, one_fault, too_broad
from mgradcheck.outcomes import Outcome

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
FAIL, CRASH, TIMEOUT = (Outcome.FAIL,), (Outcome.CRASH,), (Outcome.TIMEOUT,)

ENTRY = """\
id: {id}
title: t
summary: s
upstream: {{report: "https://example.invalid/report"}}
bug:
  outcome: {outcome}
{match}code: |
  assert_true(False, "jvp of f: observed 0, expected 1")
"""


@pytest.mark.parametrize(
    "match",
    [".", ".*", "x?", "SIG", "killed by SIG", "killed by", "SIG[A-Z]+", "Error",
     "Traceback", "AssertionError", "CheckFailed", "assert_close", "observed", "compiled",
     "RuntimeError", "Fatal Python error", "raised|Exception", "without a result"],
)  # fmt: skip
def test_a_match_any_failure_fits_is_too_broad(match: str) -> None:
    assert too_broad(match, (Outcome.FAIL, Outcome.CRASH)) is not None


@pytest.mark.parametrize(
    "match",
    ["jvp of mx\\.arctan2", "killed by SIGSEGV", "killed by SIG(SEGV|ABRT)", "SIGSEGV[\\s\\S]*in replay", "Segmentation fault",
     "RuntimeError: \\[compile\\] Failed to compile", "GatherMM cannot infer output shapes",
     "raised IndexError"],
)  # fmt: skip
def test_a_match_that_names_its_bug_or_its_signal_passes(match: str) -> None:
    assert too_broad(match, (Outcome.FAIL, Outcome.CRASH)) is None


def test_no_match_is_too_broad_for_a_failure_but_not_for_a_timeout() -> None:
    for outcomes in (FAIL, CRASH, (Outcome.ERROR,)):
        assert "none is given" in str(too_broad(None, outcomes))
    assert too_broad(None, TIMEOUT) is None
    assert too_broad(".*", TIMEOUT) is None


def test_the_generic_texts_hold_what_a_child_writes() -> None:
    """The probes are the child's real framing: a traceback through bootstrap, a check's frame."""
    text = "\n".join(GENERIC)
    for fragment in ("in _run_code", "raise CheckFailed", "in <module>", "ValueError: "):
        assert fragment in text
    assert [c.splitlines()[0] for c in CRASHES][:2] == ["killed by SIGSEGV", "killed by SIGABRT"]


@pytest.mark.parametrize(
    ("match", "tags", "warned"),
    [("killed by SIGSEGV|jvp of f", ("out-of-bounds",), True),
     ("Segmentation fault", ("jvp", "out-of-bounds"), True),
     ("killed by SIG(SEGV|BUS)", ("out-of-bounds",), True),
     ("killed by SIG(SEGV|ABRT|BUS)|jvp of f", ("out-of-bounds",), False),
     # a deterministic abort (an uncaught range check) names its one signal
     ("raised IndexError|killed by SIGABRT", ("out-of-bounds",), False),
     # a stack overflow always dies of a segfault
     ("killed by SIGSEGV", ("recursion",), False),
     ("jvp of f", ("out-of-bounds",), False)],
)  # fmt: skip
def test_an_out_of_bounds_crash_takes_every_signal_a_read_of_garbage_gives(
    match: str, tags: tuple[str, ...], warned: bool
) -> None:
    why = one_fault(match, tags)
    assert (why is not None) == warned, why
    assert why is None or "SIG(SEGV|ABRT|BUS)" in why


def entry(folder: Path, name: str, outcome: str, match: str | None) -> None:
    line = "" if match is None else f"  match: {match!r}\n"
    (folder / f"{name}.yaml").write_text(ENTRY.format(id=name, outcome=outcome, match=line))


def test_validate_warns_with_file_line_and_field_and_still_passes(tmp_path: Path) -> None:
    entry(tmp_path, "any-signal", "[crash, fail]", "killed by SIG|jvp of f")
    entry(tmp_path, "no-match", "crash", None)
    entry(tmp_path, "named", "[fail, crash]", "jvp of f|killed by SIG(SEGV|ABRT)")
    entry(tmp_path, "timeout-only", "timeout", None)
    entry(tmp_path, "word", "fail", "Error")
    done = subprocess.run(
        [*MGRADCHECK, "validate", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5 entries valid\n"
    assert "Traceback" not in done.stderr
    warnings = done.stderr.splitlines()
    assert [w.split(": bug.match: ")[0] for w in warnings] == [
        f"mgradcheck: warning: {tmp_path / 'any-signal.yaml'}:7",
        f"mgradcheck: warning: {tmp_path / 'no-match.yaml'}:6",
        f"mgradcheck: warning: {tmp_path / 'word.yaml'}:7",
    ]
    assert "matches a crash by any signal" in warnings[0]
    assert "none is given" in warnings[1]
    assert "matches what any failure shows" in warnings[2]


def test_every_bundled_entry_names_its_bug() -> None:
    done = subprocess.run(
        [*MGRADCHECK, "validate", str(bundled_corpus())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
