"""matrix over fake MLX releases: the table, its flips, its Markdown and JSON, and the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.corpus.loader import load
from mgradcheck.envs import venvs
from mgradcheck.releases import on_release, release_matrix
from mgradcheck.releases.matrix_report import matrix_view
from mgradcheck.releases.regress import State
from mgradcheck.releases.store import ResultsStore
from mgradcheck.reports.matrix import render_markdown
from tests import fake_mlx

IDS = ("fixed-in-1-3", "broke-in-1-4", "fixed-in-1-6")
V = Version


def run(wheels: Path, store: ResultsStore) -> release_matrix.Matrix:
    entries = [e for e in load([fake_mlx.FIXTURES]) if e.id in IDS]
    versions = [V(v) for v in fake_mlx.VERSIONS]
    return release_matrix.run_matrix(entries, versions, fake_mlx.settings(wheels, store), jobs=2)


def test_every_entry_on_every_release(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(fake_wheels, ResultsStore(tmp_path))
    assert not result.interrupted
    row = {str(v): result.cell("fixed-in-1-3", v).outcome for v in result.versions}
    assert row == {
        "1.0.0": "fail",
        "1.1.0": "fail",
        "1.2.0": "fail",
        "1.3.0": "pass",
        "1.4.0": "pass",
        "1.5.0": "unavailable",
        "1.6.0": "pass",
    }
    assert result.cell("fixed-in-1-3", V("1.5.0")).state is State.UNKNOWN
    flips = {i: [(str(f.before), str(f.after), f.now.label) for f in result.flips(i)] for i in IDS}
    assert flips == {
        "fixed-in-1-3": [("1.2.0", "1.3.0", "good")],
        "broke-in-1-4": [("1.3.0", "1.4.0", "bad")],
        "fixed-in-1-6": [("1.4.0", "1.6.0", "good")],
    }

    def nothing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored release was installed or run again")

    monkeypatch.setattr(venvs, "run_logged", nothing)  # no installer
    monkeypatch.setattr(on_release, "prepare", nothing)  # no child
    again = run(fake_wheels, ResultsStore(tmp_path))
    stored = [again.cell(i, v) for i in IDS for v in again.versions if v != V("1.5.0")]
    assert all(c.cached for c in stored)
    assert {i: again.flips(i) for i in IDS} == {i: result.flips(i) for i in IDS}


def test_markdown_and_json(fake_wheels: Path, tmp_path: Path) -> None:
    result = run(fake_wheels, ResultsStore(tmp_path))
    text = render_markdown(matrix_view(result))
    lines = text.splitlines()
    assert lines[2] == "| MLX | `broke-in-1-4` | `fixed-in-1-3` | `fixed-in-1-6` |"  # corpus order
    assert lines[4].startswith("| 1.6.0 |")  # newest first, as in a release note
    assert "| 1.3.0 | pass | **→ pass** | fail |" in lines
    assert "| 1.4.0 | **→ fail** | pass | fail |" in lines
    assert "| 1.5.0 | _n/a_ | _n/a_ | _n/a_ |" in lines  # not installable: unknown
    assert (
        "- `fixed-in-1-3`: bad through 1.2.0, good from 1.3.0 (corpus: fixed_in 1.3.0) "
        "([compare](https://github.com/ml-explore/mlx/compare/v1.2.0...v1.3.0))"
    ) in lines
    assert (
        "- `broke-in-1-4`: good through 1.3.0, bad from 1.4.0 (corpus: introduced_in 1.4.0)" in text
    )
    data = result.to_json()
    assert data["schema"] == "mgradcheck-matrix" and data["releases"][0] == "1.0.0"
    (first,) = [e for e in data["entries"] if e["id"] == "fixed-in-1-3"]
    assert first["cells"]["1.0.0"]["state"] == "bad"
    assert first["flips"] == [
        {
            "before": "1.2.0",
            "after": "1.3.0",
            "was": "bad",
            "now": "good",
            "compare": "https://github.com/ml-explore/mlx/compare/v1.2.0...v1.3.0",
        }
    ]


def test_the_command(fake_wheels: Path, tmp_path: Path) -> None:
    md, js = tmp_path / "matrix.md", tmp_path / "matrix.json"
    args = ["matrix", "fixed-in-1-3", "broke-in-1-4", "--corpus", str(fake_mlx.FIXTURES)]
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q"]
    result = CliRunner().invoke(
        cli, [*args, *source, "--versions", ">=1.2,<1.5", "--markdown", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.output
    assert "fixed-in-1-3: bad through 1.2.0, good from 1.3.0" in result.output
    assert [r for r in json.loads(js.read_text())["releases"]] == ["1.2.0", "1.3.0", "1.4.0"]
    assert "**→ pass**" in md.read_text()
    printed = CliRunner().invoke(
        cli, [*args, *source, "--versions", ">=1.2,<1.5", "--markdown", "-"]
    )
    assert printed.exit_code == 0 and printed.stdout.startswith(
        "### MLX releases against the mgradcheck corpus"
    )
    empty = CliRunner().invoke(cli, [*args, *source, "--versions", ">=7"])
    assert empty.exit_code == 2 and "within >=7" in empty.output
    bad = CliRunner().invoke(cli, [*args, *source, "--versions", "1.2..1.4"])
    assert bad.exit_code == 2 and "not a version range" in bad.output


def test_a_matrix_of_reports_made_elsewhere(tmp_path: Path) -> None:
    """GPU runners send their run reports; the matrix judges them without installing anything."""
    from mgradcheck.outcomes import Outcome
    from mgradcheck.reports import json_report
    from tests.builders import report, result
    from tests.conftest import environment

    files = []
    for version, outcome, message in (
        ("1.2.0", Outcome.FAIL, "broken before 1.3 (this is 1.2.0)"),
        ("1.3.0", Outcome.PASS, ""),
    ):
        env = environment(mlx=version, backend="cuda", device_name="Fake GPU")
        path = tmp_path / f"run-{version}.json"
        json_report.write(
            report(result("fixed-in-1-3", outcome=outcome, env=env, message=message)), path
        )
        files.append(path)
    corpus = ["--corpus", str(fake_mlx.FIXTURES)]
    args = ["matrix", "fixed-in-1-3", *corpus, "--markdown", "-"]
    done = CliRunner().invoke(cli, [*args, *(f"--from-report={f}" for f in files)])
    assert done.exit_code == 0, done.output
    assert "cuda on linux-x86_64, Fake GPU, from 2 reports" in done.stdout
    assert "| 1.3.0 | **→ pass** |" in done.stdout and "| 1.2.0 | fail |" in done.stdout
    assert "bad through 1.2.0, good from 1.3.0 (corpus: fixed_in 1.3.0)" in done.stdout
    cpu = tmp_path / "cpu.json"
    json_report.write(report(result("fixed-in-1-3", env=environment(mlx="1.2.0"))), cpu)
    mixed = CliRunner().invoke(cli, [*args, f"--from-report={files[0]}", f"--from-report={cpu}"])
    assert mixed.exit_code == 2 and "2 backends (cpu, cuda)" in mixed.output
