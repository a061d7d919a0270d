"""``mgradcheck report``: what ``report upstream`` says before it installs releases."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.conftest import BEHAVIOURS


def test_upstream_says_it_installs_a_release_before_it_does(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))  # nothing installed yet
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu"]
    args = ["report", "upstream", "passes", "--corpus", str(BEHAVIOURS), *source, "-q"]
    first = CliRunner().invoke(cli, [*args, "--releases", "==1.4.0"])
    assert first.exit_code == 0, first.output
    said = "mgradcheck: note: installing mlx 1.4.0 (cpu) into a cached environment first"
    assert said in first.output and first.output.index(said) < first.output.index("## ")
    again = CliRunner().invoke(cli, [*args, "--releases", "==1.4.0"])
    assert again.exit_code == 0 and "note: installing" not in again.output
