"""One sweep case, and the inputs the families build theirs from.

A :class:`Case` says which public operations it covers by the ``mx.NAME``,
``mx.linalg.NAME``, ``mx.fft.NAME`` and ``mx.fast.NAME`` its ``fn`` calls
(:func:`calls`). Inputs: an array drawn in a range (:func:`arr`), a boolean
mask, a literal, a complex result as its (real, imaginary) pair.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.child.gradcheck_spec import CHECKS

NAMESPACES = ("mx", "linalg", "fft", "fast")  # mlx.core and its three submodules swept
Input = dict[str, Any]
# Where special-value constants can be written into a fused kernel's source: the
# families that get the specials check (elsewhere mx.compile runs the same kernels as eager).
ELEMENTWISE = ("unary", "binary", "alias", "where", "power", "bitwise", "complex", "cast")
# The families whose integer and bool inputs are differentiated by (the "integers" check):
# elsewhere they are indices and masks, never traced.
INTEGRAL = ("generated-integer",)


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
    # A call drawn by the generator (sweep.explore) at its one dtype: it runs at that dtype,
    # which was drawn from the sweep's, whatever they are.
    drawn: bool = False
    # A drawn graph's structure (sweep.explore.graphs.Graph), which shrinking drops operations of.
    graph: object = field(default=None, compare=False, repr=False)

    @property
    def checks(self) -> tuple[str, ...]:
        skip = set(self.skip) | ({"specials"} if self.family not in ELEMENTWISE else set())
        skip |= {"integers"} if self.family not in INTEGRAL else set()
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
