"""First order at one :class:`~.point.Point`: jvp and vjp against finite differences and each
other, every subset of traced arguments against all of them, tangent and cotangent dtypes
and shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import dtype_name, to_numpy
from mgradcheck.child.gradcheck.numerics import Function64, finite_differences, mismatch
from mgradcheck.child.gradcheck.point import Point


def compare(point: Point, subset: tuple[int, ...], reference: Function64) -> bool:
    """jvp, vjp and finite differences with ``subset`` traced; False when nothing was comparable."""
    run = point.run
    tangents = {i: point.tangent(i) for i in subset}
    tangents64 = [
        to_numpy(tangents[i]) if i in tangents else np.zeros_like(v)
        for i, v in enumerate(point.x64)
    ]
    fn = point.fn_of(subset, point.xs)
    primals = [point.xs[i] for i in subset]
    label = "(" + ",".join(run.names[i] for i in subset) + ")"
    jvp = point.attempt(
        f"jvp{label}", subset, lambda: mx.jvp(fn, primals, [tangents[i] for i in subset])[1]
    )
    fd = finite_differences(reference, point.x64, tangents64, point.eps)
    masks = [
        fd.mask[k] if k in point.floats else np.zeros(o.shape, bool)
        for k, o in enumerate(point.outs)
    ]
    if not any(m.any() for m in masks):
        return False
    # Cotangents are zero where the function is not smooth, so vjp is compared there only.
    masked = [
        c * mx.array(m.astype(np.float32)).astype(c.dtype) for c, m in zip(point.cotangents, masks)
    ]
    vjp = point.attempt(f"vjp{label}", subset, lambda: mx.vjp(fn, primals, masked)[1])
    jvp_fits, vjp_fits = shapes(point, jvp, vjp, subset)
    jvp_values = [to_numpy(t) for t in jvp] if jvp_fits else None
    vjp_values = [to_numpy(c) for c in vjp] if vjp_fits else None
    tally = run.result.compared
    if jvp is not None or vjp is not None:
        tally("dtype")
    if jvp_values is not None and "jvp" in run.checks:
        tally("jvp")
        for k in point.floats:
            bad = mismatch(jvp_values[k], fd.steps[k], fd.mask[k], point.rtol, point.atol)
            if bad:
                point.finding(
                    "wrong-value", "jvp", f"jvp vs finite differences (output {k})", subset, bad
                )
    if vjp_values is not None and "vjp" in run.checks:
        tally("vjp")
        cotangents64 = [to_numpy(c) for c in masked]
        left = [(v * tangents64[i]) for v, i in zip(vjp_values, subset)]
        # Against finite differences, any step may stand, as for the jvp: in float32 the
        # settled estimate can be 2 % off where the function is large against its slope.
        steps = [[fd.steps[k][s] for k in range(len(point.outs))] for s in range(len(fd.steps[0]))]
        against = [([fd.estimate, *steps], "finite differences")]
        if jvp_values is not None:
            against.append(([jvp_values], "jvp"))
        for others, paths in against:
            rights = [[cotangents64[k] * other[k] for k in point.floats] for other in others]
            inner(point, left, rights, f"vjp vs {paths} (<J^T c, t> vs <c, J t>)", subset)
    if "subsets" in run.checks and subset != tuple(point.traced):
        tally("subsets")
        against_all_traced(point, subset, tangents, masked, jvp_values, vjp_values)
    return True


def inner(
    point: Point,
    left: list[np.ndarray],
    rights: list[list[np.ndarray]],
    paths: str,
    subset: Sequence[int],
) -> None:
    """Compare two sides of the inner-product identity, at the scale of their terms: the left
    against each way of computing the right (the first is reported), one agreeing is enough."""
    a = float(sum(x.sum() for x in left))
    sides = [
        (float(sum(x.sum() for x in right)), float(sum(np.abs(x).sum() for x in left + right)))
        for right in rights
    ]
    if not any(abs(a - b) <= point.atol + point.rtol * size for b, size in sides):
        b, size = sides[0]
        point.finding("wrong-value", "vjp", paths, subset, f"{a:.7g} vs {b:.7g} (scale {size:.3g})")


def shapes(point: Point, jvp: Any, vjp: Any, subset: Sequence[int]) -> tuple[bool, bool]:
    """Check tangent and cotangent shapes (and dtypes, with the dtype check); say which fit."""
    pairs = [("jvp", f"tangent of output {k}", point.outs[k], jvp, k) for k in point.floats]
    pairs += [
        ("vjp", f"cotangent of {point.run.names[i]}", point.xs[i], vjp, j)
        for j, i in enumerate(subset)
    ]
    fits = {"jvp": jvp is not None, "vjp": vjp is not None}
    for path, what, primal, derived, index in pairs:
        if derived is None:
            continue
        if index >= len(derived):
            fits[path] = False
            point.finding(
                "wrong-shape",
                "dtype",
                f"{path} results vs arguments",
                subset,
                f"{len(derived)} results for {len(subset) if path == 'vjp' else len(point.outs)}",
            )
            continue
        d = derived[index]
        if tuple(d.shape) != tuple(primal.shape):
            fits[path] = False
            point.finding(
                "wrong-shape",
                "dtype",
                f"{path} {what} vs its primal",
                subset,
                f"{list(d.shape)} vs {list(primal.shape)}",
            )
        elif d.dtype != primal.dtype and "dtype" in point.run.checks:
            point.finding(
                "wrong-dtype",
                "dtype",
                f"{path} {what} vs its primal",
                subset,
                f"{dtype_name(d.dtype)} vs {dtype_name(primal.dtype)}",
            )
    return fits["jvp"], fits["vjp"]


def against_all_traced(
    point: Point,
    subset: tuple[int, ...],
    tangents: dict[int, Any],
    cotangents: list[Any],
    jvp_values: list[np.ndarray] | None,
    vjp_values: list[np.ndarray] | None,
) -> None:
    """The derivatives with ``subset`` traced must equal those with every argument traced."""
    full = tuple(point.traced)
    fn = point.fn_of(full, point.xs)
    primals = [point.xs[i] for i in full]
    padded = [tangents[i] if i in tangents else mx.zeros_like(point.xs[i]) for i in full]
    names = ",".join(point.run.names[i] for i in subset)
    jvp_all = point.attempt("jvp(all)", full, lambda: mx.jvp(fn, primals, padded)[1])
    if jvp_all is not None and jvp_values is not None:
        for k in point.floats:
            ref = to_numpy(jvp_all[k])
            bad = mismatch(jvp_values[k], [ref], np.ones(ref.shape, bool), point.rtol, point.atol)
            if bad:
                point.finding(
                    "wrong-value",
                    "subsets",
                    f"jvp with ({names}) traced vs jvp with all traced",
                    subset,
                    bad,
                )
    vjp_all = point.attempt("vjp(all)", full, lambda: mx.vjp(fn, primals, cotangents)[1])
    if vjp_all is not None and vjp_values is not None:
        for v, i in zip(vjp_values, subset):
            ref = to_numpy(vjp_all[full.index(i)])
            bad = mismatch(v, [ref], np.ones(ref.shape, bool), point.rtol, point.atol)
            if bad:
                point.finding(
                    "wrong-value",
                    "subsets",
                    f"vjp for {point.run.names[i]} with ({names}) traced vs with all traced",
                    subset,
                    bad,
                )
