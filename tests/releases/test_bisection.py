"""The pure bisection search, by example and by property (Hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mgradcheck.releases.bisection import (
    Boundary,
    Satisfies,
    least_satisfying,
    next_probe,
    steps_left,
)

NO, YES, UNKNOWN = Satisfies.NO, Satisfies.YES, Satisfies.UNKNOWN


def search(answers: list[Satisfies]) -> tuple[Boundary, list[int]]:
    """Run the search over fixed answers; return the boundary and the items asked, in order."""
    asked: list[int] = []

    def predicate(index: int, left: int) -> Satisfies:
        asked.append(index)
        return answers[index]

    found, _ = least_satisfying(
        len(answers), predicate, {0: answers[0], len(answers) - 1: answers[-1]}
    )
    return found, asked


def test_finds_the_first_yes() -> None:
    found, asked = search([NO, NO, NO, YES, YES, YES, YES])
    assert (found.last_no, found.first_yes) == (2, 3)
    assert len(asked) <= math.ceil(math.log2(6))


def test_two_items_need_no_probe() -> None:
    found, asked = search([NO, YES])
    assert (found.last_no, found.first_yes, asked) == (0, 1, [])


def test_routes_around_unknowns() -> None:
    found, asked = search([NO, NO, UNKNOWN, UNKNOWN, YES, YES])
    assert (found.last_no, found.first_yes) == (1, 4)
    assert list(found.between) == [2, 3]
    assert sorted(asked) == sorted(set(asked))


def test_everything_unknown_between_the_ends() -> None:
    found, asked = search([NO, UNKNOWN, UNKNOWN, UNKNOWN, YES])
    assert (found.last_no, found.first_yes) == (0, 4)
    assert sorted(asked) == [1, 2, 3]


def test_next_probe_is_the_middle() -> None:
    assert next_probe(9, {0: NO, 8: YES}) == 4
    assert next_probe(9, {0: NO, 8: YES, 4: UNKNOWN}) == 3  # nearest the middle, lower first
    assert next_probe(9, {0: NO, 8: YES, 4: YES, 2: NO, 3: NO}) is None


def test_the_ends_must_be_known_and_disagree() -> None:
    with pytest.raises(ValueError):
        next_probe(3, {0: YES, 2: YES})
    with pytest.raises(ValueError):
        next_probe(3, {2: YES})


def test_steps_left_counts_halvings() -> None:
    assert steps_left(2, {0: NO, 1: YES}) == 0
    assert steps_left(3, {0: NO, 2: YES}) == 1
    assert steps_left(22, {0: NO, 21: YES}) == 5


answers = st.lists(st.sampled_from([NO, YES, UNKNOWN]), min_size=0, max_size=40).map(
    lambda middle: [NO, *middle, YES]
)


@given(answers)
def test_any_answers_give_a_no_then_yes_with_only_unknowns_between(values: list[Satisfies]) -> None:
    found, asked = search(values)
    assert values[found.last_no] is NO
    assert values[found.first_yes] is YES
    assert all(values[i] is UNKNOWN for i in found.between)
    assert len(asked) == len(set(asked)), "an item was asked twice"
    assert 0 not in asked and len(values) - 1 not in asked, "the ends are known already"


@given(st.integers(2, 300), st.data())
def test_monotone_answers_find_the_true_boundary_in_log_steps(
    count: int, data: st.DataObject
) -> None:
    first_yes = data.draw(st.integers(1, count - 1))
    values = [NO if i < first_yes else YES for i in range(count)]
    found, asked = search(values)
    assert (found.last_no, found.first_yes) == (first_yes - 1, first_yes)
    assert len(asked) <= math.ceil(math.log2(count - 1)) if count > 2 else not asked


@given(st.integers(3, 60), st.data())
def test_monotone_with_unknowns_brackets_the_true_boundary(count: int, data: st.DataObject) -> None:
    first_yes = data.draw(st.integers(1, count - 1))
    unknown = data.draw(st.sets(st.integers(1, count - 2)))
    values = [UNKNOWN if i in unknown else (NO if i < first_yes else YES) for i in range(count)]
    found, _ = search(values)
    assert found.last_no < first_yes <= found.first_yes
    assert all(values[i] is UNKNOWN for i in found.between)
