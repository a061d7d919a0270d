"""tests --emit: the tests that flip, as corpus entries that validate and reproduce."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.corpus.dump import dump
from mgradcheck.corpus.loader import load
from mgradcheck.releases.regress import Judged, State
from mgradcheck.releases.release_matrix import Matrix
from mgradcheck.releases.store import ResultsStore
from mgradcheck.run.display import Silent
from mgradcheck.suites import harvest as harvesting
from mgradcheck.suites.collect import collect
from mgradcheck.suites.inline import Inlined
from mgradcheck.suites.matrix import REGRESS_ON
from mgradcheck.suites.mlx_tests import checkout
from tests import fake_mlx
from tests.suites.conftest import ATTRIBUTE, FIXED, suite


def test_harvest_writes_the_tests_that_flip_as_entries_that_reproduce(
    first: tuple[Matrix, ResultsStore], fake_wheels: Path, tmp_path: Path
) -> None:
    result, store = first
    emitted = tmp_path / "emitted"
    settings = fake_mlx.settings(fake_wheels, store)
    lines = harvesting.harvest(result, suite(), None, settings, emitted, Silent())
    assert lines[2] == f"not harvested: {ATTRIBUTE}: uses self.value, which is not a method call"
    entries = {e.id: e for e in load([emitted])}
    assert sorted(entries) == ["mlx-test-versions-broke-in-1-4", "mlx-test-versions-fixed-in-1-3"]
    fixed = entries["mlx-test-versions-fixed-in-1-3"]
    assert str(fixed.bug.fixed_in["cpu"]) == "1.3.0" and fixed.bug.affects == ("cpu",)
    assert fixed.found_by is not None and fixed.found_by.case == FIXED
    assert [(e.mlx, e.outcome) for e in fixed.evidence] == [
        ("1.2.0", "fail"),
        ("1.3.0", "pass"),
        ("1.4.0", "pass"),
    ]
    broke = entries["mlx-test-versions-broke-in-1-4"]
    assert str(broke.bug.introduced_in["cpu"]) == "1.4.0" and broke.bug.fixed_in["cpu"] is None
    assert fixed.origin == FIXED and "def version():" in (fixed.code or "")


def test_an_entry_that_does_not_reproduce_is_not_kept(
    first: tuple[Matrix, ResultsStore],
    fake_wheels: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, store = first

    def always_passes(*args: object, **kwargs: object) -> Inlined:
        return Inlined("assert_true(True, 'nothing checked')\n", None, "")

    monkeypatch.setattr(harvesting, "inline", always_passes)
    emitted = tmp_path / "emitted"
    settings = fake_mlx.settings(fake_wheels, store)
    lines = harvesting.harvest(result, suite(), None, settings, emitted, Silent())
    assert lines[0] == (
        f"not harvested: {FIXED}: as an entry it is good on 1.2.0 (pass: passes) "
        "where the test is bad (fail)"
    )
    assert list(emitted.iterdir()) == []


@dataclass(frozen=True)
class Item:
    id: str
    title: str = ""
    content_hash: str = ""


def hand_made(states: str, test_id: str = "t") -> Matrix:
    """A matrix of one item over releases 1.0.0, 2.0.0...: b(ad), g(ood) or u(nknown) each."""
    versions = tuple(Version(f"{i + 1}.0.0") for i in range(len(states)))
    kinds = {"b": (State.BAD, "fail"), "g": (State.GOOD, "pass"), "u": (State.UNKNOWN, "skip")}
    cells = {
        (test_id, v): Judged(v, kinds[s][0], kinds[s][1], "")
        for v, s in zip(versions, states, strict=True)
    }
    return Matrix("cpu", "cpu", REGRESS_ON, versions, (Item(test_id),), cells)


@pytest.mark.parametrize(
    ("states", "fixed", "introduced"),
    [
        ("bbg", "3.0.0", None),
        ("gb", None, "2.0.0"),
        ("gbg", "3.0.0", "2.0.0"),
        ("bug", "3.0.0", None),  # an unknown between says nothing
        ("bgb", "x", "x"),  # fixed and broken again: not one story
        ("bbb", "x", "x"),  # no flip
    ],
)
def test_history_is_a_break_a_fix_or_both(
    states: str, fixed: str | None, introduced: str | None
) -> None:
    found = harvesting.history(hand_made(states), "t")
    if fixed == "x":
        assert found is None
        return
    assert found is not None
    assert (str(found.fixed_in) if found.fixed_in else None) == fixed
    assert (str(found.introduced_in) if found.introduced_in else None) == introduced


def test_entry_names_hold_the_class_and_are_unique(tmp_path: Path) -> None:
    source = """\
import unittest


class TestX(unittest.TestCase):
    def test_a_b(self):
        pass

    def test_a__b(self):
        pass


class TestA(unittest.TestCase):
    def test_foo(self):
        pass


class TestB(unittest.TestCase):
    def test_foo(self):
        pass
"""
    (tmp_path / "test_x.py").write_text(source)
    names = harvesting.entry_names(collect([tmp_path]))
    assert len(set(names.values())) == 4
    assert names["test_x.py::TestA::test_foo"] == "mlx-test-x-a-foo"  # TestX's class: the file's
    assert names["test_x.py::TestB::test_foo"] == "mlx-test-x-b-foo"
    assert all(
        names[f"test_x.py::TestX::{n}"].startswith("mlx-test-x-a-b-")
        for n in ("test_a_b", "test_a__b")
    )


def test_an_mlx_test_cites_the_pull_request_that_added_it(
    mlx_history: Path, tmp_path: Path
) -> None:
    taken = checkout("v9.9.9", mlx_history)
    test = next(t for t in collect([taken.directory]) if t.name == "test_fixed")
    grid = hand_made("bg", test.id)
    past = harvesting.history(grid, test.id)
    assert past is not None
    data = harvesting.entry_data(test, "assert_true(1 + 1 == 2, 'sum')\n", "", past, grid, taken)
    assert data["id"] == "mlx-test-thing-fixed"
    assert data["upstream"]["report"] == "https://github.com/ml-explore/mlx/pull/1234"
    assert data["upstream"]["fix"].startswith("https://github.com/ml-explore/mlx/commit/")
    assert data["upstream"]["related"] == [taken.file_url("test_thing.py", test.line)]
    assert data["origin"] == "v9.9.9 python/tests/test_thing.py::TestThing::test_fixed"
    assert "found_by" not in data and data["bug"]["fixed_in"] == "2.0.0"
    path = tmp_path / "entry.yaml"
    path.write_text(dump(data))
    (entry,) = load([path])
    assert entry.upstream.report == data["upstream"]["report"]


def test_a_cuda_build_is_cuda_to_the_corpus(tmp_path: Path) -> None:
    test = next(t for t in suite() if t.id == FIXED)
    grid = dataclasses.replace(hand_made("bg", test.id), backend="cuda13")
    past = harvesting.history(grid, test.id)
    assert past is not None
    data = harvesting.entry_data(test, "assert_true(1 + 1 == 2, 'sum')\n", "", past, grid, None)
    assert data["bug"]["affects"] == ["cuda"] and data["found_by"]["backend"] == "cuda"
    assert "on cuda13." in data["summary"]
    path = tmp_path / "entry.yaml"
    path.write_text(dump(data))
    (entry,) = load([path])
    assert entry.bug.affects == ("cuda",)
