"""The README a reader meets first, and the manual's pages that hold figures of the code.

The manual itself is built by ``make docs`` (``mkdocs build --strict``, run by CI before the
tests): a broken link or anchor fails that build. These tests hold what it cannot see.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from mgradcheck.reports.corpus_table import fill
from mgradcheck.run import stages

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def test_the_readme_fits_a_screen_and_opens_with_its_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert lines[:6] == [
        "# mgradcheck",
        "",
        "```sh",
        "make run    # creates .venv (MLX's CPU backend on Linux) and runs the bundled corpus",
        "make test   # creates .venv and runs the test suite",
        "```",
    ]


def test_the_readmes_links_to_files_of_this_repository_lead_somewhere() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert "docs/corpus.md" in local and "docs/reliability.md" in local
    assert [link for link in local if not (ROOT / link).exists()] == []


def _nav_pages(nav: list[object]) -> list[str]:
    pages: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_every_page_of_the_manual_is_in_its_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = _nav_pages(config["nav"])
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert sorted(pages) == on_disk


def test_the_corpus_page_gets_every_figure_and_the_table_from_the_corpus() -> None:
    entries = stages.load_corpus([ROOT / "corpus"])
    page = fill((DOCS / "corpus.md").read_text(encoding="utf-8"), entries)
    assert "{{" not in page
    assert f"{len(entries)} entries" in page
    assert all(f"\n| {e.id} | " in page for e in entries)


def test_the_sweep_page_gives_the_catalogue_sweep_list_counts() -> None:
    listed = subprocess.run(
        [*MGRADCHECK, "sweep", "--list"], capture_output=True, text=True, timeout=120, check=True
    ).stdout.splitlines()[-1]
    assert re.fullmatch(r"\d+ cases, \d+ runs over [a-z0-9, ]+", listed), listed
    page = " ".join((DOCS / "sweep.md").read_text(encoding="utf-8").split())
    assert f"a catalogue of {listed} (as `sweep --list` counts them" in page
