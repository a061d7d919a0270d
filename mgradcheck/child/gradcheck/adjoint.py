"""jvp and vjp of one :class:`~.point.Point` against each other, with no finite differences.

For any linear map J, <J^T c, t> = <c, J t>: the vjp with a random cotangent
``c`` and the jvp along a random tangent ``t`` must give the same number. Both
sides come from MLX's rules alone, so the identity holds where finite
differences cannot judge: at a kink both rules pick some one-sided derivative,
and they must pick the same linear map. It is computed in float64 on the CPU
(float32 where an operation lacks float64), every output element weighed.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import dtype_name, to_mlx, to_numpy
from mgradcheck.child.gradcheck.point import Point
from mgradcheck.child.gradcheck_spec import FLOATS

# Relative to the sum of the terms' magnitudes. A rule that is wrong, or a jvp and a vjp
# that take different one-sided derivatives, is off by a good part of a term; float64 is
# there to keep rounding far below that, not to judge an operation's precision (float64
# logcumsumexp on the CPU agrees with NumPy to about 1e-8 only).
TOLERANCE = float(np.sqrt(np.finfo(np.float32).eps))


def check(point: Point, full: tuple[int, ...]) -> None:
    """<vjp(c), t> against <c, jvp(t)> with ``full`` traced, in the widest dtype the function takes."""
    for wide in ("float64", "float32"):
        dts = [wide if dt in FLOATS else dt for dt in point.dts]
        with mx.stream(mx.cpu):
            xs = [to_mlx(v, dt) for v, dt in zip(point.x64, dts)]
            try:
                outs = point.fn_of(full, xs)(*[xs[i] for i in full])
                mx.eval(outs)
            except Exception:  # noqa: BLE001 - this function lacks float64: try float32
                continue
        _compare(point, full, xs, outs, wide)
        return


def _compare(
    point: Point, full: tuple[int, ...], xs: list[Any], outs: list[Any], wide: str
) -> None:
    floats = [k for k, o in enumerate(outs) if dtype_name(o.dtype) in FLOATS]
    tangents = [to_mlx(to_numpy(point.tangent(i)), wide) for i in full]
    cotangents = [
        to_mlx(point.rng.standard_normal(o.shape), dtype_name(o.dtype))
        if k in floats
        else mx.zeros(o.shape, o.dtype)
        for k, o in enumerate(outs)
    ]
    fn = point.fn_of(full, xs)
    primals = [xs[i] for i in full]
    repro = {"path": "adjoint", "dtype": wide}

    def on_cpu(call: Any) -> Any:
        def run() -> Any:
            with mx.stream(mx.cpu):
                value = call()
                mx.eval(value)
                return value

        return run

    jvp = point.attempt(
        f"jvp in {wide}",
        full,
        on_cpu(lambda: mx.jvp(fn, primals, tangents)[1]),
        "adjoint",
        repro,
        reference=True,
    )
    vjp = point.attempt(
        f"vjp in {wide}", full, on_cpu(lambda: mx.vjp(fn, primals, cotangents)[1]), "adjoint", repro
    )
    if jvp is None or vjp is None:
        return
    if len(vjp) != len(full) or any(g.shape != t.shape for g, t in zip(vjp, tangents)):
        return  # a cotangent of the wrong count or shape is the dtype check's finding
    if len(jvp) != len(outs) or any(jvp[k].shape != outs[k].shape for k in floats):
        return
    left = [to_numpy(g) * to_numpy(t) for g, t in zip(vjp, tangents)]
    right = [to_numpy(cotangents[k]) * to_numpy(jvp[k]) for k in floats]
    terms = left + right
    if not all(np.isfinite(x).all() for x in terms):
        return  # an infinite derivative has no inner product
    point.run.result.compared("adjoint")
    a = float(sum(x.sum() for x in left))
    b = float(sum(x.sum() for x in right))
    size = float(sum(np.abs(x).sum() for x in terms))
    if not abs(a - b) <= TOLERANCE * size:
        point.finding(
            "wrong-value",
            "adjoint",
            f"vjp vs jvp in {wide} (<J^T c, t> vs <c, J t>, no finite differences)",
            full,
            f"{a:.12g} vs {b:.12g} (scale {size:.3g})",
            repro,
        )
