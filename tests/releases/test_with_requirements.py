"""``--with REQUIREMENT``: packages installed beside MLX in each release's environment, which
is then another environment, whose runs are other runs (fake wheels, real installs and children)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from mgradcheck.corpus.loader import load
from mgradcheck.envs import venvs
from mgradcheck.outcomes import Outcome
from mgradcheck.releases import on_release
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import ResultsStore
from tests import fake_mlx
from tests.conftest import write_entry

HELPED = """\
id: uses-helper
title: An entry that imports a package installed beside MLX
summary: Used by the tests.
upstream: {report: "https://example.invalid/uses-helper"}
bug: {outcome: fail, match: "never", fixed_in: "1.0.0"}
timeout: 20
code: |
  import mgradcheck_test_helper
  assert_true(mgradcheck_test_helper.ANSWER == 42, "the helper's answer")
"""
HELPER = fake_mlx.HELPER


def mgradcheck(wheels: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, offline over the fake wheels."""
    argv = [sys.executable, "-m", "mgradcheck", *args, "--no-index", "--find-links", str(wheels)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if "error:" in line]


def test_an_entry_that_imports_a_package_passes_with_it_and_errors_without(
    fake_wheels: Path, tmp_path: Path
) -> None:
    write_entry(tmp_path, "uses-helper", HELPED)
    report = tmp_path / "run.json"
    outcomes = {}
    for extra in ([], ["--with", HELPER]):
        args = ["run", "--corpus", str(tmp_path), "--mlx", "1.4.0", "-q", "--json", str(report)]
        done = mgradcheck(fake_wheels, *args, *extra)
        assert "Traceback" not in done.stderr, done.stderr
        (result,) = json.loads(report.read_text())["results"]
        outcomes[bool(extra)] = (done.returncode, result["outcome"])
    assert outcomes[False] == (1, "error")  # ModuleNotFoundError: not in the plain environment
    assert outcomes[True] == (0, "pass")
    names = sorted(p.name for p in venvs.envs_root().glob("mlx-1.4.0-*"))
    plain = fake_mlx.settings(fake_wheels).spec(Version("1.4.0"))
    helped = dataclasses.replace(plain, extras=(HELPER,))
    assert plain.name != helped.name and {plain.name, helped.name} <= set(names)
    assert json.loads((venvs.envs_root() / helped.name / venvs.MARKER).read_text())["spec"][
        "with"
    ] == [HELPER]


def test_runs_beside_other_packages_are_stored_apart_from_the_plain_ones(
    fake_wheels: Path, tmp_path: Path
) -> None:
    (entry,) = load([write_entry(tmp_path, "uses-helper", HELPED)])
    store = ResultsStore(tmp_path / "results")
    plain = fake_mlx.settings(fake_wheels, store)
    helped = dataclasses.replace(plain, extras=(HELPER,))

    def run(settings: Settings) -> tuple[bool, list[Outcome]]:
        (done,) = on_release.run_release(Version("1.4.0"), [entry], settings)
        return done.cached, [r.outcome for r in done.runs]

    assert run(helped) == (False, [Outcome.PASS])
    assert run(plain) == (False, [Outcome.ERROR])  # not the helped runs, taken from the store
    assert run(helped) == (True, [Outcome.PASS])
    assert run(plain) == (True, [Outcome.ERROR])
    files = sorted(store.root.glob("*/*.json"))
    assert len(files) == 2
    assert sorted(json.loads(f.read_text())["with"] for f in files) == [[], [HELPER]]


def test_a_requirement_that_clashes_with_the_release_is_one_line_naming_both(
    fake_wheels: Path, tmp_path: Path
) -> None:
    write_entry(tmp_path, "uses-helper", HELPED)
    run = ["run", "--corpus", str(tmp_path), "--mlx", "1.4.0", "-q"]
    for extra, clash in (("mlx==1.3.0", "mlx==1.3.0"), (fake_mlx.PINNED, "depend on mlx==1.3.0")):
        done = mgradcheck(fake_wheels, *run, "--with", extra)
        assert done.returncode == 3, done.stderr  # an environment that cannot be made
        assert "Traceback" not in done.stderr
        (line,) = errors(done)
        assert f"installing mlx 1.4.0 with {extra} failed: Because" in line, line
        assert clash in line and "mlx[cpu]==1.4.0" in line, line


def test_a_matrix_with_a_package_pinned_to_one_release_judges_only_that_one(
    fake_wheels: Path, tmp_path: Path
) -> None:
    write_entry(tmp_path, "uses-helper", HELPED)
    report = tmp_path / "matrix.json"
    args = ["matrix", "--corpus", str(tmp_path), "--versions", ">=1.3,<1.5", "-q"]
    args += ["--with", fake_mlx.PINNED, "--with", HELPER, "--json", str(report)]
    done = mgradcheck(fake_wheels, *args)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (row,) = json.loads(report.read_text())["entries"]
    assert row["cells"]["1.3.0"]["outcome"] == "pass"
    refused = row["cells"]["1.4.0"]
    assert (refused["state"], refused["outcome"]) == ("unknown", "unavailable")
    assert refused["reason"].startswith(
        f"installing mlx 1.4.0 with {HELPER}, {fake_mlx.PINNED} failed: Because"
    )


PARAMS = """\
import pytest


@pytest.mark.parametrize("n", [1, 2, 3])
def test_helper(n):
    import mgradcheck_test_helper

    assert mgradcheck_test_helper.ANSWER * n >= 42
"""


def test_with_pytest_in_the_release_environment_its_tests_are_collected_by_pytest(
    fake_wheels: Path, tmp_path: Path
) -> None:
    """One test per parameter set, as pytest collects them where the tests' imports resolve."""
    (tmp_path / "test_params.py").write_text(PARAMS)
    base = ["tests", str(tmp_path / "test_params.py"), "--mlx", "1.4.0", "--collect-only"]
    read = mgradcheck(fake_wheels, *base, "--with", HELPER)
    assert read.stdout.splitlines() == ["test_params.py::test_helper"], read.stderr
    assert "--with pytest puts it there" in read.stderr
    done = mgradcheck(fake_wheels, *base, "--with", HELPER, "--with", "pytest")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"test_params.py::test_helper[{n}]" for n in (1, 2, 3)]
    assert "note:" not in done.stderr


def test_a_matrix_whose_newest_release_cannot_have_pytest_reads_the_tests_and_says_why(
    fake_wheels: Path, tmp_path: Path
) -> None:
    (tmp_path / "test_params.py").write_text(PARAMS)
    args = ["tests", str(tmp_path), "--matrix", "--versions", ">=1.3,<1.5", "--collect-only"]
    done = mgradcheck(fake_wheels, *args, "--with", fake_mlx.PINNED, "--with", "pytest")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["test_params.py::test_helper"]
    (note,) = [line for line in done.stderr.splitlines() if "note:" in line]
    assert f"installing mlx 1.4.0 with {fake_mlx.PINNED}, pytest failed: Because" in note
