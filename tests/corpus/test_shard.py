"""``run --shard K/N``: every entry in exactly one shard, the same split everywhere, balanced."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.shard import Shard, Unit, deal, load_durations, split
from tests.conftest import BEHAVIOURS, behaviour

TEMPLATE = behaviour("passes")


def cost(entry: Entry, repeat: int | None = None) -> int:
    """An entry's weight when dealt, as run and matrix weigh it: its child runs."""
    return repeat or entry.repeat


def assign(
    corpus: list[Entry],
    count: int,
    repeat: int | None = None,
    durations: dict[str, float] | None = None,
) -> dict[str, int]:
    return deal([Unit(e.id, cost(e, repeat)) for e in corpus], count, durations)


def select(
    corpus: list[Entry],
    shard: Shard,
    repeat: int | None = None,
    durations: dict[str, float] | None = None,
) -> list[Entry]:
    placed = assign(corpus, shard.count, repeat, durations)
    return [e for e in corpus if placed[e.id] == shard.index]


def entries(repeats: list[int]) -> list[Entry]:
    return [replace(TEMPLATE, id=f"entry-{i:03d}", repeat=r) for i, r in enumerate(repeats)]


@pytest.mark.parametrize(
    ("text", "shard"), [("1/1", Shard(1, 1)), ("3/4", Shard(3, 4)), (" 2 / 5 ", Shard(2, 5))]
)
def test_parse(text: str, shard: Shard) -> None:
    assert Shard.parse(text) == shard
    assert str(Shard.parse(text)) == f"{shard.index}/{shard.count}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/3", "between 1 and 3"),
        ("4/3", "between 1 and 3"),
        ("1/0", "at least 1"),
        ("1", "is not K/N"),
        ("a/b", "is not K/N"),
        ("-1/2", "is not K/N"),
    ],
)
def test_parse_rejects_with_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Shard.parse(text)


@given(st.lists(st.integers(1, 20), max_size=60), st.integers(1, 9))
def test_every_entry_in_exactly_one_shard(repeats: list[int], count: int) -> None:
    corpus = entries(repeats)
    shards = [select(corpus, Shard(k, count)) for k in range(1, count + 1)]
    ids = [e.id for shard in shards for e in shard]
    assert sorted(ids) == sorted(e.id for e in corpus)
    for shard in shards:  # each keeps the corpus order
        assert shard == [e for e in corpus if e in shard]


@given(st.lists(st.integers(1, 20), max_size=60), st.integers(1, 9), st.randoms())
def test_the_split_does_not_depend_on_order(
    repeats: list[int], count: int, rnd: random.Random
) -> None:
    corpus = entries(repeats)
    shuffled = corpus[:]
    rnd.shuffle(shuffled)
    assert assign(corpus, count) == assign(shuffled, count)


@given(st.integers(0, 80), st.integers(1, 9))
def test_equal_costs_split_evenly(n: int, count: int) -> None:
    sizes = [len(select(entries([1] * n), Shard(k, count))) for k in range(1, count + 1)]
    assert max(sizes) - min(sizes) <= 1


@given(st.lists(st.integers(1, 20), min_size=1, max_size=60), st.integers(1, 9))
def test_costs_are_balanced(repeats: list[int], count: int) -> None:
    corpus = entries(repeats)
    loads = [sum(cost(e) for e in select(corpus, Shard(k, count))) for k in range(1, count + 1)]
    assert max(loads) - min(loads) <= max(repeats)  # the greedy bound: one entry's worth


def test_repeat_override_makes_costs_equal() -> None:
    corpus = entries([10, 1, 1, 1])
    assert [len(select(corpus, Shard(k, 2))) for k in (1, 2)] == [1, 3]
    assert [len(select(corpus, Shard(k, 2), repeat=3)) for k in (1, 2)] == [2, 2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(BEHAVIOURS), "-q", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_rejects_a_bad_shard() -> None:
    result = run("--shard", "3/2")
    assert result.returncode == 2
    assert "--shard" in result.stderr and "K must be between 1 and 2" in result.stderr


def test_cli_shards_cover_the_selection(tmp_path: Path) -> None:
    chosen = ["passes", "fails-check", "raises"]
    seen: list[str] = []
    for k in (1, 2):
        out = tmp_path / f"shard-{k}.json"
        result = run(*chosen, "--shard", f"{k}/2", "--json", str(out), "-j", "2")
        assert result.returncode in (0, 1), result.stderr
        data = json.loads(out.read_text())
        assert data["meta"]["shard"] == f"{k}/2"
        seen += [r["id"] for r in data["results"]]
    assert sorted(seen) == sorted(chosen)


# --durations: dealt by recorded times, as PyTorch's run_test.py and pytest-split do.


def test_recorded_times_go_slowest_first_to_the_least_loaded_shard() -> None:
    placed = deal([Unit(k) for k in "fedcba"], 2, {"a": 10.0, "b": 7.0, "c": 5.0, "d": 4.0})
    # a:10 -> 1; b:7 -> 2; c:5 -> 2 (7 < 10); d:4 -> 1 (10 < 12); then e, f round-robin.
    assert placed == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 1, "f": 2}
    assert deal([Unit(k) for k in "abcdef"], 2) == {"a": 1, "b": 2, "c": 1, "d": 2, "e": 1, "f": 2}


