"""``run --shard K/N``: every entry in exactly one shard, the same split everywhere, balanced."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.shard import Shard, assign, cost, select
from tests.conftest import BEHAVIOURS, behaviour

TEMPLATE = behaviour("passes")


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
