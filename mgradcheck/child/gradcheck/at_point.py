"""Every check gradcheck makes at one :class:`~.point.Point`, in order.

First order for each set of traced arguments (:mod:`.first_order`) and jvp
against vjp with no finite differences (:mod:`.adjoint`), then, once that
agrees, each transformed path the run asks for: compiled and second order
(:mod:`.transforms`), vmap (:mod:`.vmapped`), views, special values and
shapeless compilation (:mod:`.layouts`), checkpoint and custom functions
(:mod:`.wrappers`), export (:mod:`.exported`) and transforms composed
(:mod:`.composed`). Those modules build on :class:`~.point.Point`; this one sits
above them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck import (
    adjoint,
    composed,
    exported,
    first_order,
    integers,
    layouts,
    transforms,
    vmapped,
    wrappers,
)
from mgradcheck.child.gradcheck import point as points
from mgradcheck.child.gradcheck.arrays import dtype_name, outputs, to_mlx, to_numpy
from mgradcheck.child.gradcheck.numerics import close, rms
from mgradcheck.child.gradcheck.point import NotChecked, Point, subsets
from mgradcheck.child.gradcheck_spec import DTYPE_REFUSAL, FLOATS, UNSUPPORTED


def check_at(point: Point) -> None:
    """Make every check ``point.run`` asks for at ``point``; raise :class:`NotChecked` when
    the point cannot be checked honestly."""
    run = point.run
    if not point.traced and "integers" not in run.checks:
        raise NotChecked("no differentiable argument", retry=False)
    if points.trace is not None:
        values = json.dumps({"dtype": point.dtype, "values": [v.tolist() for v in point.x64]})
        print(f"gradcheck: values {values}", file=points.trace, flush=True)
    try:
        outs = outputs(run.fn(*point.xs))
        mx.eval(outs)
    except Exception as exc:
        if re.search(UNSUPPORTED, str(exc)) or re.search(DTYPE_REFUSAL, str(exc)):
            run.result.refuse("primal", f"primal ({point.dtype})", f"{type(exc).__name__}: {exc}")
            raise NotChecked("the primal is not supported", retry=False) from None
        raise
    if "integers" in run.checks and integers.check(point, outs) and not point.traced:
        return  # checked: only the integer arguments could be differentiated by
    if not point.traced:
        raise NotChecked("no differentiable argument", retry=False)
    point.floats = [k for k, o in enumerate(outs) if dtype_name(o.dtype) in FLOATS]
    if not point.floats:
        raise NotChecked("integer outputs only", retry=False)
    primal = [to_numpy(o) for o in outs]
    if not all(np.isfinite(primal[k]).all() for k in point.floats):
        raise NotChecked("the primal has NaN or inf")
    reference = point.reference()
    expected = reference(point.x64)
    for k in point.floats:
        if (
            not np.isfinite(expected[k]).all()
            or not close(primal[k], expected[k], point.rtol, point.atol, rms(expected[k])).all()
        ):
            raise NotChecked(
                f"the {point.dtype} primal differs from float64 here (precision or a branch)"
            )
    point.outs = outs
    point.cotangents = [
        to_mlx(point.rng.standard_normal(o.shape), dtype_name(o.dtype))
        if k in point.floats
        else mx.zeros(o.shape, o.dtype)
        for k, o in enumerate(outs)
    ]
    compared = False
    for subset in subsets(point.traced, "subsets" in run.checks):
        compared |= first_order.compare(point, subset, reference)
    if "adjoint" in run.checks and not point.found:  # needs no smooth element: before the raise
        adjoint.check(point, tuple(point.traced))
    if not compared:
        raise NotChecked("no output element is smooth along the direction drawn (a kink or a jump)")
    # Once first order disagrees, the transformed paths only echo it (and on
    # some releases they crash where eager merely gave a wrong number).
    # They compare paths, not points: the first point checked is enough.
    full = tuple(point.traced)
    for name, path in paths() if not run.result.checked else ():
        if name in run.checks and not point.found:
            path(point, full)


def paths() -> list[tuple[str, Callable[[Point, tuple[int, ...]], None]]]:
    """Every transformed path after first order, by the check that asks for it, in order."""
    return [
        ("compile", transforms.compiled),
        ("hessian", transforms.second_order),
        ("vmap", vmapped.check),
        ("views", layouts.views),
        ("specials", layouts.specials),
        ("shapeless", layouts.shapeless),
        ("checkpoint", wrappers.checkpoint),
        ("custom", wrappers.custom),
        ("export", exported.check),
        ("compose", composed.check),
    ]
