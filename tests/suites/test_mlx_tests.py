"""--mlx-tests TAG: python/tests of a tag out of a local history, and the commit that added a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from mgradcheck.errors import UsageError
from mgradcheck.suites.collect import collect
from mgradcheck.suites.mlx_tests import added_by, checkout


def test_a_tags_tests_are_taken_out_of_the_history_once(mlx_history: Path) -> None:
    taken = checkout("v9.9.9", mlx_history)
    assert taken.directory.name == "tests" and (taken.directory / "test_thing.py").is_file()
    ids = [t.id for t in collect([taken.directory])]
    assert ids == ["test_thing.py::TestThing::test_old", "test_thing.py::TestThing::test_fixed"]
    before = (taken.directory / "test_thing.py").stat().st_mtime_ns
    assert (
        checkout("v9.9.9", mlx_history) == taken
    )  # the same commit: the same copy, not made again
    assert (taken.directory / "test_thing.py").stat().st_mtime_ns == before
    url = taken.file_url("test_thing.py", 7)
    assert url == "https://github.com/ml-explore/mlx/blob/v9.9.9/python/tests/test_thing.py#L7"


def test_the_commit_that_added_a_test_names_its_pull_request(mlx_history: Path) -> None:
    taken = checkout("v9.9.9", mlx_history)
    fixed = added_by(taken, "test_thing.py", "test_fixed")
    assert fixed is not None and fixed.pull == 1234
    assert fixed.url == "https://github.com/ml-explore/mlx/pull/1234"
    old = added_by(taken, "test_thing.py", "test_old")
    assert old is not None and old.pull is None and old.url.endswith(f"/commit/{old.commit}")
    assert added_by(taken, "test_thing.py", "test_never_written") is None


def test_an_unknown_tag_is_bad_usage(mlx_history: Path) -> None:
    with pytest.raises(UsageError, match=r"no commit 'v0\.0\.0'"):
        checkout("v0.0.0", mlx_history)
