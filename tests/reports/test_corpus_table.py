"""``list --markdown``: the manual's corpus table, from a real command line over the bundled
corpus, and where an entry stands as its evidence says."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from mgradcheck.corpus.entry import Entry, Evidence
from mgradcheck.reports.corpus_table import GUARDS, SECTIONS, section, standing
from mgradcheck.run import stages

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
ENTRIES = stages.load_corpus([])


def _markdown(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, "list", "--markdown", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def _rows(text: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in text.splitlines()[2:]:
        first, *rest = line.strip("|").split(" | ")
        rows.setdefault(first.strip(), []).append(rest[-1].strip())
    return rows


def test_list_markdown_writes_every_entry_once_under_its_section(tmp_path: Path) -> None:
    done = _markdown("corpus.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "corpus.md").read_text(encoding="utf-8")
    rows = _rows(text)
    assert all(len(rows[e.id]) == 1 for e in ENTRIES), "every id once"
    assert len(text.splitlines()) == 2 + len(ENTRIES) + len({section(e) for e in ENTRIES})
    for title in ("Forward mode (jvp)", "Reverse mode and second order", "vmap", "mx.compile"):
        assert f"| **{title}** | | |" in text
    assert f"| **{GUARDS}** | | |" in text
    assert rows["where-jvp-zero-tangent"] == [
        "fails 0.26.1\u20130.31.2, fixed in 0.32.0 (on CUDA: fails 0.31.1)"
    ]
    assert rows["addmm-jvp-alpha-beta"][0].endswith("open in 0.32.4")
    assert rows["while-loop-gradient"][0].startswith("a guard")
    for entry in ENTRIES:  # the table says what each entry's YAML says
        fixed = entry.bug.fixed_in.get("cpu")
        if fixed is not None and "cpu" in entry.bug.affects:
            assert f"fixed in {fixed}" in rows[entry.id][0], entry.id
    assert "[mlx#3627](https://github.com/ml-explore/mlx/issues/3627)" in text
    # Its own earlier table is rewritten; the bare option is standard output, with no text listing.
    again = _markdown("corpus.md", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _markdown(cwd=tmp_path).stdout == text


def test_list_markdown_refuses_to_replace_someone_elses_file(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# my notes\n")
    done = _markdown("notes.md", cwd=tmp_path)
    assert done.returncode == 2 and "not an mgradcheck report" in done.stderr
    assert (tmp_path / "notes.md").read_text() == "# my notes\n"
    both = subprocess.run(
        [*MGRADCHECK, "list", "--json", "-", "--markdown", "-"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert both.returncode == 2 and both.stdout == ""
    assert both.stderr == "mgradcheck: error: only one report can go to standard output ('-')\n"


def _with(entry: Entry, *runs: tuple[str, str]) -> Entry:
    evidence = tuple(Evidence(mlx=mlx, backend="cpu", outcome=outcome) for mlx, outcome in runs)
    return dataclasses.replace(entry, evidence=evidence)


def test_a_pass_ends_a_range_and_alternating_outcomes_read_as_one() -> None:
    (entry,) = (e for e in ENTRIES if e.id == "compiled-checkpoint-exit-crash")
    flaky = _with(entry, ("0.31.0", "pass"), ("0.32.1", "crash"), ("0.32.2", "pass"))
    assert standing(flaky).startswith("crashes 0.32.1, ")
    mixed = [("0.30.0", "fail"), ("0.31.0", "crash"), ("0.31.1", "fail"), ("0.31.2", "skip")]
    assert standing(_with(entry, *mixed)).startswith("crashes/fails 0.30.0\u20130.31.1, ")
    two = _with(entry, ("0.30.0", "fail"), ("0.30.1", "pass"), ("0.31.0", "fail"))
    assert standing(two).startswith("fails 0.30.0, fails 0.31.0, ")


def test_sections_come_from_tags_and_a_guard_from_affecting_nothing() -> None:
    (where,) = (e for e in ENTRIES if e.id == "where-jvp-zero-tangent")
    assert section(where) == "Forward mode (jvp)"
    compiled = dataclasses.replace(where, tags=("compile", "jvp"))
    assert section(compiled) == "mx.compile"
    guard = dataclasses.replace(where, bug=dataclasses.replace(where.bug, affects=()))
    assert section(guard) == GUARDS
    assert section(dataclasses.replace(where, tags=("nothing-known",))) == "Other"
    assert len({title for title, _ in SECTIONS}) == len(SECTIONS)
