"""``mx.vmap`` of one :class:`~.point.Point` against a Python loop over the mapped axis.

The oracle is the function, its jvp and its vjp applied to each slice in turn
(eager, no vmap anywhere) and stacked: vmap alone, vmap of jvp and jvp of vmap,
vmap of vjp and vjp of vmap must all equal it. The variants map every argument
at axis 0, at the last axis, at axis 2 where the rank allows, and the first
traced argument alone at axis 1 (the others unmapped, so broadcast), with
``out_axes`` 0, last, 2 and 1 to match; then each argument alone at its last
axis (``out_axes`` 0) and, with three or more, all but the last at axes 0 and
-1 in turn (``out_axes`` -1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import dtype_name, outputs, to_mlx, to_numpy
from mgradcheck.child.gradcheck.point import Point, pad

BATCH = 3


@dataclass(frozen=True)
class Variant:
    in_axes: tuple[int | None, ...]  # one per argument; None: not mapped
    out_axes: int
    compose: bool  # also vmap of jvp, jvp of vmap, vmap of vjp, vjp of vmap

    @property
    def mapped(self) -> frozenset[int]:
        return frozenset(i for i, a in enumerate(self.in_axes) if a is not None)

    def describe(self) -> str:
        axes = ", ".join("None" if a is None else str(a) for a in self.in_axes)
        return f"in_axes=({axes}{',' if len(self.in_axes) == 1 else ''}), out_axes={self.out_axes}"


def variants(point: Point) -> list[Variant]:
    ranks = [x.ndim for x in point.xs]
    out_rank = min(o.ndim for o in point.outs)
    first = point.traced[0]
    chosen = [
        Variant(tuple(0 for _ in ranks), 0, True),
        Variant(tuple(-1 for _ in ranks), -1, False),
        Variant(tuple(min(2, r) for r in ranks), min(2, out_rank), False),
        Variant(
            tuple(min(1, r) if i == first else None for i, r in enumerate(ranks)),
            min(1, out_rank),
            True,
        ),
    ]
    # Each argument mapped alone at its last axis, integer ones too (out_axes 0), and,
    # with three or more, all but the last mapped at alternating axes around one unmapped.
    chosen += [
        Variant(tuple(-1 if i == j else None for i in range(len(ranks))), 0, False)
        for j in range(len(ranks))
    ]
    if len(ranks) > 2:
        axes = tuple((0, -1)[i % 2] for i in range(len(ranks) - 1))
        chosen.append(Variant((*axes, None), -1, False))
    unique: list[Variant] = []
    for v in chosen:  # scalars make some variants the same
        if v not in unique:
            unique.append(v)
    return unique


@dataclass
class Loop:
    """The oracle for one set of mapped arguments: every path, slice by slice."""

    slices: list[list[Any]]  # [slice][argument]: the arguments of each slice
    tangents: list[list[Any]]  # [slice][traced argument]
    cotangents: list[list[Any]]  # [slice][output]
    forward: list[list[np.ndarray]]  # [slice][output]
    jvp: list[list[np.ndarray]] | None
    vjp: list[list[np.ndarray]] | None


class Vmapped:
    """Every vmap comparison at one point."""

    def __init__(self, point: Point, full: tuple[int, ...]) -> None:
        self.point, self.full = point, full
        rng = point.rng
        n = len(point.xs)
        # Slice 0 is the point itself; the others are fresh draws of the same specs.
        self.values: list[list[np.ndarray]] = [
            [point.x64[i]]
            + [
                to_numpy(to_mlx(point.run.args[i].draw(point.dts[i], rng), point.dts[i]))
                for _ in range(BATCH - 1)
            ]
            for i in range(n)
        ]
        self.tangents64 = [
            [to_numpy(point.tangent(i)) for _ in range(BATCH)] if i in full else []
            for i in range(n)
        ]
        self.cotangents64 = [
            [to_numpy(self._cotangent(k)) for _ in range(BATCH)] for k in range(len(point.outs))
        ]
        self.loops: dict[frozenset[int], Loop | None] = {}

    def _cotangent(self, k: int) -> Any:
        o = self.point.outs[k]
        if k in self.point.floats:
            return to_mlx(self.point.rng.standard_normal(o.shape), dtype_name(o.dtype))
        return mx.zeros(o.shape, o.dtype)

    # -- values ----------------------------------------------------------
    def arg(self, i: int, b: int | None, mapped: frozenset[int]) -> Any:
        """Argument ``i`` of slice ``b`` (its own value when ``i`` is not mapped)."""
        point = self.point
        return to_mlx(self.values[i][b if i in mapped and b is not None else 0], point.dts[i])

    def tangent(self, i: int, b: int, mapped: frozenset[int]) -> Any:
        return to_mlx(self.tangents64[i][b if i in mapped else 0], self.point.dts[i])

    def cotangent(self, k: int, b: int) -> Any:
        return to_mlx(self.cotangents64[k][b], dtype_name(self.point.outs[k].dtype))

    def batched(self, per_slice: Sequence[np.ndarray], dtype: str, axis: int) -> Any:
        return to_mlx(np.stack(list(per_slice), axis=axis), dtype)

    # -- the oracle ------------------------------------------------------
    def loop(self, mapped: frozenset[int]) -> Loop | None:
        if mapped in self.loops:
            return self.loops[mapped]
        point, full = self.point, self.full
        slices = [[self.arg(i, b, mapped) for i in range(len(point.xs))] for b in range(BATCH)]
        tangents = [[self.tangent(i, b, mapped) for i in full] for b in range(BATCH)]
        cotangents = [[self.cotangent(k, b) for k in range(len(point.outs))] for b in range(BATCH)]

        def each(path: Callable[[int], Any], what: str) -> list[list[np.ndarray]] | None:
            results = []
            for b in range(BATCH):
                got = point.attempt(f"{what} of slice {b}", full, partial(path, b), "vmap")
                if got is None:
                    return None
                results.append([to_numpy(r) for r in got])
            return results

        forward = each(lambda b: outputs(point.run.fn(*slices[b])), "loop")
        jvp = each(
            lambda b: mx.jvp(
                point.fn_of(full, slices[b]), [slices[b][i] for i in full], tangents[b]
            )[1],
            "loop of jvp",
        )
        vjp = each(
            lambda b: mx.vjp(
                point.fn_of(full, slices[b]), [slices[b][i] for i in full], cotangents[b]
            )[1],
            "loop of vjp",
        )
        loop = None if forward is None else Loop(slices, tangents, cotangents, forward, jvp, vjp)
        self.loops[mapped] = loop
        return loop

    # -- the comparisons ---------------------------------------------------
    def check(self, variant: Variant) -> None:
        point, full = self.point, self.full
        mapped = variant.mapped
        loop = self.loop(mapped)
        if loop is None:
            return
        axes, out = variant.in_axes, variant.out_axes
        batched = [
            self.batched(self.values[i], point.dts[i], a) if a is not None else point.xs[i]
            for i, a in enumerate(axes)
        ]
        repro = {
            "in_axes": list(axes),
            "out_axes": out,
            "slices": [[v.tolist() for v in self.values[i]] for i in range(len(axes))],
        }
        desc = variant.describe()

        def fn(*a: Any) -> list[Any]:
            return outputs(point.run.fn(*a))

        def stacked(per_slice: list[list[np.ndarray]], index: int) -> np.ndarray:
            return np.stack([s[index] for s in per_slice])

        def compare(path: str, got: Any, expected: list[np.ndarray], axes_of: list[int]) -> None:
            if got is None:
                return
            observed = [
                np.moveaxis(to_numpy(g), a, 0) if g.ndim else to_numpy(g)
                for g, a in zip(got, axes_of)
            ]
            point.agree(
                "vmap",
                f"{path} vs a loop over slices ({desc})",
                full,
                observed,
                expected,
                {**repro, "path": path},
            )

        n_out = len(point.outs)
        got = point.attempt(
            f"vmap({desc})", full, lambda: outputs(mx.vmap(fn, axes, out)(*batched)), "vmap"
        )
        compare("vmap", got, [stacked(loop.forward, k) for k in range(n_out)], [out] * n_out)
        if not variant.compose or point.found:
            return
        tangent_axes = tuple(axes[i] for i in full)
        tangents = [
            to_mlx(self.tangents64[i][0], point.dts[i])
            if (a := axes[i]) is None
            else self.batched(self.tangents64[i], point.dts[i], a)
            for i in full
        ]
        cot_batched = [
            self.batched(self.cotangents64[k], dtype_name(point.outs[k].dtype), out)
            for k in range(n_out)
        ]
        floats = point.floats

        def inner_jvp(*a: Any) -> list[Any]:
            args, ts = list(a[: len(axes)]), list(a[len(axes) :])
            return list(mx.jvp(point.fn_of(full, args), [args[i] for i in full], ts)[1])

        def inner_vjp(*a: Any) -> list[Any]:
            args, cs = list(a[: len(axes)]), list(a[len(axes) :])
            return list(mx.vjp(point.fn_of(full, args), [args[i] for i in full], cs)[1])

        def of_vmap(*traced: Any) -> list[Any]:
            return outputs(
                mx.vmap(fn, axes, out)(*pad(traced, full, len(axes), lambda i: batched[i]))
            )

        if loop.jvp is not None:
            expected = [stacked(loop.jvp, k) for k in range(n_out)]
            got = point.attempt(
                "vmap of jvp",
                full,
                lambda: mx.vmap(inner_jvp, axes + tangent_axes, out)(*batched, *tangents),
                "vmap",
            )
            compare(
                "vmap(jvp)",
                _floats_of(got, floats),
                _floats_of(expected, floats),
                [out] * len(floats),
            )
            got = point.attempt(
                "jvp of vmap",
                full,
                lambda: mx.jvp(of_vmap, [batched[i] for i in full], tangents)[1],
                "vmap",
            )
            compare(
                "jvp(vmap)",
                _floats_of(got, floats),
                _floats_of(expected, floats),
                [out] * len(floats),
            )
        if loop.vjp is not None:
            expected = [stacked(loop.vjp, j) for j in range(len(full))]
            # Each cotangent has its argument's rank, which may be below the outputs'.
            vjp_axes = [min(out, point.xs[i].ndim) if out >= 0 else out for i in full]
            got = point.attempt(
                "vmap of vjp",
                full,
                lambda: mx.vmap(inner_vjp, axes + (out,) * n_out, vjp_axes)(*batched, *cot_batched),
                "vmap",
            )
            compare("vmap(vjp)", got, expected, vjp_axes)
            got = point.attempt(
                "vjp of vmap",
                full,
                lambda: mx.vjp(of_vmap, [batched[i] for i in full], cot_batched)[1],
                "vmap",
            )
            # An unmapped argument's cotangent is the sum over the slices.
            summed = [e if axes[i] is not None else e.sum(axis=0) for e, i in zip(expected, full)]
            if got is not None:
                observed = [
                    to_numpy(g) if (a := axes[i]) is None else np.moveaxis(to_numpy(g), a, 0)
                    for g, i in zip(got, full, strict=True)
                ]
                point.agree(
                    "vmap",
                    f"vjp(vmap) vs a loop over slices ({desc})",
                    full,
                    observed,
                    summed,
                    {**repro, "path": "vjp(vmap)"},
                )


def _floats_of(values: Sequence[Any] | None, floats: Sequence[int]) -> Any:
    return None if values is None else [values[k] for k in floats]


def check(point: Point, full: tuple[int, ...]) -> None:
    """Every variant of vmap at ``point``; stop at the first that disagrees."""
    vmapped = Vmapped(point, full)
    for variant in variants(point):
        vmapped.check(variant)
        if point.found:
            return