def test_units_without_a_recorded_time_are_dealt_round_robin_by_key() -> None:
    placed = deal([Unit(k) for k in ("u3", "u1", "t", "u2", "u4")], 3, {"t": 100.0, "gone": 1.0})
    assert placed == {"t": 1, "u1": 1, "u2": 2, "u3": 3, "u4": 1}
    assert deal([Unit("x", cost=5), Unit("y"), Unit("z")], 2, {}) == {"x": 1, "y": 2, "z": 1}


def test_a_unit_is_timed_by_all_its_members_or_not_at_all() -> None:
    op = Unit("divmod", cost=4, members=("divmod", "divmod-const"))
    assert op.seconds({"divmod": 1.0, "divmod-const": 2.5}) == 3.5
    assert op.seconds({"divmod": 1.0}) is None
    assert Unit("x").seconds({"x": 2.0}) == 2.0


@given(
    st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), st.floats(0, 100), max_size=40),
    st.lists(st.text("abcdefgh", min_size=1, max_size=3), max_size=20),
    st.integers(1, 7),
)
def test_with_durations_every_unit_lands_in_exactly_one_shard_balanced(
    times: dict[str, float], untimed: list[str], count: int
) -> None:
    keys = sorted(set(times) | set(untimed))
    known = {k: v for k, v in times.items() if k not in untimed}
    placed = deal([Unit(k) for k in keys], count, known)
    assert sorted(placed) == keys and set(placed.values()) <= set(range(1, count + 1))
    loads = [sum(known[k] for k in known if placed[k] == s) for s in range(1, count + 1)]
    assert max(loads) - min(loads) <= max(known.values(), default=0) + 1e-9  # the greedy bound
    sizes = [sum(1 for k in keys if k not in known and placed[k] == s) for s in range(1, count + 1)]
    assert max(sizes) - min(sizes) <= 1  # the unrecorded, round-robin


def test_run_entries_are_dealt_by_durations_when_given() -> None:
    corpus = entries([1, 1, 1, 1])
    times = {"entry-000": 9.0, "entry-001": 1.0, "entry-002": 1.0, "entry-003": 1.0}
    assert [e.id for e in select(corpus, Shard(1, 2), durations=times)] == ["entry-000"]
    assert [e.id for e in select(corpus, Shard(1, 2))] == ["entry-000", "entry-002"]


def test_a_split_records_its_fingerprint_and_where_its_items_stand() -> None:
    items = [("a[f32]", "a"), ("b[f32]", "b"), ("a[f16]", "a"), ("c[f32]", "c")]
    units = [Unit("a", 2), Unit("b"), Unit("c")]
    parts = [split(Shard(k, 2), units, items, ["a", "b", "c"]) for k in (1, 2)]
    assert [sorted(p.units) for p in parts] == [["a"], ["b", "c"]]
    assert parts[0].meta["shard"] == "1/2" and parts[0].meta["selection"]["size"] == 4
    assert parts[0].meta["selection"]["positions"] == {"a[f32]": 0, "a[f16]": 2}
    assert parts[1].meta["selection"]["positions"] == {"b[f32]": 1, "c[f32]": 3}
    fingerprints = {p.meta["selection"]["fingerprint"] for p in parts}
    assert len(fingerprints) == 1  # every shard of one selection agrees
    other_split = split(Shard(1, 2), units, items, ["a", "b", "c"], {"c": 9.0})
    other_selection = split(Shard(1, 2), units, items, ["a", "b", "c2"])
    for other in (other_split, other_selection):
        assert other.meta["selection"]["fingerprint"] not in fingerprints


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object of id -> seconds"),
        ('{"a": "1.5"}', "'a' -> '1.5' is not a number of seconds"),
        ('{"a": -1}', "is not a number of seconds"),
        ('{"a": true}', "is not a number of seconds"),
        ('{"a": NaN}', "is not a number of seconds"),
    ],
)
def test_a_bad_durations_file_is_named_with_what_is_wrong(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "durations.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: .*{re.escape(problem)}"):
        load_durations(path)
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(tmp_path / 'none.json'))}: cannot read"
    ):
        load_durations(tmp_path / "none.json")


def test_a_durations_file_is_any_json_object_of_id_to_seconds(tmp_path: Path) -> None:
    path = tmp_path / ".test_durations"  # pytest-split's name and format
    path.write_text('{"t.py::test_a": 1.25, "t.py::test_b": 3}')
    assert load_durations(path) == {"t.py::test_a": 1.25, "t.py::test_b": 3.0}
