"""Fixtures of the suites' tests: a matrix over fake releases, and a small MLX-like history."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mgradcheck.releases.release_matrix import Matrix
from mgradcheck.releases.store import ResultsStore
from mgradcheck.run.display import Silent
from mgradcheck.suites.collect import SuiteTest, collect
from mgradcheck.suites.matrix import suite_matrix
from mgradcheck.suites.suite_runs import SuiteOptions
from tests import fake_mlx
from tests.conftest import SUITES

RANGE = ">=1.2,<=1.4"
FIXED = "test_versions.py::TestVersions::test_fixed_in_1_3"
BROKE = "test_versions.py::TestVersions::test_broke_in_1_4"
ALWAYS = "test_versions.py::TestVersions::test_always_passes"
ATTRIBUTE = "test_versions.py::TestVersions::test_uses_an_attribute"


def suite() -> list[SuiteTest]:
    return collect([SUITES / "releases"])


def matrix(wheels: Path, store: ResultsStore) -> Matrix:
    settings = fake_mlx.settings(wheels, store)
    return suite_matrix(suite(), settings, RANGE, SuiteOptions(jobs=2, timeout=60), Silent())


@pytest.fixture(scope="session")
def _suite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("suite-store")


@pytest.fixture
def first(fake_wheels: Path, _suite_store: Path) -> tuple[Matrix, ResultsStore]:
    """The fake releases 1.2.0 to 1.4.0 against tests/fixtures/suites/releases: run by the
    first test that asks, from the store for the others (a session's store, kept short)."""
    store = ResultsStore(_suite_store)
    return matrix(fake_wheels, store), store


TEST = """\
import unittest


class TestThing(unittest.TestCase):
    def test_old(self):
        pass
"""
FIX = """
    def test_fixed(self):
        self.assertEqual(1 + 1, 2)
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def mlx_history(tmp_path: Path) -> Path:
    """A small MLX-like history: python/tests/test_thing.py, then a fix that adds a test."""
    repo = tmp_path / "mlx"
    tests = repo / "python" / "tests"
    tests.mkdir(parents=True)
    git(repo, "init", "-q")
    (tests / "test_thing.py").write_text(TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Start")
    (tests / "test_thing.py").write_text(TEST + FIX)
    git(repo, "commit", "-qam", "Fix the thing (#1234)")
    git(repo, "tag", "v9.9.9")
    return repo
