"""Shell completion: the scripts, and entry ids, tags and release versions completed from what is here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.cli.completion import known_releases, remember_releases
from tests.conftest import BEHAVIOURS


def complete(words: str) -> list[str]:
    """What bash completion offers for the last word of ``words``, as Click answers bash."""
    argv = words.split()
    current = len(argv) - (0 if words.endswith(" ") else 1)
    result = subprocess.run(
        [sys.executable, "-m", "mgradcheck"],
        capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "_MGRADCHECK_COMPLETE": "bash_complete",
             "COMP_WORDS": words, "COMP_CWORD": str(current)},
    )  # fmt: skip
    return [line.split(",", 1)[1] for line in result.stdout.splitlines() if line]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_command_prints_a_script(shell: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "completion", shell],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "_MGRADCHECK_COMPLETE" in result.stdout and f"{shell}_complete" in result.stdout


def test_entry_ids_complete_from_the_corpus_named_so_far() -> None:
    assert complete(f"mgradcheck show --corpus {BEHAVIOURS} seg") == ["segfaults"]
    assert complete(f"mgradcheck run --corpus {BEHAVIOURS} pa") == ["passes"]
    assert "where-jvp-zero-tangent" in complete("mgradcheck bisect wh")  # the bundled corpus


def test_tags_complete() -> None:
    assert complete(f"mgradcheck run --corpus {BEHAVIOURS} --tag fi") == ["fixture"]
    assert complete(f"mgradcheck list --corpus {BEHAVIOURS} --tag ") == ["fixture"]


def test_release_versions_complete_from_what_envs_releases_listed(tmp_path: Path) -> None:
    assert known_releases() == set()
    remember_releases(["0.31.2", "0.29.1", "0.32.0"])
    assert complete("mgradcheck run --mlx 0.3") == ["0.31.2", "0.32.0"]
    assert complete("mgradcheck envs path 0.2") == ["0.29.1"]
    assert complete("mgradcheck bisect x --good ") == ["0.29.1", "0.31.2", "0.32.0"]


def test_a_broken_corpus_completes_nothing_and_breaks_nothing(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("id: [")
    assert complete(f"mgradcheck show --corpus {tmp_path} ") == []
