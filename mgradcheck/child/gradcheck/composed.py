"""Transforms composed up to three deep at one :class:`~.point.Point`, each against an oracle
that uses none of them.

The compositions are built from five primitives: ``grad`` (of <f, c> for a
cotangent c, so J^T c), ``vmap`` (every argument mapped at axis 0),
``compile``, shapeless ``compile`` and ``checkpoint``. Those that map are
compared with a loop over the slices of the eager vjp, the point itself
being one slice (its vjp agreed with finite differences before this runs);
those that differentiate twice, with finite differences of the float64
gradient. A run draws :data:`SAMPLE` rows of :data:`TABLE` by its seed, so a
sweep covers the table across its cases instead of building every compiled
graph in each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import dtype_name, outputs, to_numpy
from mgradcheck.child.gradcheck.graphs import makers
from mgradcheck.child.gradcheck.numerics import mismatch
from mgradcheck.child.gradcheck.point import Point, pad
from mgradcheck.child.gradcheck.transforms import gradient_differences
from mgradcheck.child.gradcheck.vmapped import Vmapped

SAMPLE = 3
Fn = Callable[..., list[Any]]


class Primitives:
    """The transforms a composition is built from, over the function of one point.

    Every function here takes all the point's arguments; one made by :meth:`grad`
    takes the cotangents after them and returns the gradients by the traced ones.
    """

    def __init__(self, point: Point, full: tuple[int, ...]) -> None:
        self.point, self.full, self.n = point, full, len(point.xs)

    def f(self) -> Fn:
        return self.point.whole()

    def grad(self, g: Fn) -> Fn:
        n, full, floats = self.n, self.full, self.point.floats

        def gradient(*a: Any) -> list[Any]:
            args, cots = list(a[:n]), a[n:]

            def weighted(*traced: Any) -> Any:
                outs = g(*pad(traced, full, n, lambda i: args[i]))
                terms = [(outs[k] * cots[k]).sum() for k in floats]
                return sum(terms[1:], terms[0])

            argnums = list(range(len(full)))
            return outputs(mx.grad(weighted, argnums=argnums)(*[args[i] for i in full]))

        return gradient

    def vmap(self, g: Fn) -> Fn:
        return lambda *a: outputs(mx.vmap(g)(*a))

    def compile(self, g: Fn) -> Fn:
        return mx.compile(g)

    def shapeless(self, g: Fn) -> Fn:
        return mx.compile(g, shapeless=True)

    def checkpoint(self, g: Fn) -> Fn:
        return lambda *a: outputs(mx.checkpoint(g)(*a))

    def jvp(self, g: Fn) -> Fn:
        """The jvp of the gradient ``g`` along the tangents after its cotangents."""
        n, full = self.n, self.full

        def forward(*a: Any) -> list[Any]:
            args, cots, tangents = list(a[:n]), list(a[n : -len(full)]), list(a[-len(full) :])

            def of(*traced: Any) -> list[Any]:
                return g(*pad(traced, full, n, lambda i: args[i]), *cots)

            return list(mx.jvp(of, [args[i] for i in full], tangents)[1])

        return forward

    def vjp(self, g: Fn) -> Fn:
        """The gradient by ``mx.vjp`` rather than ``mx.grad``: the same arguments."""
        n, full = self.n, self.full

        def reverse(*a: Any) -> list[Any]:
            args, cots = list(a[:n]), list(a[n:])

            def of(*traced: Any) -> list[Any]:
                return g(*pad(traced, full, n, lambda i: args[i]))

            return list(mx.vjp(of, [args[i] for i in full], cots)[1])

        return reverse


@dataclass(frozen=True)
class Composition:
    name: str
    oracle: str  # "loop": a loop of eager vjp over slices; "hessian": differences of the gradient
    build: Callable[[Primitives], Fn]


TABLE = (
    Composition("vmap(grad)", "loop", lambda p: p.vmap(p.grad(p.f()))),
    Composition("grad(vmap)", "loop", lambda p: p.grad(p.vmap(p.f()))),
    Composition("compile(vmap(grad))", "loop", lambda p: p.compile(p.vmap(p.grad(p.f())))),
    Composition("compile(grad(vmap))", "loop", lambda p: p.compile(p.grad(p.vmap(p.f())))),
    Composition("vmap(compile(grad))", "loop", lambda p: p.vmap(p.compile(p.grad(p.f())))),
    Composition(
        "compile(shapeless)(vmap(grad))", "loop", lambda p: p.shapeless(p.vmap(p.grad(p.f())))
    ),
    Composition("vmap(grad(checkpoint))", "loop", lambda p: p.vmap(p.grad(p.checkpoint(p.f())))),
    Composition("grad(checkpoint(vmap))", "loop", lambda p: p.grad(p.checkpoint(p.vmap(p.f())))),
    Composition("jvp(vjp)", "hessian", lambda p: p.jvp(p.vjp(p.f()))),
    Composition("compile(jvp(grad))", "hessian", lambda p: p.compile(p.jvp(p.grad(p.f())))),
    Composition("jvp(grad(checkpoint))", "hessian", lambda p: p.jvp(p.grad(p.checkpoint(p.f())))),
)


def check(point: Point, full: tuple[int, ...]) -> None:
    """:data:`SAMPLE` compositions drawn from :data:`TABLE`, in its order; stop at the first
    finding."""
    # Drawn by the seed alone, not by the point's generator, which the other checks asked for
    # move on: the same entry with fewer checks (a shrunk finding) draws the same rows.
    rng = np.random.default_rng([point.run.result.seed, point.point])
    chosen = sorted(rng.choice(len(TABLE), size=min(SAMPLE, len(TABLE)), replace=False))
    primitives = Primitives(point, full)
    vmapped: Vmapped | None = None
    for row in (TABLE[int(i)] for i in chosen):
        repro = {"path": row.name}
        built = row.build(primitives)
        findings = point.run.result.findings
        before, args = len(findings), []
        if row.oracle == "loop":
            vmapped = vmapped or Vmapped(point, full)
            args = _against_loop(point, full, row.name, built, vmapped, repro)
        elif len(point.floats) == len(point.outs):  # an integer output has no second order
            args = _against_differences(point, full, row.name, built, repro)
        if len(findings) > before:
            made = makers(row.build(Eager(point, full)), args)
            for finding in findings[before:]:
                finding.made_by = made
        if point.found:
            return


class Eager(Primitives):
    """The same compositions with ``compile`` left out: the graph a compiled path traces."""

    def compile(self, g: Fn) -> Fn:
        return g

    def shapeless(self, g: Fn) -> Fn:
        return g


def _against_loop(
    point: Point, full: tuple[int, ...], name: str, built: Fn, vmapped: Vmapped, repro: Any
) -> list[Any]:
    """The arguments ``built`` ran at (none when the loop has no reference)."""
    loop = vmapped.loop(frozenset(range(len(point.xs))))
    if loop is None or loop.vjp is None:
        return []
    args = [vmapped.batched(vmapped.values[i], point.dts[i], 0) for i in range(len(point.xs))]
    cots = [
        vmapped.batched(vmapped.cotangents64[k], dtype_name(o.dtype), 0)
        for k, o in enumerate(point.outs)
    ]
    got = point.attempt(name, full, lambda: built(*args, *cots), "compose", repro)
    if got is not None:
        expected = [np.stack([s[j] for s in loop.vjp]) for j in range(len(full))]
        paths = f"{name} vs a loop of eager vjp over slices"
        point.agree("compose", paths, full, got, expected, repro)
    return [*args, *cots]


def _against_differences(
    point: Point, full: tuple[int, ...], name: str, built: Fn, repro: Any
) -> list[Any]:
    """The arguments ``built`` ran at."""
    tangents = [point.tangent(i) for i in full]
    args = [*point.xs, *point.cotangents, *tangents]
    got = point.attempt(name, full, lambda: built(*args), "compose", repro)
    fd = gradient_differences(point, full, tangents) if got is not None else None
    if got is None or fd is None:
        return args
    _judge(point, full, name, got, fd, repro)
    return args


def _judge(
    point: Point, full: tuple[int, ...], name: str, got: list[Any], fd: Any, repro: Any
) -> None:
    point.run.result.compared("compose")
    if len(got) != len(full):
        point.finding(
            "wrong-shape", "compose", f"{name}: number of results", full,
            f"{len(got)} vs {len(full)}", repro,
        )  # fmt: skip
        return
    for j, i in enumerate(full):
        observed = to_numpy(got[j])
        if observed.shape != fd.steps[j][0].shape:
            point.finding(
                "wrong-shape", "compose", f"{name} ({point.run.names[i]})", full,
                f"{list(observed.shape)} vs {list(fd.steps[j][0].shape)}", repro,
            )  # fmt: skip
            continue
        bad = mismatch(observed, fd.steps[j], fd.mask[j], 2 * point.rtol, point.atol)
        if bad:
            point.finding(
                "wrong-value",
                "compose",
                f"{name} vs finite differences of the float64 gradient ({point.run.names[i]})",
                full,
                bad,
                repro,
            )
