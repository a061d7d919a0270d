"""``matrix --shard K/N`` over fake releases: the shards merge into the unsharded matrix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.releases import matrix_report
from tests import fake_mlx

IDS = ("fixed-in-1-3", "broke-in-1-4", "fixed-in-1-6")


def matrix(wheels: Path, *args: str) -> Any:
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu", "-q"]
    command = [
        "matrix",
        *IDS,
        "--corpus",
        str(fake_mlx.FIXTURES),
        *source,
        "--versions",
        ">=1.2,<1.5",
    ]
    return CliRunner().invoke(cli, [*command, *args])


def judged(data: dict[str, Any]) -> dict[str, Any]:
    """A matrix's findings: what was run, and what each cell and flip says (not how long it
    took, nor whether it came from the results store)."""
    entries = [
        {**e, "cells": {v: {k: c[k] for k in ("state", "outcome", "reason")} for v, c in e["cells"].items()}}
        for e in data["entries"]
    ]  # fmt: skip
    return {"releases": data["releases"], "regress_on": data["regress_on"], "entries": entries}


@pytest.fixture
def shards(fake_wheels: Path, tmp_path: Path) -> list[Path]:
    paths = []
    for k in (1, 2):
        path = tmp_path / f"matrix-{k}.json"
        result = matrix(fake_wheels, "--shard", f"{k}/2", "--json", str(path))
        assert result.exit_code == 0, result.output
        paths.append(path)
    return paths


def test_merged_shards_equal_the_unsharded_matrix(
    fake_wheels: Path, shards: list[Path], tmp_path: Path
) -> None:
    whole, merged, summary = tmp_path / "whole.json", tmp_path / "m.json", tmp_path / "m.md"
    result = matrix(fake_wheels, "--json", str(whole))
    assert result.exit_code == 0, result.output
    parts = [json.loads(p.read_text()) for p in shards]
    assert [len(p["entries"]) for p in parts] == [2, 1]
    assert all(
        c["seconds"] is not None for p in parts for e in p["entries"] for c in e["cells"].values()
    )
    done = CliRunner().invoke(
        cli, ["report", "merge", *map(str, reversed(shards)), "--json", str(merged), "--summary", str(summary)]
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "merged 2 matrix reports: 3 entries x 3 releases" in done.output
    assert judged(json.loads(merged.read_text())) == judged(json.loads(whole.read_text()))
    text = summary.read_text()
    assert text.startswith("### MLX releases against the mgradcheck corpus")
    assert "| 1.3.0 | pass | **→ pass** | fail |" in text


def test_shards_that_ran_on_other_releases_are_refused(shards: list[Path], tmp_path: Path) -> None:
    later = json.loads(shards[1].read_text())
    later["releases"].append("1.4.1")
    changed = tmp_path / "later-2.json"
    changed.write_text(json.dumps(later))
    done = CliRunner().invoke(cli, ["report", "merge", str(shards[0]), str(changed), "--json", "-"])
    assert done.exit_code == 2
    assert "are matrices of different releases" in done.output and str(changed) in done.output


def test_a_missing_or_repeated_matrix_shard_is_refused(shards: list[Path]) -> None:
    alone = CliRunner().invoke(cli, ["report", "merge", str(shards[0]), "--json", "-"])
    assert alone.exit_code == 2 and "no report for shard" in alone.output and "2/2" in alone.output
    twice = CliRunner().invoke(
        cli, ["report", "merge", str(shards[0]), str(shards[0]), "--json", "-"]
    )
    assert twice.exit_code == 2 and "shard 1/2 of" in twice.output and "is in both" in twice.output


def test_a_matrix_reads_back_from_its_json(shards: list[Path]) -> None:
    data = json.loads(shards[0].read_text())
    back = matrix_report.read(data, "m.json")
    assert [e.id for e in back.entries] == [e["id"] for e in data["entries"]]
    assert back.to_json()["entries"] == data["entries"]
    with pytest.raises(ValueError, match=r"^m\.json: not a valid mgradcheck matrix"):
        matrix_report.read({**data, "releases": ["not a version"]}, "m.json")
