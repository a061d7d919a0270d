"""The function of one :class:`~.point.Point` written by ``mx.export_function`` and read back.

The imported function must equal the function called directly, at the point
it was traced at and at a fresh draw of the same shapes (a value written into
the file as a constant would keep the traced one), and so must its jvp and vjp
(the eager ones agreed with finite differences at the point). A release
without ``export_function`` lists it as unsupported, as MLX's refusals are.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

import mlx.core as mx

from mgradcheck.child.gradcheck.arrays import outputs, to_mlx
from mgradcheck.child.gradcheck.point import Point, pad


def check(point: Point, full: tuple[int, ...]) -> None:
    # Under the child's TMPDIR, which is its own: nothing is left where MLX kills the child.
    with tempfile.TemporaryDirectory(prefix="mgradcheck-export-") as folder:
        path = os.path.join(folder, "function.mlxfn")
        whole = point.whole()
        imported: list[Callable[..., Any]] = []

        def write_and_read() -> list[Any]:
            mx.export_function(path, whole, *point.xs)
            fn: Any = mx.import_function(path)  # its stub also names a tuple it never returns
            imported.append(fn)
            return []

        what = "export_function then import_function"
        if point.attempt(what, full, write_and_read, "export", {"path": "export"}) is not None:
            _compare(point, full, whole, lambda *a: outputs(imported[0](*a)))


def _compare(
    point: Point,
    full: tuple[int, ...],
    whole: Callable[..., list[Any]],
    loaded: Callable[..., list[Any]],
) -> None:
    fresh = [
        to_mlx(a.draw(dt, point.rng), dt) if a.random else x
        for a, dt, x in zip(point.run.args, point.dts, point.xs)
    ]
    for where, xs in (("the traced point", point.xs), ("a fresh draw", fresh)):
        repro = {"path": "export", "at": where}
        ref = point.attempt(
            "direct call", full, partial(whole, *xs), "export", repro, reference=True
        )
        what = f"imported function at {where}"
        got = point.attempt(what, full, partial(loaded, *xs), "export", repro)
        if ref is not None and got is not None:
            point.agree(
                "export", f"imported function vs direct call at {where}", full, got, ref, repro
            )
        if point.found:
            return
    primals = [point.xs[i] for i in full]
    tangents = [point.tangent(i) for i in full]
    cots = point.cotangents

    def of(fn: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        return lambda *t: fn(*pad(t, full, len(point.xs), lambda i: point.xs[i]))

    paths: list[tuple[str, Callable[[Any], Any]]] = [
        ("jvp", lambda f: mx.jvp(of(f), primals, tangents)[1]),
        ("vjp", lambda f: mx.vjp(of(f), primals, cots)[1]),
    ]
    for path, call in paths:
        repro = {"path": f"{path} of the imported function"}
        ref = point.attempt(
            f"{path} of the function", full, partial(call, whole), "export", repro, reference=True
        )
        got = point.attempt(f"{path} of the imported function", full, partial(call, loaded),
                            "export", repro)  # fmt: skip
        if ref is not None and got is not None:
            point.agree_on(
                "export", f"{path} of the imported function vs {path} of the function", full,
                path, got, ref, repro,
            )  # fmt: skip
        if point.found:
            return
