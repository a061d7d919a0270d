"""Stored runs answer only for the build of MLX that made them: a wheel built from a branch
is not its version's release (fake wheels, real installs and children)."""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from mgradcheck.releases import on_release
from mgradcheck.releases.store import ResultsStore
from tests import fake_mlx
from tests.conftest import write_entry

V = Version("1.2.0")
# The fake releases 1.2 and 1.3 halve grad; the branch build of 1.2.0 does not.
HALVED = """\
id: halved-grad
title: grad of x*x at 3 is halved
summary: Used by the tests.
upstream: {report: "https://example.invalid/halved-grad"}
bug: {outcome: fail, match: "halved", fixed_in: "1.4.0"}
code: |
  d = mx.grad(lambda x: x * x)(3.0)
  assert_true(abs(d - 6.0) < 1e-3, f"halved: {d}")
"""


def halved(tmp_path: Path) -> Entry:
    (entry,) = load([write_entry(tmp_path, "halved-grad", HALVED)])
    return entry


def outcomes(wheels: Path, store: ResultsStore, entry: Entry) -> tuple[bool, list[Outcome]]:
    """Whether the release's runs came from the store, and their outcomes."""
    (run,) = on_release.run_release(V, [entry], fake_mlx.settings(wheels, store))
    return run.cached, [r.outcome for r in run.runs]


def test_a_branch_build_never_reuses_its_release_runs_nor_the_reverse(
    fake_wheels: Path, tmp_path: Path
) -> None:
    store, entry = ResultsStore(tmp_path / "results"), halved(tmp_path)
    branch = fake_mlx.branch_build(fake_wheels, tmp_path / "branch", "1.2.0")
    assert outcomes(fake_wheels, store, entry) == (False, [Outcome.FAIL])
    assert outcomes(branch, store, entry) == (False, [Outcome.PASS])  # ran, on its own build
    assert outcomes(fake_wheels, store, entry) == (True, [Outcome.FAIL])
    assert outcomes(branch, store, entry) == (True, [Outcome.PASS])


def test_a_bisect_of_a_branch_build_runs_it(fake_wheels: Path, tmp_path: Path) -> None:
    """``bisect --find-links DIR``: DIR's 1.2.0, built from a branch, is probed, not the release's runs."""
    from click.testing import CliRunner

    from mgradcheck.cli import cli

    entry = halved(tmp_path)
    branch = fake_mlx.branch_build(fake_wheels, tmp_path / "branch", "1.2.0")
    verdicts = {}
    for name, wheels in (("release", fake_wheels), ("branch", branch)):
        report = tmp_path / f"{name}.json"
        args = ["bisect", entry.id, "--corpus", str(tmp_path), "--json", str(report), "-q"]
        args += ["--no-index", "--find-links", str(wheels), "--good", "1.4.0", "--bad", "1.2.0"]
        done = CliRunner().invoke(cli, args)
        assert "Traceback" not in done.output and report.exists(), done.output
        probes = json.loads(report.read_text())["probes"]
        verdicts[name] = {p["version"]: (p["state"], p["cached"]) for p in probes}
    assert verdicts["release"]["1.2.0"] == ("bad", False)
    assert verdicts["branch"]["1.2.0"] == ("good", False)  # its own runs: the branch fixed it
    assert verdicts["branch"]["1.4.0"] == ("good", True)  # the same wheel: its runs are reused


def test_runs_stored_without_their_build_are_run_again(fake_wheels: Path, tmp_path: Path) -> None:
    store, entry = ResultsStore(tmp_path / "results"), halved(tmp_path)
    assert outcomes(fake_wheels, store, entry) == (False, [Outcome.FAIL])
    (path,) = store.root.glob("*/*.json")
    old = json.loads(path.read_text())
    del old["build"]
    old.update(schema_version=1, runs=[{**run, "outcome": "pass"} for run in old["runs"]])
    path.unlink()  # as the store kept it before: no build in its name or in it
    (store.root / entry.content_hash / f"{old['platform']}-cpu-1.2.0.json").write_text(
        json.dumps(old)
    )
    assert outcomes(fake_wheels, store, entry) == (False, [Outcome.FAIL])
