"""The end of a run: what needs attention, whole and wrapped between words; one summary line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import attention
from mgradcheck.wording import wrap
from tests import builders
from tests.conftest import BEHAVIOURS, FIXTURES

# A REGRESSED entry whose reason is far longer than any terminal: every word must reach the log.
WORDS = " ".join(f"word{n:02d}" for n in range(40))
LONG = f"""id: long-reason
title: An entry whose failure says a great deal
summary: A fixture entry for the display's own tests; needs no MLX.
upstream: {{report: "https://example.invalid/fixture"}}
tags: [fixture]
bug: {{outcome: fail, match: "word", affects: [cpu], fixed_in: "0.0.1"}}
timeout: 20
code: |
  assert_true(False, "{WORDS} https://example.invalid/a/very/long/link/that/must/stay/whole/{"x" * 60}\\nand a second line of what differed")
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("passes", "raises"):
        shutil.copy(BEHAVIOURS / f"{name}.yaml", folder)
    shutil.copy(FIXTURES / "verdicts" / "fixed-upstream.yaml", folder)
    (folder / "long-reason.yaml").write_text(LONG)
    return folder


def run(corpus: Path, columns: str | None, *more: str) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(corpus), *more],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("columns", ["80", None])
def test_a_run_shows_only_what_needs_attention_whole(corpus: Path, columns: str | None) -> None:
    result = run(corpus, columns)
    assert result.returncode == 1, result.stderr
    out = result.stdout.splitlines()
    heads = [line.split()[:2] for line in out if not line.startswith(" ")]
    assert heads[:-1] == [["FIXED", "fixed-upstream"], ["REGRESSED", "long-reason"],
                          ["REGRESSED", "raises"]]  # fmt: skip
    assert out[-1].startswith("4 entries: 2 REGRESSED, 1 FIXED, 1 as expected")
    assert "passes" not in result.stdout  # as expected: counted, not listed
    text = " ".join(result.stdout.split())
    assert WORDS in text and "\N{HORIZONTAL ELLIPSIS}" not in result.stdout  # never cut
    assert "and a second line of what differed" in text  # all the child said, not its first line
    link = next(word for word in result.stdout.split() if word.startswith("https://"))
    assert link.endswith("x" * 60)  # a URL stands whole, on a line of its own
    if columns is None:  # a pipe with no width: each line whole, none wrapped
        assert any(WORDS in line for line in out)
    else:  # wrapped between words: past 80 only a long word, or a command, alone on its line
        command = "        mgradcheck bisect "
        assert all(len(line) <= 80 or len(line.split()) == 1 or line.startswith(command)
                   for line in out), out  # fmt: skip
        assert all(line == line.rstrip() for line in out)


def test_a_fixed_entry_says_what_to_change_and_how_to_find_the_release(corpus: Path) -> None:
    out = run(corpus, "80").stdout.splitlines()
    start = out.index(next(line for line in out if line.startswith("FIXED fixed-upstream")))
    block = out[start : start + 6]
    file = corpus / "fixed-upstream.yaml"
    line = 1 + file.read_text().splitlines().index(
        next(line for line in file.read_text().splitlines() if line.startswith("bug:"))
    )
    assert block[3] == f"        {file}:{line}"  # the path whole, on a line of its own
    assert block[5] == f"        mgradcheck bisect fixed-upstream --corpus {corpus}"


def test_verbose_shows_the_table_of_every_entry(corpus: Path) -> None:
    out = run(corpus, "100", "-v").stdout.splitlines()
    assert out[0].split() == ["id", "outcome", "verdict", "time", "reason"]
    assert [line.split()[0] for line in out[2:6]] == [
        "fixed-upstream", "long-reason", "passes", "raises"
    ]  # fmt: skip


def test_a_log_gets_a_mark_per_entry_not_a_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(BEHAVIOURS), "passes",
         "raises", "-j", "1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    progress = result.stderr.splitlines()
    assert len(progress) == 2 and re.fullmatch(r"\.R +\[2/2\]", progress[1]), progress


def test_needs_attention_follows_the_standing() -> None:
    def result(verdict: Verdict, outcome: Outcome | None = None, flaky: bool = False) -> bool:
        return attention.needs_attention(builders.result("x", verdict, outcome, flaky=flaky))

    assert result(Verdict.REGRESSED) and result(Verdict.FIXED) and result(Verdict.UNEXPECTED)
    assert not result(Verdict.AS_EXPECTED) and not result(Verdict.SKIPPED)
    assert not result(Verdict.NOT_RUN)  # counted on its own line
    assert result(Verdict.AS_EXPECTED, Outcome.CRASH, flaky=True)
    assert result(Verdict.AS_EXPECTED, Outcome.TIMEOUT)


def test_wrap_breaks_between_words_and_keeps_long_words_whole() -> None:
    text = "a sentence that goes on " + "/a/path/" + "p" * 50 + " and ends"
    lines = wrap(text, 30, "  ")
    assert all(line.startswith("  ") for line in lines)
    assert "  /a/path/" + "p" * 50 in lines  # longer than the width, alone and whole
    assert " ".join(" ".join(lines).split()) == text
    assert wrap(text, None, "  ") == ["  " + text]  # no width known: kept whole
    assert wrap("Traceback:\n  File x\n\nend", 80) == ["Traceback:", "  File x", "", "end"]
