"""The ``integers`` check: derivatives by an integer or bool argument.

An integer or bool argument is not a point of a continuum, so differentiating
by it has two honest answers: a derivative that is zero everywhere, or a
refusal that says why (an exception naming the integer or bool dtype, or
saying the input is not differentiable). A non-zero derivative, a result of
the wrong shape, or any other exception is a finding; a crash is one too (the
batch child reports it). The vjp gets a cotangent of ones and the jvp a
tangent of ones, so that a derivative which is not zero shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.numerics import fmt
from mgradcheck.child.gradcheck.point import Point
from mgradcheck.child.gradcheck_spec import DTYPE_REFUSAL, FLOATS, UNSUPPORTED

# What a refusal to differentiate by an integer or bool says: the dtype, or that it is not
# differentiable.
REFUSAL = DTYPE_REFUSAL + r"|differentiab"


def check(point: Point, outs: Sequence[Any]) -> bool:
    """Differentiate by each integer or bool argument alone; False when there is none."""
    chosen = [i for i, dt in enumerate(point.dts) if dt not in FLOATS]
    for i in chosen:
        _by(point, i, outs)
    return bool(chosen)


def _by(point: Point, i: int, outs: Sequence[Any]) -> None:
    name = f"{point.run.names[i]} ({point.dts[i]})"
    fn = point.fn_of((i,), point.xs)
    x = point.xs[i]
    ones = [mx.ones(o.shape, o.dtype) for o in outs]
    vjp = _attempt(point, f"vjp by {name}", i, lambda: mx.vjp(fn, [x], ones)[1])
    if vjp is not None:
        _zero(point, f"vjp by {name}", i, vjp, [tuple(x.shape)])
    tangent = mx.ones(x.shape, x.dtype)
    jvp = _attempt(point, f"jvp by {name}", i, lambda: mx.jvp(fn, [x], [tangent])[1])
    if jvp is not None:
        _zero(point, f"jvp by {name}", i, jvp, [tuple(o.shape) for o in outs])


def _attempt(point: Point, what: str, i: int, call: Callable[[], Any]) -> list[Any] | None:
    """``call``'s derivatives, or None when MLX refused (recorded) or raised (a finding)."""
    refusal: list[str] = []

    def refused_or_value() -> Any:
        try:
            value = call()
            mx.eval(value)
            return value
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}".strip()
            if not (re.search(REFUSAL, text) or re.search(UNSUPPORTED, text)):
                raise
            refusal.append(text)
            return []

    # Point.attempt names the path on stderr first (a crash's report) and makes any other
    # exception a finding of kind error.
    value = point.attempt(what, (i,), refused_or_value, check="integers")
    if refusal:
        point.run.result.refuse("integers", f"{what} ({point.dtype})", refusal[0])
        return None
    return None if value is None else list(value)


def _zero(
    point: Point, what: str, i: int, derivatives: list[Any], shapes: list[tuple[int, ...]]
) -> None:
    """A finding unless every derivative is zero and of the shape its operand has."""
    point.run.result.compared("integers")
    if len(derivatives) != len(shapes):
        detail = f"{len(derivatives)} results for {len(shapes)} expected"
        point.finding("wrong-shape", "integers", what, (i,), detail)
        return
    for k, (d, shape) in enumerate(zip(derivatives, shapes)):
        label = f"{what} (result {k})" if len(shapes) > 1 else what
        if tuple(d.shape) != shape:
            detail = f"{list(d.shape)} vs {list(shape)}"
            point.finding("wrong-shape", "integers", label, (i,), detail)
            continue
        # A complex derivative (of a complex output) is shown by its magnitude.
        shown = mx.abs(d) if d.dtype == mx.complex64 else d.astype(mx.float32)
        values = np.array(shown, dtype=np.float64)
        if values.size and not (values == 0).all():
            count = int((values != 0).sum())
            detail = f"observed {fmt(values)}, expected zero ({count}/{values.size} non-zero)"
            point.finding("wrong-value", "integers", label, (i,), detail)
