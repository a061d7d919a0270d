"""Every comparison gradcheck makes at one drawn point, at one dtype.

A :class:`Point` draws (or takes) the arguments, evaluates the function in the
dtype under test and in float64 on the CPU, and compares first-order
derivatives: jvp against finite differences, vjp against both through the
inner product, every subset of traced arguments against all traced, and the
shapes and dtypes of tangents and cotangents. The order they run in, and the
transformed paths after them, are in :mod:`.at_point`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.gradcheck.arrays import Arg, dtype_name, outputs, to_mlx, to_numpy
from mgradcheck.child.gradcheck.numerics import (
    RTOL,
    Function64,
    fmt,
    mismatch,
    special_mismatch,
)
from mgradcheck.child.gradcheck.result import Finding, Result
from mgradcheck.child.gradcheck_spec import FLOATS, UNSUPPORTED

MAX_SUBSET_ARGS = 4
# Where to name each derivative path before it runs (run_batch sets stderr), so
# that when MLX kills the process the last line says which path it was in.
trace: IO[str] | None = None


class NotChecked(Exception):
    """This point cannot be checked honestly; ``retry`` when a new draw may help."""

    def __init__(self, reason: str, retry: bool = True) -> None:
        super().__init__(reason)
        self.retry = retry


@dataclass
class Run:
    """One call of :func:`~mgradcheck.child.gradcheck.api.check`: what it checks and what it found."""

    fn: Callable[..., Any]
    args: list[Arg]
    names: list[str]
    checks: tuple[str, ...]
    rtol: float | None
    atol: float | None
    result: Result


def subsets(traced: Sequence[int], wanted: bool) -> list[tuple[int, ...]]:
    """The sets of traced arguments to differentiate by: all of them first, then the others."""
    full = tuple(traced)
    if not wanted or len(full) < 2:
        return [full]
    if len(full) > MAX_SUBSET_ARGS:
        return [full] + [(i,) for i in full] + [tuple(j for j in full if j != i) for i in full]
    rest = [s for r in range(1, len(full)) for s in itertools.combinations(full, r)]
    return [full, *rest]


def pad(
    values: Sequence[Any], subset: Sequence[int], n: int, fill: Callable[[int], Any]
) -> list[Any]:
    """``n`` values: ``values`` at the positions in ``subset``, ``fill(i)`` elsewhere."""
    out = [fill(i) for i in range(n)]
    for i, v in zip(subset, values):
        out[i] = v
    return out


class Point:
    """One drawn point at one dtype: every comparison gradcheck makes there."""

    def __init__(
        self, run: Run, dtype: str, point: int, rng: np.random.Generator, jitter: bool = False
    ) -> None:
        self.run, self.dtype, self.point = run, dtype, point
        self.dts = [a.dtype or dtype for a in run.args]
        self.traced = [
            i for i, (a, dt) in enumerate(zip(run.args, self.dts)) if dt in FLOATS and not a.const
        ]
        self.x64 = [to_numpy(to_mlx(a.draw(dt, rng), dt)) for a, dt in zip(run.args, self.dts)]
        if jitter:  # a few units in the last place of each floating input, independently
            for i, dt in enumerate(self.dts):
                if dt in FLOATS:
                    ulp = float(np.finfo(np.float16 if dt == "float16" else np.float32).eps)
                    ulp = 2.0**-7 if dt == "bfloat16" else ulp
                    steps = rng.integers(-8, 9, size=self.x64[i].shape)
                    moved = self.x64[i] + (np.abs(self.x64[i]) + 1.0) * ulp * steps
                    self.x64[i] = to_numpy(to_mlx(moved, dt))
        self.xs = [to_mlx(v, dt) for v, dt in zip(self.x64, self.dts)]
        self.rng = rng
        self.rtol = run.rtol if run.rtol is not None else RTOL[dtype]
        self.atol = run.atol if run.atol is not None else self.rtol * 1e-2
        self.found = 0
        # While set, a disagreement is MLX's documented behaviour (why, in words): a refusal.
        self.excuse: str | None = None
        self.eps = float(np.finfo(np.float64).eps)
        self.outs: list[Any] = []
        self.floats: list[int] = []  # the outputs with a floating dtype: the differentiable ones
        self.cotangents: list[Any] = []

    # -- helpers ---------------------------------------------------------
    def fn_of(self, subset: Sequence[int], base: Sequence[Any]) -> Callable[..., list[Any]]:
        """The function of the arguments in ``subset`` only, the others fixed at ``base``."""

        def partial_fn(*chosen: Any) -> list[Any]:
            return outputs(self.run.fn(*pad(chosen, subset, len(base), lambda i: base[i])))

        return partial_fn

    def whole(self) -> Callable[..., list[Any]]:
        """The function of all its arguments, as a list of outputs (what compiled paths trace)."""
        fn = self.run.fn

        def f(*a: Any) -> list[Any]:
            return outputs(fn(*a))

        return f

    def jvp_of(self, full: tuple[int, ...]) -> Callable[..., list[Any]]:
        """The jvp by the ``full`` arguments, of all arguments then the tangents: passed in,
        not captured, so that compiled kernels hold no random constants and can be shared."""
        n = len(self.xs)

        def f(*a: Any) -> list[Any]:
            args = list(a[:n])
            return list(mx.jvp(self.fn_of(full, args), [args[i] for i in full], list(a[n:]))[1])

        return f

    def vjp_of(self, full: tuple[int, ...]) -> Callable[..., list[Any]]:
        """The vjp by the ``full`` arguments, of all arguments then the cotangents."""
        n = len(self.xs)

        def f(*a: Any) -> list[Any]:
            args = list(a[:n])
            return list(mx.vjp(self.fn_of(full, args), [args[i] for i in full], list(a[n:]))[1])

        return f

    def finding(
        self,
        kind: str,
        check: str,
        paths: str,
        subset: Sequence[int],
        detail: str,
        repro: dict[str, Any] | None = None,
    ) -> None:
        if self.excuse is not None:
            self.run.result.refuse(check, f"{paths} ({self.dtype})", f"{detail}: {self.excuse}")
            return
        self.found += 1
        names = self.run.names
        inputs = "; ".join(
            f"{names[i]}={fmt(v)} ({dt}{', traced' if i in subset else ''})"
            for i, (v, dt) in enumerate(zip(self.x64, self.dts))
        )
        self.run.result.findings.append(
            Finding(
                kind,
                check,
                paths,
                tuple(names[i] for i in subset),
                self.dtype,
                self.point,
                detail,
                inputs,
                {"check": check, "traced": [names[i] for i in subset], **(repro or {})},
                [v.tolist() for v in self.x64],
            )
        )

    def attempt(
        self,
        what: str,
        subset: Sequence[int],
        call: Callable[[], Any],
        check: str | None = None,
        repro: dict[str, Any] | None = None,
        reference: bool = False,
    ) -> Any:
        """Run one derivative path; record an exception as MLX's refusal or as a finding.

        A ``reference`` path (the eager side of a comparison made on unusual
        inputs) that raises only returns None: without a reference there is
        nothing to compare, and nothing to report.
        """
        check = check or ("jvp" if "jvp" in what else "vjp")
        if trace is not None:  # what a crash's report will name: the path, and how to replay it
            names = ",".join(self.run.names[i] for i in subset)
            crumb = json.dumps(
                {
                    "check": check,
                    "traced": [self.run.names[i] for i in subset],
                    "repro": repro or {},
                }
            )
            print(
                f"gradcheck: running {what} with ({names}) traced, {self.dtype} | {crumb}",
                file=trace,
                flush=True,
            )
        try:
            value = call()
            mx.eval(value)
            return value
        except Exception as exc:  # noqa: BLE001 - any exception from MLX here is data
            text = f"{type(exc).__name__}: {exc}".strip()
            if reference:
                return None
            if re.search(UNSUPPORTED, text):
                self.run.result.refuse(check, f"{what} ({self.dtype})", text)
            else:
                self.finding("error", check, f"{what} raised", subset, text[:500], repro)
            return None

    def agree(
        self,
        check: str,
        paths: str,
        subset: Sequence[int],
        observed: Sequence[Any],
        expected: Sequence[Any],
        repro: dict[str, Any] | None = None,
        specials: bool = False,
    ) -> bool:
        """Compare two lists of results (MLX or float64 NumPy): count, shape, dtype, values.

        Non-finite expected elements are left out unless ``specials``, where NaN
        must meet NaN and an infinity the same infinity. Says whether all agree.
        """
        self.run.result.compared(check)
        before = self.found
        if len(observed) != len(expected):
            self.finding(
                "wrong-shape",
                check,
                f"{paths}: number of results",
                subset,
                f"{len(observed)} vs {len(expected)}",
                repro,
            )
            return False
        for k, (o, e) in enumerate(zip(observed, expected)):
            what = f"{paths} (result {k})" if len(observed) > 1 else paths
            obs = o if isinstance(o, np.ndarray) else to_numpy(o)
            ref = e if isinstance(e, np.ndarray) else to_numpy(e)
            if obs.shape != ref.shape:
                self.finding(
                    "wrong-shape",
                    check,
                    what,
                    subset,
                    f"{list(obs.shape)} vs {list(ref.shape)}",
                    repro,
                )
                continue
            if isinstance(o, mx.array) and isinstance(e, mx.array) and o.dtype != e.dtype:
                self.finding(
                    "wrong-dtype",
                    check,
                    what,
                    subset,
                    f"{dtype_name(o.dtype)} vs {dtype_name(e.dtype)}",
                    repro,
                )
                continue
            if specials:
                bad = special_mismatch(obs, ref, self.rtol, self.atol)
            else:
                bad = mismatch(obs, [ref], np.isfinite(ref), self.rtol, self.atol)
            if bad:
                self.finding("wrong-value", check, what, subset, bad, repro)
        return self.found == before

    def agree_on(
        self,
        check: str,
        paths: str,
        subset: Sequence[int],
        path: str,
        observed: Sequence[Any],
        expected: Sequence[Any],
        repro: dict[str, Any] | None = None,
        scale: float = 1.0,
    ) -> bool:
        """:meth:`agree` on what ``path`` (primal, jvp or vjp) yields that can be compared: every
        cotangent of a vjp, the floating outputs (or their tangents) otherwise."""
        keep = range(len(expected)) if path == "vjp" else self.floats
        return self.agree(
            check,
            paths,
            subset,
            [observed[k] for k in keep],
            [scale * expected[k] if scale != 1.0 else expected[k] for k in keep],
            repro,
        )

    def reference(self) -> Function64:
        """The function in float64 on the CPU (float32 where an op lacks float64).

        Its precision is its outputs': a function that goes through complex64 (MLX has no
        complex128) gives float32 outputs from float64 inputs, and is judged as float32.
        """
        for ref in ("float64", "float32"):
            dts = [ref if dt in FLOATS else dt for dt in self.dts]
            narrowed: list[bool] = []

            def f(
                vals: list[np.ndarray], dts: list[str] = dts, narrowed: list[bool] = narrowed
            ) -> list[np.ndarray]:
                with mx.stream(mx.cpu):
                    res = outputs(self.run.fn(*[to_mlx(v, dt) for v, dt in zip(vals, dts)]))
                    mx.eval(res)
                    narrowed.append(any(r.dtype in (mx.float32, mx.complex64) for r in res))
                    return [to_numpy(r) for r in res]

            try:
                f(self.x64)
            except Exception:  # noqa: BLE001 - this op lacks float64: use float32
                continue
            wide = ref == "float64" and not narrowed[0]
            self.eps = float(np.finfo(np.float64 if wide else np.float32).eps)
            return f
        raise NotChecked("the function cannot be evaluated in float64 or float32", retry=False)

    def tangent(self, i: int) -> Any:
        x = np.abs(self.x64[i])
        return to_mlx(self.rng.standard_normal(x.shape) * np.maximum(1.0, x), self.dts[i])
