"""The operations the sweep differentiates: one :class:`Case` per function and input layout.

Each case is a declarative gradcheck spec (docs/gradcheck.md) without its
dtype. Ranges keep points away from poles and domain edges; kinks and jumps
that remain are the checker's business, not the catalogue's. Which public
operations a case covers is read from its ``fn`` (every ``mx.NAME``,
``mx.linalg.NAME``, ``mx.fft.NAME`` and ``mx.fast.NAME`` it calls), and
:mod:`.coverage` accounts for every public callable of MLX that no case
calls. The cases live by family in :mod:`.elementwise`, :mod:`.reductions`,
:mod:`.shapes`, :mod:`.linear` and :mod:`.spectral`, built from the pieces in
:mod:`.case`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from mgradcheck.sweep.catalogue import elementwise, linear, reductions, shapes, spectral
from mgradcheck.sweep.catalogue.case import Case, arr, calls

DTYPES = ("float32", "float16", "bfloat16")


def catalogue() -> list[Case]:
    """Every case, in a stable order (ids are unique)."""
    parts_: tuple[Iterable[Case], ...] = (
        elementwise.cases(),
        reductions.cases(),
        shapes.cases(),
        linear.cases(),
        spectral.cases(),
    )
    cases = [case for part in parts_ for case in part]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise AssertionError(f"duplicate catalogue id {case.id}")
        seen.add(case.id)
    return cases


def select(cases: Sequence[Case], patterns: Sequence[str] = ()) -> list[Case]:
    """The cases whose id, op, family or a covered operation matches any shell-style pattern."""
    if not patterns:
        return list(cases)
    return [
        c for c in cases
        if any(fnmatch.fnmatchcase(name, p) for p in patterns for name in (c.id, c.op, c.family, *c.covers))
    ]  # fmt: skip


def tasks(cases: Sequence[Case], dtypes: Sequence[str] = DTYPES) -> list[tuple[Case, str]]:
    """Every (case, dtype) to run: a case limited to some dtypes runs only those, a drawn
    call at its own."""
    return [
        (c, d)
        for c in cases
        for d in (c.dtypes or () if c.drawn else dtypes)
        if c.dtypes is None or d in c.dtypes
    ]


__all__ = ["DTYPES", "Case", "arr", "calls", "catalogue", "select", "tasks"]
