"""The compiled and second-order paths of one :class:`~.point.Point`.

Compiled: the function, its jvp and its vjp under ``mx.compile`` against the
same eagerly. Second order: jvp of the gradient (forward over reverse) and the
gradient of <gradient, tangent> (reverse over reverse) against each other and
against finite differences of the float64 gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import outputs, to_mlx, to_numpy
from mgradcheck.child.gradcheck.numerics import FiniteDifferences, finite_differences, mismatch
from mgradcheck.child.gradcheck.point import Point, pad
from mgradcheck.child.gradcheck_spec import FLOATS


def compiled(point: Point, full: tuple[int, ...]) -> None:
    """The primal, jvp and vjp compiled against the same eager (the bug class of compiled kernels).

    Every array is an argument (tangents and cotangents too): captured, a size-1
    one would be written into the kernel's source, one kernel per random draw.
    """
    tangents = [point.tangent(i) for i in full]
    paths = [
        ("primal", point.whole(), []),
        ("jvp", point.jvp_of(full), tangents),
        ("vjp", point.vjp_of(full), point.cotangents),
    ]
    for what, f, extra in paths:
        repro = {"path": what}
        eager = point.attempt(
            f"{what} eager", full, partial(f, *point.xs, *extra), "compile", repro
        )
        built = point.attempt(
            f"{what} compiled", full, partial(mx.compile(f), *point.xs, *extra), "compile", repro
        )
        if eager is None or built is None:
            continue
        point.agree_on(
            "compile", f"compiled {what} vs eager {what}", full, what, built, eager, repro
        )


def grad_of(
    point: Point, full: tuple[int, ...], base: Sequence[Any], accumulate: Any
) -> Callable[..., list[Any]]:
    """The gradient of <f(a), c> by the ``full`` arguments (the others fixed at ``base``): J^T c."""
    fn = point.fn_of(full, base)

    def weighted(*a: Any) -> Any:
        terms = [
            (o.astype(accumulate) * c.astype(accumulate)).sum()
            for o, c in zip(fn(*a), point.cotangents)
        ]
        return sum(terms[1:], terms[0])

    return lambda *a: outputs(mx.grad(weighted, argnums=list(range(len(full))))(*a))


def gradient_differences(
    point: Point, full: tuple[int, ...], tangents: Sequence[Any]
) -> FiniteDifferences | None:
    """Finite differences along ``tangents`` of the float64 gradient of <f, c>: the oracle of
    every second-order path. None where the function has no float64 gradient."""
    tangents64 = pad(
        [to_numpy(t) for t in tangents], full, len(point.xs), lambda i: np.zeros_like(point.x64[i])
    )

    def grad64(vals: list[np.ndarray]) -> list[np.ndarray]:
        dts = ["float64" if dt in FLOATS else dt for dt in point.dts]
        with mx.stream(mx.cpu):
            xs = [to_mlx(v, dt) for v, dt in zip(vals, dts)]
            res = grad_of(point, full, xs, mx.float64)(*[xs[i] for i in full])
            mx.eval(res)
            return [to_numpy(r) for r in res]

    try:
        return finite_differences(grad64, point.x64, tangents64, float(np.finfo(np.float64).eps))
    except Exception:  # noqa: BLE001 - no float64 gradient
        return None


def second_order(point: Point, full: tuple[int, ...]) -> None:
    """jvp of grad and grad of <grad, t> against finite differences of the gradient."""
    if len(point.floats) != len(point.outs):
        return  # an integer output has no gradient to weigh
    argnums = list(range(len(full)))
    tangents = [point.tangent(i) for i in full]
    primals = [point.xs[i] for i in full]
    accumulate = mx.float64 if point.dtype == "float64" else mx.float32
    grad = grad_of(point, full, point.xs, accumulate)
    jvp_of_grad = point.attempt(
        "jvp of grad", full, lambda: mx.jvp(grad, primals, tangents)[1], "hessian"
    )

    def along_tangent(*a: Any) -> Any:  # <grad(a), t>
        terms = [
            (x.astype(accumulate) * t.astype(accumulate)).sum() for x, t in zip(grad(*a), tangents)
        ]
        return sum(terms[1:], terms[0])

    grad_of_inner = point.attempt(
        "grad of <grad, t>",
        full,
        lambda: outputs(mx.grad(along_tangent, argnums=argnums)(*primals)),
        "hessian",
    )
    if jvp_of_grad is None or grad_of_inner is None:
        return
    fd = gradient_differences(point, full, tangents)
    rtol = 2 * point.rtol
    point.run.result.compared("hessian")
    for j, i in enumerate(full):
        forward, reverse = to_numpy(jvp_of_grad[j]), to_numpy(grad_of_inner[j])
        name = point.run.names[i]
        if fd is not None:
            bad = mismatch(forward, fd.steps[j], fd.mask[j], rtol, point.atol)
            if bad:
                point.finding(
                    "wrong-value",
                    "hessian",
                    f"jvp of grad vs finite differences of grad ({name})",
                    full,
                    bad,
                    {"path": "jvp of grad", "argument": name},
                )
        bad = mismatch(reverse, [forward], np.isfinite(forward), rtol, point.atol)
        if bad:
            point.finding(
                "wrong-value",
                "hessian",
                f"grad of <grad, t> vs jvp of grad ({name})",
                full,
                bad,
                {"path": "grad of <grad, t>", "argument": name},
            )
