"""The operations the sweep differentiates: one :class:`Case` per function and input layout.

Each case is a declarative gradcheck spec (docs/gradcheck.md) without its
dtype. Ranges keep points away from poles and domain edges; kinks and jumps
that remain are the checker's business, not the catalogue's. Which public
operations a case covers is read from its ``fn`` (every ``mx.NAME``,
``mx.linalg.NAME``, ``mx.fft.NAME`` and ``mx.fast.NAME`` it calls), and
:mod:`.coverage` accounts for every public callable of MLX that no case
calls. The cases live by family in :mod:`.elementwise`, :mod:`.reductions`,
:mod:`.shapes`, :mod:`.linear` and :mod:`.spectral`.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.child.gradcheck_spec import CHECKS

DTYPES = ("float32", "float16", "bfloat16")
NAMESPACES = ("mx", "linalg", "fft", "fast")  # mlx.core and its three submodules swept
Input = dict[str, Any]
# Where special-value constants can be written into a fused kernel's source: the
# families that get the specials check (elsewhere mx.compile runs the same kernels as eager).
ELEMENTWISE = ("unary", "binary", "alias", "where", "power", "bitwise", "complex", "cast")


@dataclass(frozen=True)
class Case:
    id: str  # unique, kebab-case
    op: str  # findings are grouped by this
    family: str
    fn: str
    inputs: tuple[Input, ...]
    dtypes: tuple[str, ...] | None = None  # None: every dtype swept
    skip: tuple[str, ...] = ()  # checks that do not apply (a shape written into fn: no shapeless)
    notes: str = field(default="", compare=False)

    @property
    def checks(self) -> tuple[str, ...]:
        skip = set(self.skip) | ({"specials"} if self.family not in ELEMENTWISE else set())
        return tuple(c for c in CHECKS if c not in skip)

    @property
    def covers(self) -> tuple[str, ...]:
        """The public operations ``fn`` calls, as ``mx.sin``, ``linalg.inv``, ``fast.rope``."""
        return calls(self.fn)

    def spec(
        self, dtype: str, seed: int = 0, points: int = 2, checks: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The gradcheck block for one dtype (``checks``: at most these of the case's checks)."""
        chosen = [c for c in self.checks if checks is None or c in checks]
        return {
            "fn": self.fn,
            "inputs": [dict(i) for i in self.inputs],
            "dtypes": [dtype],
            "seed": seed,
            "points": points,
            "checks": chosen,
        }


def calls(fn: str) -> tuple[str, ...]:
    """Every ``mx.X``, ``mx.linalg.X``, ``mx.fft.X``, ``mx.fast.X`` named in ``fn``, in order."""
    found: list[str] = []
    nodes = sorted(ast.walk(ast.parse(fn, mode="eval")), key=lambda n: getattr(n, "col_offset", 0))
    for node in nodes:
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id == "mx":
            if node.attr in NAMESPACES[1:]:
                continue  # the submodule itself: its callables are named below
            name = f"mx.{node.attr}"
        elif (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "mx"
            and value.attr in NAMESPACES[1:]
        ):
            name = f"{value.attr}.{node.attr}"
        else:
            continue
        if name not in found:
            found.append(name)
    return tuple(found)


def arr(*shape: int, lo: float = -2.0, hi: float = 2.0, **extra: Any) -> Input:
    return {"shape": list(shape), "range": [lo, hi], **extra}


def ints(*shape: int, lo: int = 0, hi: int = 3, dtype: str = "int32") -> Input:
    return {"shape": list(shape), "range": [lo, hi], "dtype": dtype}


def mask(*shape: int) -> Input:
    return {"shape": list(shape), "dtype": "bool"}


def literal(value: Any, dtype: str) -> Input:
    return {"value": value, "dtype": dtype}


def parts(expression: str) -> str:
    """A complex ``expression`` as the pair (real part, imaginary part), in one expression."""
    return f"(lambda z: (mx.real(z), mx.imag(z)))({expression})"


F32 = ("float32",)
M = arr(2, 3)
POS = arr(2, 3, lo=0.3, hi=2.0)
UNIT = arr(2, 3, lo=-0.9, hi=0.9)


def catalogue() -> list[Case]:
    """Every case, in a stable order (ids are unique)."""
    from mgradcheck.sweep.catalogue import elementwise, linear, reductions, shapes, spectral

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
    """Every (case, dtype) to run: a case limited to some dtypes runs only those."""
    return [(c, d) for c in cases for d in dtypes if c.dtypes is None or d in c.dtypes]
