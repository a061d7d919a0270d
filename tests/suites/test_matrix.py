"""tests --matrix over fake MLX releases: outcomes per release, flips, the store, and harvest."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.envs import venvs
from mgradcheck.releases import on_release
from mgradcheck.releases.regress import State
from mgradcheck.releases.release_matrix import Matrix
from mgradcheck.releases.store import ResultsStore
from mgradcheck.run.display import Silent
from mgradcheck.suites.matrix import changes, outcome_counts, suite_matrix, summary_lines
from mgradcheck.suites.suite_runs import SuiteOptions
from tests import fake_mlx
from tests.suites.conftest import ALWAYS, ATTRIBUTE, BROKE, FIXED, RANGE, matrix, suite

V = Version


def test_each_test_on_each_release_and_where_it_flips(first: tuple[Matrix, ResultsStore]) -> None:
    result, _ = first
    assert [str(v) for v in result.versions] == ["1.2.0", "1.3.0", "1.4.0"]
    rows = {i: [result.cell(i, v).outcome for v in result.versions] for i in (FIXED, BROKE, ALWAYS)}
    assert rows == {
        FIXED: ["fail", "pass", "pass"],
        BROKE: ["pass", "pass", "fail"],
        ALWAYS: ["pass", "pass", "pass"],
    }
    assert changes(result) == {
        (V("1.3.0"), State.GOOD): [FIXED],
        (V("1.4.0"), State.BAD): [BROKE, ATTRIBUTE],
    }
    assert outcome_counts(result)[V("1.4.0")] == {"pass": 2, "fail": 2}
    lines = summary_lines(result)
    assert f"- 1 start passing on 1.3.0: {FIXED}" in lines
    assert "- mlx 1.2.0: 3 pass, 1 fail" in lines


def test_nothing_stored_runs_again(
    first: tuple[Matrix, ResultsStore], fake_wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, store = first

    def nothing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored release was installed or run again")

    monkeypatch.setattr(venvs, "run_logged", nothing)  # no installer
    monkeypatch.setattr(on_release, "prepare", nothing)
    again = matrix(fake_wheels, store)
    assert all(again.cell(FIXED, v).cached for v in again.versions)
    assert again.cell(FIXED, V("1.2.0")).outcome == "fail"


def test_runs_of_several_tests_per_child_are_not_stored(fake_wheels: Path, tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "store")
    settings = fake_mlx.settings(fake_wheels, store)
    options = SuiteOptions(per_child=4, timeout=60)
    grouped = suite_matrix(suite(), settings, RANGE, options, Silent())
    assert [grouped.cell(FIXED, v).outcome for v in grouped.versions] == ["fail", "pass", "pass"]
    assert not store.root.exists() or not any(store.root.rglob("*.json"))
