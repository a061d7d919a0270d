"""``mx.compile`` of one :class:`~.point.Point` on unusual inputs, against eager.

- ``views``: the arguments as views (transposed, reversed with negative
  strides, stepped slices, broadcasts with zero strides), compiled and eager,
  against eager on contiguous copies of the same values. One compiled function
  is traced on contiguous inputs and then called with each layout, as a user's
  would be.
- ``specials``: each floating argument in turn replaced by a captured constant
  of every special value (NaN, +inf, -inf, -0.0; a scalar where the function
  accepts one, since size-1 constants are written into the kernel's source),
  and passed as an input holding those values among ordinary ones: compiled
  against eager, NaN for NaN and infinity for infinity.
- ``shapeless``: ``mx.compile(..., shapeless=True)`` traced at the point's
  shapes and called with larger shapes, size-1 axes, a broadcast operand
  (forward only) and one more leading axis, against eager at those shapes. An
  output that keeps its traced shape is a graph conditional on the input
  shapes, which MLX documents shapeless compilation does not follow: it is
  listed as unsupported, never a finding; values, crashes and errors are.

Each compares the function's values and its vjp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import dtype_name, to_mlx, to_numpy
from mgradcheck.child.gradcheck.graphs import Graph, graph, joined
from mgradcheck.child.gradcheck.point import Point, pad
from mgradcheck.child.gradcheck_spec import FLOATS, INTEGERS

LAYOUTS = ("transposed", "reversed", "stepped", "broadcast")
SPECIALS = (("nan", float("nan")), ("inf", float("inf")), ("-inf", float("-inf")), ("-0.0", -0.0))
SPECIAL_ARGUMENTS = 2  # the first floating arguments given special values


def _cotangents(point: Point, outs: Sequence[Any]) -> list[Any]:
    return [
        to_mlx(point.rng.standard_normal(o.shape), dtype_name(o.dtype))
        if dtype_name(o.dtype) in FLOATS
        else mx.zeros(o.shape, o.dtype)
        for o in outs
    ]


def _floats(point: Point) -> list[int]:
    return [i for i, dt in enumerate(point.dts) if dt in FLOATS]


# -- views ----------------------------------------------------------------
def _view(v: np.ndarray, dt: str, layout: str) -> tuple[np.ndarray, Any] | None:
    """(the values, an MLX view holding them), or None when the rank does not allow it."""
    if layout == "transposed" and v.ndim >= 2:
        base = to_mlx(np.ascontiguousarray(np.swapaxes(v, -1, -2)), dt)
        return v, mx.swapaxes(base, -1, -2)
    if layout == "reversed" and v.ndim >= 1:
        return v, to_mlx(np.ascontiguousarray(v[::-1]), dt)[::-1]
    if layout == "stepped" and v.ndim >= 1:
        return v, to_mlx(np.repeat(v, 2, axis=0), dt)[::2]
    if layout == "broadcast" and v.ndim >= 1 and v.shape[0] > 1:
        values = np.ascontiguousarray(np.broadcast_to(v[:1], v.shape))
        return values, mx.broadcast_to(to_mlx(v[:1], dt), v.shape)
    return None


def _against(
    point: Point,
    check: str,
    full: tuple[int, ...],
    paths: str,
    reference: Callable[[], Any],
    candidate: Callable[[], Any],
    repro: dict[str, Any],
    specials: bool = False,
) -> bool:
    """Run ``candidate`` and compare it with ``reference`` (whose failure means: nothing to
    compare); False when the reference could not run."""
    ref = point.attempt(f"{paths}: reference", full, reference, check, repro, reference=True)
    if ref is None:
        return False
    got = point.attempt(paths, full, candidate, check, repro)
    if got is not None:
        point.agree(check, paths, full, got, ref, repro, specials)
    return True


def views(point: Point, full: tuple[int, ...]) -> None:
    f, vjp = point.whole(), point.vjp_of(full)
    cf, cv = mx.compile(f), mx.compile(vjp)
    cots = point.cotangents
    # Trace both on contiguous arguments first, as a caller's first call would.
    first = point.attempt("compiled on contiguous arguments", full, partial(cf, *point.xs), "views")
    if first is None:
        return
    point.attempt(
        "compiled vjp on contiguous arguments", full, partial(cv, *point.xs, *cots), "views"
    )
    for layout in LAYOUTS:
        made = {i: _view(point.x64[i], point.dts[i], layout) for i in _floats(point)}
        views = {i: m for i, m in made.items() if m is not None}
        if not views:
            continue
        plain = [
            to_mlx(views[i][0], point.dts[i]) if i in views else x for i, x in enumerate(point.xs)
        ]
        viewed = [views[i][1] if i in views else x for i, x in enumerate(point.xs)]
        for what, g, compiled, extra in (("primal", f, cf, []), ("vjp", vjp, cv, cots)):
            for how, h in (("eager", g), ("compiled", compiled)):
                repro = {
                    "layout": layout,
                    "path": what,
                    "viewed": sorted(views),
                    "compiled": how == "compiled",
                }
                paths = f"{how} {what} on {layout} views vs eager on contiguous copies"
                if not _against(
                    point,
                    "views",
                    full,
                    paths,
                    partial(g, *plain, *extra),
                    partial(h, *viewed, *extra),
                    repro,
                ):
                    break
            if point.found:
                return


# -- special values -------------------------------------------------------
def _with_specials(v: np.ndarray) -> np.ndarray:
    """``v`` with NaN, +inf, -inf and -0.0 in turn in its first elements (every fifth one)."""
    out = np.array(v, dtype=np.float64)
    flat = out.reshape(-1)
    for j in range(0, flat.size, 5):
        flat[j : j + 4] = [s for _, s in SPECIALS][: min(4, flat.size - j)]
    return out


def _captured(
    point: Point, i: int, value: float
) -> tuple[Callable[..., list[Any]], tuple[int, ...], tuple[int, ...]] | None:
    """The function with argument ``i`` a captured constant ``value`` (a scalar where it takes
    one, else filled to its shape) as a function of every other argument, and that shape.

    The others are passed in, traced or not: a size-1 one captured (a shrunk ``const``
    argument, a mask) would be written into the kernel too, one kernel per random draw.
    """
    others = tuple(j for j in range(len(point.xs)) if j != i)
    for shape in ((), point.x64[i].shape):
        base = list(point.xs)
        base[i] = to_mlx(np.full(shape, value), point.dts[i])
        g = point.fn_of(others, base)
        try:
            mx.eval(g(*[point.xs[j] for j in others]))
        except Exception:  # noqa: BLE001 - the function takes no such argument here
            continue
        return g, others, shape
    return None


def specials(point: Point, full: tuple[int, ...]) -> None:
    for i in _floats(point)[:SPECIAL_ARGUMENTS]:
        name = point.run.names[i]
        # A constant needs another argument beside it: a graph of constants alone is
        # folded into one kernel per value, which costs builds and tests no codegen.
        if [j for j in point.traced if j != i]:
            for special, value in SPECIALS:
                captured = _captured(point, i, value)
                if captured is not None:
                    g, others, shape = captured
                    by = [k for k, j in enumerate(others) if j in point.traced]
                    repro = {
                        "argument": name,
                        "special": special,
                        "constant": True,
                        "shape": list(shape),
                    }
                    _compare_special(
                        point,
                        full,
                        g,
                        _of(g, len(others), by),
                        [point.xs[j] for j in others],
                        f"{name}={special} captured",
                        repro,
                    )
                if point.found:
                    return
        planted = list(point.xs)
        planted[i] = to_mlx(_with_specials(point.x64[i]), point.dts[i])
        repro = {"argument": name, "special": "mixed", "constant": False}
        _compare_special(
            point,
            full,
            point.whole(),
            point.vjp_of(full),
            planted,
            f"{name} holding special values as input",
            repro,
        )
        if point.found:
            return


def _of(g: Callable[..., list[Any]], n: int, by: Sequence[int]) -> Callable[..., list[Any]]:
    """The vjp of ``g`` (a function of ``n`` arrays) by those at ``by``, cotangents trailing."""

    def vjp(*a: Any) -> list[Any]:
        args = list(a[:n])

        def of_traced(*t: Any) -> list[Any]:
            return g(*pad(t, by, n, lambda k: args[k]))

        return list(mx.vjp(of_traced, [args[k] for k in by], list(a[n:]))[1])

    return vjp


def _compare_special(
    point: Point,
    full: tuple[int, ...],
    f: Callable[..., list[Any]],
    vjp: Callable[..., list[Any]],
    args: list[Any],
    label: str,
    repro: dict[str, Any],
) -> None:
    """``f`` at ``args`` compiled against eager, then its ``vjp`` with cotangents of ones."""
    paths = f"compiled vs eager, {label}"
    primal = {**repro, "path": "primal"}
    if not _against(
        point,
        "specials",
        full,
        paths,
        partial(f, *args),
        partial(mx.compile(f), *args),
        primal,
        specials=True,
    ):
        return
    if point.found:
        return
    cots = [
        mx.ones(o.shape, o.dtype) if dtype_name(o.dtype) in FLOATS else mx.zeros(o.shape, o.dtype)
        for o in f(*args)
    ]
    paths = f"compiled vjp vs eager vjp, {label}"
    _against(
        point,
        "specials",
        full,
        paths,
        partial(vjp, *args, *cots),
        partial(mx.compile(vjp), *args, *cots),
        {**repro, "path": "vjp"},
        specials=True,
    )


# -- shapeless --------------------------------------------------------------
def _shapes(point: Point) -> list[tuple[str, dict[int, tuple[int, ...]]]]:
    """Other shapes for the drawn floating arguments: (name, argument -> shape).

    Drawn arguments change shape (masks too); literal ones keep theirs. With literals
    that are not floating, or integers drawn (indices drawn in range of the axes they
    index: ``take_along_axis(a, indices)``), only larger shapes: indices stay in range
    there, and MLX reads out of bounds without a word (or aborts)."""
    args = point.run.args
    drawn = [i for i, a in enumerate(args) if a.random and point.dts[i] not in INTEGERS[1:]]
    if not any(i in _floats(point) for i in drawn):
        return []
    shape = {i: tuple(point.x64[i].shape) for i in drawn}
    out = [("larger", {i: tuple(d + 1 if d > 1 else d for d in s) for i, s in shape.items()})]
    dts = zip(args, point.dts, strict=True)
    if not any(dt in INTEGERS[1:] or (not a.random and dt not in FLOATS) for a, dt in dts):
        out.append(("size-1 axes", {i: tuple(1 for _ in s) for i, s in shape.items()}))
        if len(drawn) > 1 and shape[drawn[-1]]:
            s = shape[drawn[-1]]
            out.append(("broadcast operand", {drawn[-1]: (1, *s[1:])}))
        # As long as the old leading axis, so that a literal index into it (x[2]) stays in
        # range: MLX reads out of bounds without a word.
        out.append(("one more axis", {i: (max([2, *s[:1]]), *s) for i, s in shape.items()}))
    return [(name, new) for name, new in out if any(new[i] != shape.get(i) for i in new)]


def _fixed_shape(point: Point, name: str, got: Sequence[Any], eager: Sequence[Any]) -> bool:
    """Whether a shape was written into the graph when it was traced: MLX documents that a
    shapeless graph conditional on its input shapes does not follow them, so it is no bug."""
    if [tuple(g.shape) for g in got] == [tuple(e.shape) for e in eager]:
        return False
    point.run.result.refuse(
        "shapeless",
        f"shapeless compiled at {name} ({point.dtype})",
        f"an output keeps its traced shape ({[list(g.shape) for g in got]} vs eager "
        f"{[list(e.shape) for e in eager]}): the graph depends on the input shapes",
    )
    return True


def _conditional(traced: Graph | None, here: Graph | None) -> str | None:
    """Why a graph is conditional on its input shapes, in words (see :mod:`.graphs`), or None."""
    if traced is not None and traced.fixed:
        return (
            f"the graph holds shapes fixed when traced ({', '.join(traced.fixed)}), "
            "which shapeless compilation does not follow"
        )
    if traced is not None and here is not None and traced.unlike(here):
        return (
            f"the function builds another graph at these shapes ({traced.unlike(here)}), "
            "which shapeless compilation does not follow"
        )
    return None


def shapeless(point: Point, full: tuple[int, ...]) -> None:
    f, vjp = point.whole(), point.vjp_of(full)
    sf, sv = mx.compile(f, shapeless=True), mx.compile(vjp, shapeless=True)
    if point.attempt("shapeless compile", full, partial(sf, *point.xs), "shapeless") is None:
        return
    point.attempt(
        "shapeless compiled vjp", full, partial(sv, *point.xs, *point.cotangents), "shapeless"
    )
    names = point.run.names
    primal = graph(f, list(point.xs))
    traced = {"primal": primal, "vjp": joined(primal, graph(vjp, [*point.xs, *point.cotangents]))}
    # The shapes each compiled function was called at before: a replay can depend on them.
    before: dict[str, list[dict[str, list[int]]]] = {"primal": [], "vjp": []}
    for variant, new in _shapes(point):
        xs = list(point.xs)
        for i, shape in new.items():
            xs[i] = to_mlx(
                replace(point.run.args[i], shape=shape).draw(point.dts[i], point.rng), point.dts[i]
            )
        shapes = {names[i]: list(s) for i, s in new.items()}
        repro = {
            "variant": variant,
            "shapes": shapes,
            "traced_at": {names[i]: list(point.x64[i].shape) for i in new},
            "values_at": {names[i]: to_numpy(xs[i]).tolist() for i in new},
        }
        eager = point.attempt(
            f"eager at {variant}", full, partial(f, *xs), "shapeless", repro, reference=True
        )
        if eager is None:
            continue  # the function does not take these shapes
        paths: list[tuple[str, str, Callable[..., Any], Callable[..., Any], list[Any]]] = [
            ("primal", f"shapeless compiled vs eager at {variant}", f, sf, [])
        ]
        if (
            variant != "broadcast operand"
        ):  # its vjp reduces over the broadcast: a graph conditional on the shapes
            paths.append(
                (
                    "vjp",
                    f"shapeless compiled vjp vs eager vjp at {variant}",
                    vjp,
                    sv,
                    _cotangents(point, eager),
                )
            )
        primal_here = graph(f, xs)  # the function's graph at these shapes, for both paths
        for what, label, g, compiled, extra in paths:
            ref = point.attempt(
                f"eager {what} at {variant}",
                full,
                partial(g, *xs, *extra),
                "shapeless",
                repro,
                reference=True,
            )
            called = {**repro, "path": what, "called_before": list(before[what])}
            here = primal_here if what == "primal" else joined(primal_here, graph(g, [*xs, *extra]))
            point.excuse = _conditional(traced[what], here)
            try:
                got = point.attempt(
                    label, full, partial(compiled, *xs, *extra), "shapeless", called
                )
                before[what].append(shapes)
                if (
                    ref is not None
                    and got is not None
                    and not _fixed_shape(point, variant, got, ref)
                ):
                    point.agree("shapeless", label, full, got, ref, called)
            finally:
                point.excuse = None
            if point.found:
                return
