"""The bisection search itself: pure, memoised, over Yes / No / Unknown.

Items are ordered from one known end (``No``) to the other (``Yes``); the search
finds the least item that satisfies, i.e. a ``No`` followed by a ``Yes`` with
only ``Unknown`` items between them. An Unknown item (a release that cannot
be installed, or whose run could not be judged) is routed around: the next
probe is the untested item nearest the middle of the open range. Every item
is asked at most once, and nothing here does I/O: the caller's predicate does.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass


class Satisfies(enum.Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Boundary:
    """Where the answer changes: the last No, the first Yes, and the Unknowns between them."""

    last_no: int
    first_yes: int

    @property
    def between(self) -> range:
        return range(self.last_no + 1, self.first_yes)


def _window(count: int, known: Mapping[int, Satisfies]) -> tuple[int, int]:
    """The open range still in question: (rightmost No left of the leftmost Yes, leftmost Yes)."""
    if known.get(0) is not Satisfies.NO or known.get(count - 1) is not Satisfies.YES:
        raise ValueError("the first item must be known No and the last known Yes")
    first_yes = min(i for i, s in known.items() if s is Satisfies.YES)
    last_no = max(i for i, s in known.items() if s is Satisfies.NO and i < first_yes)
    return last_no, first_yes


def next_probe(count: int, known: Mapping[int, Satisfies]) -> int | None:
    """The next item to ask about, or None when the boundary is found."""
    low, high = _window(count, known)
    untested = [i for i in range(low + 1, high) if i not in known]
    if not untested:
        return None
    middle = (low + high) / 2
    return min(untested, key=lambda i: (abs(i - middle), i))


def steps_left(count: int, known: Mapping[int, Satisfies]) -> int:
    """At most this many more probes, if none of them is Unknown."""
    low, high = _window(count, known)
    untested = sum(1 for i in range(low + 1, high) if i not in known)
    return math.ceil(math.log2(untested + 1))


def boundary(count: int, known: Mapping[int, Satisfies]) -> Boundary:
    low, high = _window(count, known)
    return Boundary(low, high)


def least_satisfying(
    count: int,
    predicate: Callable[[int, int], Satisfies],
    known: Mapping[int, Satisfies],
) -> tuple[Boundary, dict[int, Satisfies]]:
    """Search items ``0..count-1``; return the boundary and every answer, asking each item once.

    ``known`` holds the answers already had, at least both ends (No first, Yes
    last); the predicate is asked about the others it needs, with the item and
    how many probes at most remain after that one (for progress displays).
    """
    answers = dict(known)
    while (index := next_probe(count, answers)) is not None:
        answers[index] = predicate(index, steps_left(count, answers) - 1)
    return boundary(count, answers), answers
