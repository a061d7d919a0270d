"""Arguments of a checked function, and values moved between MLX and NumPy (float64)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck_spec import FLOATS, INTEGERS


@dataclass(frozen=True)
class Arg:
    """How to make one argument: a random draw, a fill, or a literal; ``const`` is never traced."""

    shape: tuple[int, ...] = ()
    dtype: str | None = None  # None: the dtype being checked (floating arguments)
    range: tuple[float, float] = (-2.0, 2.0)
    value: Any = None
    fill: float | None = None
    const: bool = False
    ties: bool = False  # drawn from three values of its range, so that elements tie

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Arg:
        value = spec.get("value")
        shape = tuple(spec.get("shape", np.shape(value) if value is not None else ()))
        lo, hi = spec.get("range", (-2.0, 2.0))
        return cls(
            shape,
            spec.get("dtype"),
            (float(lo), float(hi)),
            value,
            spec.get("fill"),
            bool(spec.get("const", False)),
            bool(spec.get("ties", False)),
        )

    @property
    def random(self) -> bool:
        return self.value is None and self.fill is None

    def draw(self, dtype: str, rng: np.random.Generator) -> np.ndarray:
        if self.value is not None:
            return np.array(np.broadcast_to(np.asarray(self.value, dtype=np.float64), self.shape))
        if self.fill is not None:
            return np.full(self.shape, float(self.fill))
        lo, hi = self.range
        if dtype == "bool":
            return rng.integers(0, 2, size=self.shape).astype(np.float64)
        if dtype in INTEGERS:
            return rng.integers(int(lo), int(hi) + 1, size=self.shape).astype(np.float64)
        if self.ties:  # the same three values in every argument drawn so: ties across them too
            return rng.choice(np.linspace(lo, hi, 5)[1:-1], size=self.shape)
        return rng.uniform(lo, hi, size=self.shape)


def dtype_name(dtype: Any) -> str:
    """``mlx.core.float32`` -> ``float32``."""
    return str(dtype).rsplit(".", 1)[-1]


def to_numpy(a: Any) -> np.ndarray:
    """An MLX array as float64 NumPy (bfloat16 widened first: NumPy has no bfloat16)."""
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    return np.array(a, dtype=np.float64)


def to_mlx(v: np.ndarray, dtype: str) -> Any:
    """A float64 NumPy value as an MLX array of ``dtype`` (rounded as MLX would round it)."""
    if dtype == "float64":
        return mx.array(v, dtype=mx.float64)
    if dtype in INTEGERS:
        return mx.array(v.astype(np.dtype(dtype)))
    return mx.array(v.astype(np.float32)).astype(getattr(mx, dtype))


def outputs(value: Any) -> list[Any]:
    """A function's result as a list of arrays (one array, or a tuple or list of them)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(x, mx.array) for x in items):
        raise TypeError("gradcheck: fn must return an array or a tuple of arrays")
    return items


def as_arg(x: Any) -> Arg:
    """An :class:`Arg` as given, or one that always yields the concrete array or value given."""
    if isinstance(x, Arg):
        return x
    if isinstance(x, mx.array):
        name = dtype_name(x.dtype)
        return Arg(tuple(x.shape), None if name in FLOATS else name, value=to_numpy(x))
    a = np.asarray(x)
    dtype = "bool" if a.dtype == np.bool_ else (str(a.dtype) if a.dtype.kind in "iu" else None)
    return Arg(a.shape, dtype, value=a.astype(np.float64))
