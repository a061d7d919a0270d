"""The function of one :class:`~.point.Point` wrapped in ``mx.checkpoint`` and ``mx.custom_function``.

By the time these run, the eager jvp and vjp at the point have agreed with
finite differences, so they are the oracle:

- ``checkpoint``: jvp and vjp through ``mx.checkpoint(f)`` equal those of ``f``.
- ``custom``: ``mx.custom_function(f)`` with a vjp rule returning twice f's
  vjp, a jvp rule returning three times f's jvp and a vmap rule that loops over
  the mapped axis. MLX must call each rule (and pass it the right primals,
  tangents, cotangents and axes): the vjp must be exactly 2x, the jvp 3x, with
  all arguments traced and with only the first, and vmap must equal the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import mlx.core as mx

from mgradcheck.child.gradcheck.point import Point
from mgradcheck.child.gradcheck.vmapped import BATCH, Vmapped

VJP_SCALE, JVP_SCALE = 2.0, 3.0


def checkpoint(point: Point, full: tuple[int, ...]) -> None:
    fn = point.fn_of(full, point.xs)
    wrapped = mx.checkpoint(fn)
    primals = [point.xs[i] for i in full]
    tangents = [point.tangent(i) for i in full]
    cots = point.cotangents
    paths: list[tuple[str, Callable[[Any], Any], str]] = [
        ("jvp", lambda f: mx.jvp(f, primals, tangents)[1], "jvp through mx.checkpoint"),
        ("vjp", lambda f: mx.vjp(f, primals, cots)[1], "vjp through mx.checkpoint"),
    ]
    for path, call, through in paths:
        repro = {"path": path}
        ref = point.attempt(
            f"{path} eager", full, partial(call, fn), "checkpoint", repro, reference=True
        )
        got = point.attempt(through, full, partial(call, wrapped), "checkpoint", repro)
        if ref is not None and got is not None:
            label = f"{through} vs {path} of the function"
            point.agree_on("checkpoint", label, full, path, got, ref, repro)
        if point.found:
            return


def _custom(point: Point, full: tuple[int, ...], calls: dict[str, int]) -> Any:
    fn = point.fn_of(full, point.xs)
    n = len(full)

    def unpack(tree: Any) -> list[Any]:
        return list(tree) if n > 1 else [tree]

    @mx.custom_function
    def f(*a: Any) -> Any:
        return fn(*a)

    @f.vjp
    def f_vjp(primals: Any, cotangents: Any, outs: Any) -> Any:
        calls["vjp"] += 1
        grads = mx.vjp(fn, unpack(primals), list(cotangents))[1]
        scaled = tuple(VJP_SCALE * g for g in grads)
        return scaled if n > 1 else scaled[0]

    @f.jvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        calls["jvp"] += 1
        xs = unpack(primals)
        ts = [t if t is not None else mx.zeros_like(x) for t, x in zip(unpack(tangents), xs)]
        return [JVP_SCALE * t for t in mx.jvp(fn, xs, ts)[1]]

    @f.vmap
    def f_vmap(inputs: Any, axes: Any) -> Any:
        calls["vmap"] += 1
        xs, ax = unpack(inputs), unpack(axes)
        size = next(x.shape[a] for x, a in zip(xs, ax) if a is not None)
        # The index as an array: mx.take with a Python int refuses an array with no elements
        # even along an axis that has some ("Cannot do a non-empty take"), as NumPy does not.
        each = [
            fn(*[mx.take(x, mx.array(b), axis=a) if a is not None else x for x, a in zip(xs, ax)])
            for b in range(size)
        ]
        stacked = [mx.stack([e[k] for e in each]) for k in range(len(each[0]))]
        return stacked, [0] * len(stacked)

    return f


def custom(point: Point, full: tuple[int, ...]) -> None:
    calls = {"vjp": 0, "jvp": 0, "vmap": 0}
    f = _custom(point, full, calls)
    fn = point.fn_of(full, point.xs)
    primals = [point.xs[i] for i in full]
    tangents = [point.tangent(i) for i in full]
    cots = point.cotangents
    first = full[:1]
    rest = [point.xs[i] for i in full[1:]]

    def first_only(g: Any) -> Any:
        return lambda a: g(a, *rest)

    cases: list[tuple[str, tuple[int, ...], float, Callable[[Any], Any]]] = [
        ("vjp", full, VJP_SCALE, lambda g: mx.vjp(g, primals, cots)[1]),
        ("jvp", full, JVP_SCALE, lambda g: mx.jvp(g, primals, tangents)[1]),
    ]
    if len(full) > 1:  # the rules see None for the untraced argument's tangent
        cases += [
            ("vjp", first, VJP_SCALE, lambda g: mx.vjp(first_only(g), primals[:1], cots)[1]),
            (
                "jvp",
                first,
                JVP_SCALE,
                lambda g: mx.jvp(first_only(g), primals[:1], tangents[:1])[1],
            ),
        ]
    for path, traced, scale, call in cases:
        repro = {
            "path": f"custom {path}",
            "scale": scale,
            "over": [point.run.names[i] for i in full],
        }
        label = f"custom {path} rule (returns {scale:g}x {path})"
        before = calls[path]
        ref = point.attempt(
            f"{path} of the function", traced, partial(call, fn), "custom", repro, reference=True
        )
        got = point.attempt(label, traced, partial(call, f), "custom", repro)
        if ref is None or got is None:
            continue
        if calls[path] == before:
            point.finding(
                "wrong-value",
                "custom",
                f"{label} was never called",
                traced,
                f"mx.{path} used another path; its result: {[g.tolist() for g in got][:2]}",
                repro,
            )
            return
        paths = f"{path} through the {label} vs {scale:g}x {path} of the function"
        point.agree_on("custom", paths, traced, path, got, ref, repro, scale)
        if point.found:
            return
    vmapped = Vmapped(point, full)
    mapped = frozenset(full)
    loop = vmapped.loop(mapped)
    if loop is None:
        return
    batched = [vmapped.batched(vmapped.values[i], point.dts[i], 0) for i in full]
    repro = {"path": "custom vmap", "batch": BATCH}
    got = point.attempt(
        "vmap through the custom vmap rule", full, lambda: mx.vmap(f)(*batched), "custom", repro
    )
    if got is None:
        return
    if calls["vmap"] == 0:
        point.finding(
            "wrong-value",
            "custom",
            "custom vmap rule was never called",
            full,
            "mx.vmap used another path",
            repro,
        )
        return
    import numpy as np

    expected = [np.stack([s[k] for s in loop.forward]) for k in range(len(point.outs))]
    point.agree(
        "custom",
        "vmap through the custom vmap rule vs a loop over slices",
        full,
        list(got),
        expected,
        repro,
    )
