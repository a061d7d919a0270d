"""``tests --shard K/N``: a suite's shards, run and merged, equal the unsharded run (with and
without ``--matrix``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.builders import mgradcheck
from tests.conftest import SUITES
from tests.suites.conftest import RANGE

BASIC = str(SUITES / "basic")
CHOSEN = "passes or fails or test_skipped or helper_module or functions"


def outcomes(path: Path) -> list[tuple[str, str, str]]:
    return [(r["id"], r["outcome"], r["reason"]) for r in json.loads(path.read_text())["results"]]


def test_merged_shards_of_a_suite_equal_the_unsharded_run(tmp_path: Path) -> None:
    paths = []
    for k in (1, 2, 3):
        path = tmp_path / f"tests-{k}.json"
        run = mgradcheck(
            "tests", BASIC, "-k", CHOSEN, "-q", "--shard", f"{k}/3", "--json", str(path)
        )
        assert run.returncode in (0, 1), run.stderr
        paths.append(path)
    whole, merged = tmp_path / "whole.json", tmp_path / "merged.json"
    run = mgradcheck("tests", BASIC, "-k", CHOSEN, "-q", "--json", str(whole))
    assert run.returncode in (0, 1), run.stderr
    assert len(outcomes(whole)) >= 5 and all(outcomes(p) for p in paths)
    done = mgradcheck("report", "merge", *map(str, reversed(paths)), "--json", str(merged))
    assert done.returncode == 0, done.stderr
    assert outcomes(merged) == outcomes(whole)
    # Another selection's shard does not merge with these, in one line.
    other = tmp_path / "other-3.json"
    run = mgradcheck("tests", BASIC, "-k", "passes", "-q", "--shard", "3/3", "--json", str(other))
    assert run.returncode in (0, 1), run.stderr
    refused = mgradcheck("report", "merge", str(paths[0]), str(paths[1]), str(other), "--json", "-")
    assert refused.returncode == 2 and refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert "are shards of different selections" in line and str(other) in line


def judged(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e["id"], {v: (c["state"], c["outcome"], c["reason"]) for v, c in e["cells"].items()})
        for e in data["entries"]
    ]


def test_merged_shards_of_a_suites_matrix_equal_the_unsharded_matrix(
    fake_wheels: Path, tmp_path: Path
) -> None:
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q"]
    suite = ["tests", str(SUITES / "releases"), "--matrix", "--versions", RANGE, *source]
    paths = []
    for k in (1, 2):
        path = tmp_path / f"matrix-{k}.json"
        run = mgradcheck(*suite, "--shard", f"{k}/2", "--json", str(path))
        assert run.returncode == 0, run.stderr
        paths.append(path)
    whole, merged, summary = tmp_path / "whole.json", tmp_path / "m.json", tmp_path / "m.md"
    run = mgradcheck(*suite, "--json", str(whole), "--markdown", str(tmp_path / "whole.md"))
    assert run.returncode == 0, run.stderr
    done = mgradcheck(
        "report", "merge", *map(str, paths), "--json", str(merged), "--summary", str(summary)
    )
    assert done.returncode == 0, done.stderr
    assert judged(json.loads(merged.read_text())) == judged(json.loads(whole.read_text()))
    assert summary.read_text() == (tmp_path / "whole.md").read_text()
