"""gradcheck: compare every way MLX computes a derivative with every other one.

For a function of several array arguments it checks, at seeded random points:
jvp against central finite differences computed in float64 on the CPU (a sweep
of steps; an element passes when one step agrees), vjp against both through the
inner-product identity <c, J t> = <J^T c, t>, every subset of traced arguments
against the fully traced derivative, tangent and cotangent dtypes and shapes,
eager against ``mx.compile``, and second order (jvp of grad, grad of <grad, t>)
against finite differences of the gradient.

Points where the function is honestly not differentiable are not bugs: a primal
with NaN or inf, a low-precision primal that disagrees with float64, output
elements whose one-sided differences disagree (a kink) or whose differences do
not settle as the step shrinks (a discontinuity) are masked, or the point is
re-drawn, and reported as "not checked" when nothing is left.

Standard library, NumPy and MLX only: this runs inside any MLX release's
environment. The parent imports it without MLX to read the format constants.
"""

from __future__ import annotations

import inspect
import itertools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np

from mgradcheck.child.checks import CheckFailed
from mgradcheck.child.gradcheck_spec import CHECKS, FLOATS, INTEGERS, UNSUPPORTED

mx: Any
try:
    import mlx.core as mx
except ImportError:  # importable without MLX (the sweep's parent reads this module's types)
    mx = None

# Relative tolerance of a derivative computed in each dtype against the float64 oracle.
RTOL = {"float64": 1e-6, "float32": 2e-3, "float16": 2e-2, "bfloat16": 8e-2}
STEPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
REDRAWS = 4
MAX_SUBSET_ARGS = 4
# Where to name each derivative path before it runs (run_batch sets stderr), so
# that when MLX kills the process the last line says which path it was in.
trace: Any = None
# MLX's words for "this path does not exist here", and a release that lacks the op.

__all__ = [
    "CHECKS",
    "Arg",
    "Finding",
    "Result",
    "check",
    "gradcheck",
    "run_batch",
    "run_declarative",
]


@dataclass(frozen=True)
class Arg:
    """How to make one argument: a random draw, a fill, or a literal; ``const`` is never traced."""

    shape: tuple[int, ...] = ()
    dtype: str | None = None  # None: the dtype being checked (floating arguments)
    range: tuple[float, float] = (-2.0, 2.0)
    value: Any = None
    fill: float | None = None
    const: bool = False

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Arg:
        value = spec.get("value")
        shape = tuple(spec.get("shape", np.shape(value) if value is not None else ()))
        lo, hi = spec.get("range", (-2.0, 2.0))
        return cls(
            shape,
            spec.get("dtype"),
            (float(lo), float(hi)),
            value,
            spec.get("fill"),
            bool(spec.get("const", False)),
        )

    @property
    def random(self) -> bool:
        return self.value is None and self.fill is None

    def draw(self, dtype: str, rng: np.random.Generator) -> np.ndarray:
        if self.value is not None:
            return np.array(np.broadcast_to(np.asarray(self.value, dtype=np.float64), self.shape))
        if self.fill is not None:
            return np.full(self.shape, float(self.fill))
        lo, hi = self.range
        if dtype == "bool":
            return rng.integers(0, 2, size=self.shape).astype(np.float64)
        if dtype in INTEGERS:
            return rng.integers(int(lo), int(hi) + 1, size=self.shape).astype(np.float64)
        return rng.uniform(lo, hi, size=self.shape)


@dataclass
class Finding:
    """One disagreement between two ways of computing the same thing."""

    kind: str  # wrong-value, wrong-dtype, wrong-shape, error
    check: str  # one of CHECKS
    paths: str  # which paths disagree, e.g. "jvp vs finite differences"
    traced: tuple[str, ...]
    dtype: str
    point: int
    detail: str
    inputs: str

    def line(self) -> str:
        traced = ", ".join(self.traced)
        return (
            f"[{self.kind}] {self.paths} | traced ({traced}) | {self.dtype} | point {self.point}: "
            f"{self.detail}\n    inputs: {self.inputs}"
        )


@dataclass
class Result:
    """What one gradcheck found; ``ok`` when no two paths disagreed."""

    fn: str
    seed: int
    findings: list[Finding] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    checked: int = 0  # points where at least one comparison was made

    @property
    def ok(self) -> bool:
        return not self.findings

    def report(self, limit: int = 8) -> str:
        head = f"gradcheck of {self.fn} (seed {self.seed}): "
        if self.ok:
            head += f"{self.checked} points agree"
        else:
            head += f"{len(self.findings)} disagreements"
        lines = [head] + [f.line() for f in self.findings[:limit]]
        if len(self.findings) > limit:
            lines.append(f"... and {len(self.findings) - limit} more")
        lines += [f"unsupported: {u}" for u in self.unsupported[:3]]
        lines += [f"not checked: {n}" for n in self.not_checked[:3]]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


class _NotChecked(Exception):
    """This point cannot be checked honestly; ``retry`` when a new draw may help."""

    def __init__(self, reason: str, retry: bool = True) -> None:
        super().__init__(reason)
        self.retry = retry


def _name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _np(a: Any) -> np.ndarray:
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    return np.array(a, dtype=np.float64)


def _to_mx(v: np.ndarray, dtype: str) -> Any:
    if dtype == "float64":
        return mx.array(v, dtype=mx.float64)
    if dtype in INTEGERS:
        return mx.array(v.astype(np.dtype(dtype)))
    return mx.array(v.astype(np.float32)).astype(getattr(mx, dtype))


def _outputs(value: Any) -> list[Any]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(x, mx.array) for x in items):
        raise TypeError("gradcheck: fn must return an array or a tuple of arrays")
    return items


def _fmt(a: np.ndarray) -> str:
    with np.printoptions(precision=7, threshold=16, edgeitems=4, floatmode="maxprec"):
        return np.array2string(a, separator=", ") if a.ndim else repr(float(a))


def _rms(a: np.ndarray) -> float:
    finite = a[np.isfinite(a)]
    return float(np.sqrt(np.mean(finite**2))) if finite.size else 0.0


def _close(obs: np.ndarray, ref: np.ndarray, rtol: float, atol: float, scale: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok: np.ndarray = np.abs(obs - ref) <= atol + rtol * (np.abs(ref) + scale)
    return ok


def _mismatch(
    obs: np.ndarray, refs: Sequence[np.ndarray], mask: np.ndarray, rtol: float, atol: float
) -> str | None:
    """Why ``obs`` agrees with none of ``refs`` on the masked elements, or None."""
    if obs.shape != refs[0].shape:
        return None  # reported by the shape check
    scale = _rms(refs[-1])
    ok = np.zeros(obs.shape, dtype=bool)
    for ref in refs:
        ok |= _close(obs, ref, rtol, atol, scale)
    bad = mask & ~ok
    if not bad.any():
        return None
    ref = refs[-1]
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if obs.ndim else ()
    return (
        f"observed {_fmt(obs)}, expected {_fmt(ref)} "
        f"({int(bad.sum())}/{bad.size} differ, first at {where}: {obs[where]:.7g} vs {ref[where]:.7g})"
    )


@dataclass
class _FD:
    """Central differences at every step, and which elements they determine."""

    steps: list[list[np.ndarray]]  # [output][step]
    estimate: list[np.ndarray]
    mask: list[np.ndarray]


def _fd(
    func: Callable[[list[np.ndarray]], list[np.ndarray]],
    xs: list[np.ndarray],
    ts: list[np.ndarray],
    eps: float,
) -> _FD:
    base = func(xs)
    central: list[list[np.ndarray]] = [[] for _ in base]
    kinks: list[list[np.ndarray]] = [[] for _ in base]
    for h in STEPS:
        hi = func([x + h * t for x, t in zip(xs, ts)])
        lo = func([x - h * t for x, t in zip(xs, ts)])
        for k, (a, b, f0) in enumerate(zip(hi, lo, base)):
            central[k].append((a - b) / (2 * h))
            kinks[k].append(np.abs((a - f0) - (f0 - b)) / h)  # |D+ - D-|
    loose = eps > 1e-10  # a float32 oracle is noisier
    agree_tol, kink_tol = (2e-2, 1e-1) if loose else (1e-3, 2e-2)
    estimates, masks = [], []
    for k, f0 in enumerate(base):
        c = np.stack(central[k])
        scale = _rms(c[len(STEPS) // 2]) + 1e-12
        noise = np.array([10 * eps * (1 + _rms(f0)) / h for h in STEPS]).reshape(
            (-1,) + (1,) * f0.ndim
        )
        with np.errstate(invalid="ignore"):
            settled = np.abs(c[:-1] - c[1:]) <= noise[1:] + agree_tol * (np.abs(c[1:]) + scale)
            smooth = np.stack(kinks[k])[1:] <= noise[1:] + kink_tol * (np.abs(c[1:]) + scale)
        good = settled & smooth & np.isfinite(c[1:])
        first = np.argmax(good, axis=0)
        estimates.append(np.take_along_axis(c[1:], first[None], axis=0)[0])
        masks.append(good.any(axis=0))
    return _FD(central, estimates, masks)


def _arg_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        params = []
    return params[:n] if len(params) >= n else [f"arg{i}" for i in range(n)]


def _as_arg(x: Any) -> Arg:
    if isinstance(x, Arg):
        return x
    if mx is not None and isinstance(x, mx.array):
        name = _name(x.dtype)
        return Arg(tuple(x.shape), None if name in FLOATS else name, value=_np(x))
    a = np.asarray(x)
    dtype = "bool" if a.dtype == np.bool_ else (str(a.dtype) if a.dtype.kind in "iu" else None)
    return Arg(a.shape, dtype, value=a.astype(np.float64))


def _subsets(traced: Sequence[int], wanted: bool) -> list[tuple[int, ...]]:
    full = tuple(traced)
    if not wanted or len(full) < 2:
        return [full]
    if len(full) > MAX_SUBSET_ARGS:
        return [full] + [(i,) for i in full] + [tuple(j for j in full if j != i) for i in full]
    rest = [s for r in range(1, len(full)) for s in itertools.combinations(full, r)]
    return [full, *rest]


def _pad(
    values: Sequence[Any], subset: Sequence[int], n: int, zero: Callable[[int], Any]
) -> list[Any]:
    out = [zero(i) for i in range(n)]
    for i, v in zip(subset, values):
        out[i] = v
    return out


class _Point:
    """One drawn point at one dtype: every comparison gradcheck makes there."""

    def __init__(
        self, run: _Run, dtype: str, point: int, rng: np.random.Generator, jitter: bool = False
    ) -> None:
        self.run, self.dtype, self.point = run, dtype, point
        self.dts = [a.dtype or dtype for a in run.args]
        self.traced = [
            i for i, (a, dt) in enumerate(zip(run.args, self.dts)) if dt in FLOATS and not a.const
        ]
        self.x64 = [_np(_to_mx(a.draw(dt, rng), dt)) for a, dt in zip(run.args, self.dts)]
        if jitter:  # a few units in the last place of each floating input, independently
            for i, dt in enumerate(self.dts):
                if dt in FLOATS:
                    ulp = float(np.finfo(np.float16 if dt == "float16" else np.float32).eps)
                    ulp = 2.0**-7 if dt == "bfloat16" else ulp
                    steps = rng.integers(-8, 9, size=self.x64[i].shape)
                    moved = self.x64[i] + (np.abs(self.x64[i]) + 1.0) * ulp * steps
                    self.x64[i] = _np(_to_mx(moved, dt))
        self.xs = [_to_mx(v, dt) for v, dt in zip(self.x64, self.dts)]
        self.rng = rng
        self.rtol = run.rtol if run.rtol is not None else RTOL[dtype]
        self.atol = run.atol if run.atol is not None else self.rtol * 1e-2
        self.found = 0
        self.eps = float(np.finfo(np.float64).eps)

    # -- helpers ---------------------------------------------------------
    def fn_of(self, subset: Sequence[int], base: Sequence[Any]) -> Callable[..., list[Any]]:
        def g(*sub: Any) -> list[Any]:
            return _outputs(self.run.fn(*_pad(sub, subset, len(base), lambda i: base[i])))

        return g

    def finding(
        self, kind: str, check: str, paths: str, subset: Sequence[int], detail: str
    ) -> None:
        self.found += 1
        names = self.run.names
        inputs = "; ".join(
            f"{names[i]}={_fmt(v)} ({dt}{', traced' if i in subset else ''})"
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
            )
        )

    def attempt(self, what: str, subset: Sequence[int], call: Callable[[], Any]) -> Any:
        """Run one derivative path; record an exception as unsupported or as a finding."""
        if trace is not None:
            names = ",".join(self.run.names[i] for i in subset)
            print(
                f"gradcheck: running {what} with ({names}) traced, {self.dtype}",
                file=trace,
                flush=True,
            )
        try:
            value = call()
            mx.eval(value)
            return value
        except Exception as exc:  # noqa: BLE001 - any exception from MLX here is data
            text = f"{type(exc).__name__}: {exc}".strip()
            if UNSUPPORTED.search(text):
                self.run.result.unsupported.append(f"{what} ({self.dtype}): {text[:300]}")
            else:
                self.finding(
                    "error", "jvp" if "jvp" in what else "vjp", f"{what} raised", subset, text[:500]
                )
            return None

    def reference(self, outs: list[Any]) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
        """The function in float64 on the CPU (float32 where an op lacks float64)."""
        for ref in ("float64", "float32"):
            dts = [ref if dt in FLOATS else dt for dt in self.dts]

            def f(vals: list[np.ndarray], dts: list[str] = dts) -> list[np.ndarray]:
                with mx.stream(mx.cpu):
                    res = _outputs(self.run.fn(*[_to_mx(v, dt) for v, dt in zip(vals, dts)]))
                    mx.eval(res)
                    return [_np(r) for r in res]

            try:
                f(self.x64)
            except Exception:  # noqa: BLE001 - this op lacks float64: use float32
                continue
            self.eps = float(np.finfo(np.float64 if ref == "float64" else np.float32).eps)
            return f
        raise _NotChecked("the function cannot be evaluated in float64 or float32", retry=False)

    # -- the checks ------------------------------------------------------
    def check(self) -> None:
        run = self.run
        if not self.traced:
            raise _NotChecked("no differentiable argument", retry=False)
        try:
            outs = _outputs(run.fn(*self.xs))
            mx.eval(outs)
        except Exception as exc:
            if UNSUPPORTED.search(str(exc)):
                run.result.unsupported.append(
                    f"primal ({self.dtype}): {type(exc).__name__}: {exc}"[:300]
                )
                raise _NotChecked("the primal is not supported", retry=False) from None
            raise
        self.floats = [k for k, o in enumerate(outs) if _name(o.dtype) in FLOATS]
        if not self.floats:
            raise _NotChecked("integer outputs only", retry=False)
        primal = [_np(o) for o in outs]
        if not all(np.isfinite(primal[k]).all() for k in self.floats):
            raise _NotChecked("the primal has NaN or inf")
        f64 = self.reference(outs)
        ref = f64(self.x64)
        for k in self.floats:
            if (
                not np.isfinite(ref[k]).all()
                or not _close(primal[k], ref[k], self.rtol, self.atol, _rms(ref[k])).all()
            ):
                raise _NotChecked(
                    f"the {self.dtype} primal differs from float64 here (precision or a branch)"
                )
        self.outs = outs
        self.cts = [
            _to_mx(self.rng.standard_normal(o.shape), _name(o.dtype))
            if k in self.floats
            else mx.zeros(o.shape, o.dtype)
            for k, o in enumerate(outs)
        ]
        compared = False
        for subset in _subsets(self.traced, "subsets" in run.checks):
            compared |= self.first_order(subset, f64)
        if not compared:
            raise _NotChecked(
                "no output element is smooth along the direction drawn (a kink or a jump)"
            )
        # Once first order disagrees, the compiled and second-order paths only echo
        # it (and on some releases they crash where eager merely gave a wrong number).
        full = tuple(self.traced)
        if "compile" in run.checks and not self.found:
            self.compiled(full)
        if "hessian" in run.checks and len(self.floats) == len(outs) and not self.found:
            self.second_order(full)

    def tangent(self, i: int) -> Any:
        x = np.abs(self.x64[i])
        return _to_mx(self.rng.standard_normal(x.shape) * np.maximum(1.0, x), self.dts[i])

    def first_order(
        self, subset: tuple[int, ...], f64: Callable[[list[np.ndarray]], list[np.ndarray]]
    ) -> bool:
        run = self.run
        ts = {i: self.tangent(i) for i in subset}
        t64 = [_np(ts[i]) if i in ts else np.zeros_like(v) for i, v in enumerate(self.x64)]
        g = self.fn_of(subset, self.xs)
        primals = [self.xs[i] for i in subset]
        label = "(" + ",".join(run.names[i] for i in subset) + ")"
        jvp = self.attempt(
            f"jvp{label}", subset, lambda: mx.jvp(g, primals, [ts[i] for i in subset])[1]
        )
        fd = _fd(f64, self.x64, t64, self.eps)
        masks = [
            fd.mask[k] if k in self.floats else np.zeros(o.shape, bool)
            for k, o in enumerate(self.outs)
        ]
        if not any(m.any() for m in masks):
            return False
        cm = [c * mx.array(m.astype(np.float32)).astype(c.dtype) for c, m in zip(self.cts, masks)]
        vjp = self.attempt(f"vjp{label}", subset, lambda: mx.vjp(g, primals, cm)[1])
        jvp_fits, vjp_fits = self.shapes(jvp, vjp, subset)
        jv = [_np(t) for t in jvp] if jvp_fits else None
        vj = [_np(c) for c in vjp] if vjp_fits else None
        if jv is not None and "jvp" in run.checks:
            for k in self.floats:
                bad = _mismatch(jv[k], fd.steps[k], fd.mask[k], self.rtol, self.atol)
                if bad:
                    self.finding(
                        "wrong-value", "jvp", f"jvp vs finite differences (output {k})", subset, bad
                    )
        if vj is not None and "vjp" in run.checks:
            c64 = [_np(c) for c in cm]
            left = [(v * t64[i]) for v, i in zip(vj, subset)]
            for other, paths in ((fd.estimate, "finite differences"), (jv, "jvp")):
                if other is None:
                    continue
                right = [c64[k] * other[k] for k in self.floats]
                self.inner(left, right, f"vjp vs {paths} (<J^T c, t> vs <c, J t>)", subset)
        if "subsets" in run.checks and subset != tuple(self.traced):
            self.slices(subset, ts, cm, jv, vj)
        return True

    def inner(
        self, left: list[np.ndarray], right: list[np.ndarray], paths: str, subset: Sequence[int]
    ) -> None:
        a = float(sum(x.sum() for x in left))
        b = float(sum(x.sum() for x in right))
        size = float(sum(np.abs(x).sum() for x in left + right))
        if not abs(a - b) <= self.atol + self.rtol * size:
            self.finding(
                "wrong-value", "vjp", paths, subset, f"{a:.7g} vs {b:.7g} (scale {size:.3g})"
            )

    def shapes(self, jvp: Any, vjp: Any, subset: Sequence[int]) -> tuple[bool, bool]:
        """Check tangent and cotangent shapes (and dtypes, with the dtype check); say which fit."""
        pairs = [("jvp", f"tangent of output {k}", self.outs[k], jvp, k) for k in self.floats]
        pairs += [
            ("vjp", f"cotangent of {self.run.names[i]}", self.xs[i], vjp, j)
            for j, i in enumerate(subset)
        ]
        fits = {"jvp": jvp is not None, "vjp": vjp is not None}
        for path, what, primal, derived, index in pairs:
            if derived is None:
                continue
            if index >= len(derived):
                fits[path] = False
                self.finding("wrong-shape", "dtype", f"{path} results vs arguments", subset,
                             f"{len(derived)} results for {len(subset) if path == 'vjp' else len(self.outs)}")  # fmt: skip
                continue
            d = derived[index]
            if tuple(d.shape) != tuple(primal.shape):
                fits[path] = False
                self.finding("wrong-shape", "dtype", f"{path} {what} vs its primal", subset,
                             f"{list(d.shape)} vs {list(primal.shape)}")  # fmt: skip
            elif d.dtype != primal.dtype and "dtype" in self.run.checks:
                self.finding("wrong-dtype", "dtype", f"{path} {what} vs its primal", subset,
                             f"{_name(d.dtype)} vs {_name(primal.dtype)}")  # fmt: skip
        return fits["jvp"], fits["vjp"]

    def slices(
        self, subset: tuple[int, ...], ts: dict[int, Any], cm: list[Any], jv: Any, vj: Any
    ) -> None:
        full = tuple(self.traced)
        g = self.fn_of(full, self.xs)
        primals = [self.xs[i] for i in full]
        tangents = [ts[i] if i in ts else mx.zeros_like(self.xs[i]) for i in full]
        names = ",".join(self.run.names[i] for i in subset)
        jall = self.attempt("jvp(all)", full, lambda: mx.jvp(g, primals, tangents)[1])
        if jall is not None and jv is not None:
            for k in self.floats:
                ref = _np(jall[k])
                bad = _mismatch(jv[k], [ref], np.ones(ref.shape, bool), self.rtol, self.atol)
                if bad:
                    self.finding(
                        "wrong-value",
                        "subsets",
                        f"jvp with ({names}) traced vs jvp with all traced",
                        subset,
                        bad,
                    )
        vall = self.attempt("vjp(all)", full, lambda: mx.vjp(g, primals, cm)[1])
        if vall is not None and vj is not None:
            for v, i in zip(vj, subset):
                ref = _np(vall[full.index(i)])
                bad = _mismatch(v, [ref], np.ones(ref.shape, bool), self.rtol, self.atol)
                if bad:
                    self.finding("wrong-value", "subsets",
                                 f"vjp for {self.run.names[i]} with ({names}) traced vs with all traced", subset, bad)  # fmt: skip

    def compiled(self, full: tuple[int, ...]) -> None:
        g = self.fn_of(full, self.xs)
        primals = [self.xs[i] for i in full]
        ts = [self.tangent(i) for i in full]

        def jvp(*a: Any) -> Any:
            return mx.jvp(g, list(a), ts)[1]

        def vjp(*a: Any) -> Any:
            return mx.vjp(g, list(a), self.cts)[1]

        paths: list[tuple[str, Callable[..., Any]]] = [("primal", g), ("jvp", jvp), ("vjp", vjp)]
        for what, f in paths:
            eager = self.attempt(f"{what} eager", full, partial(f, *primals))
            comp = self.attempt(f"{what} compiled", full, partial(mx.compile(f), *primals))
            if eager is None or comp is None:
                continue
            for k, (e, c) in enumerate(zip(eager, comp)):
                if what != "vjp" and k not in self.floats:
                    continue
                ref, obs = _np(e), _np(c)
                if obs.shape != ref.shape:
                    self.finding("wrong-shape", "compile", f"compiled {what} vs eager {what}", full,
                                 f"{list(obs.shape)} vs {list(ref.shape)}")  # fmt: skip
                    continue
                bad = _mismatch(obs, [ref], np.isfinite(ref), self.rtol, self.atol)
                if bad:
                    self.finding(
                        "wrong-value",
                        "compile",
                        f"compiled {what} vs eager {what} (result {k})",
                        full,
                        bad,
                    )

    def second_order(self, full: tuple[int, ...]) -> None:
        """jvp of grad and grad of <grad, t> against finite differences of the gradient."""
        argnums = list(range(len(full)))
        ts = [self.tangent(i) for i in full]
        primals = [self.xs[i] for i in full]

        def grad_of(base: Sequence[Any], acc: Any) -> Callable[..., list[Any]]:
            g = self.fn_of(full, base)

            def s(*a: Any) -> Any:
                terms = [(o.astype(acc) * c.astype(acc)).sum() for o, c in zip(g(*a), self.cts)]
                return sum(terms[1:], terms[0])

            return lambda *a: _outputs(mx.grad(s, argnums=argnums)(*a))

        acc = mx.float64 if self.dtype == "float64" else mx.float32
        grad = grad_of(self.xs, acc)
        hj = self.attempt("jvp of grad", full, lambda: mx.jvp(grad, primals, ts)[1])

        def gt(*a: Any) -> Any:
            terms = [(x.astype(acc) * t.astype(acc)).sum() for x, t in zip(grad(*a), ts)]
            return sum(terms[1:], terms[0])

        hv = self.attempt(
            "grad of <grad, t>", full, lambda: _outputs(mx.grad(gt, argnums=argnums)(*primals))
        )
        if hj is None or hv is None:
            return
        t64 = _pad([_np(t) for t in ts], full, len(self.xs), lambda i: np.zeros_like(self.x64[i]))

        def grad64(vals: list[np.ndarray]) -> list[np.ndarray]:
            dts = ["float64" if dt in FLOATS else dt for dt in self.dts]
            with mx.stream(mx.cpu):
                xs = [_to_mx(v, dt) for v, dt in zip(vals, dts)]
                res = grad_of(xs, mx.float64)(*[xs[i] for i in full])
                mx.eval(res)
                return [_np(r) for r in res]

        try:
            fd = _fd(grad64, self.x64, t64, float(np.finfo(np.float64).eps))
        except Exception:  # noqa: BLE001 - no float64 gradient: compare jvp and vjp only
            fd = None
        rtol = 2 * self.rtol
        for j, i in enumerate(full):
            a, b = _np(hj[j]), _np(hv[j])
            name = self.run.names[i]
            if fd is not None:
                bad = _mismatch(a, fd.steps[j], fd.mask[j], rtol, self.atol)
                if bad:
                    self.finding(
                        "wrong-value",
                        "hessian",
                        f"jvp of grad vs finite differences of grad ({name})",
                        full,
                        bad,
                    )
            bad = _mismatch(b, [a], np.isfinite(a), rtol, self.atol)
            if bad:
                self.finding(
                    "wrong-value",
                    "hessian",
                    f"grad of <grad, t> vs jvp of grad ({name})",
                    full,
                    bad,
                )


@dataclass
class _Run:
    fn: Callable[..., Any]
    args: list[Arg]
    names: list[str]
    checks: tuple[str, ...]
    rtol: float | None
    atol: float | None
    result: Result


def check(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    dtypes: Sequence[str] | None = None,
    seed: int = 0,
    checks: Sequence[str] = CHECKS,
    rtol: float | None = None,
    atol: float | None = None,
    points: int = 2,
    label: str | None = None,
) -> Result:
    """Run every check at ``points`` seeded points per dtype; never raises on a disagreement.

    ``inputs`` holds one :class:`Arg` (a spec to draw from) or a concrete array
    per positional argument of ``fn``. Floating arguments are traced unless
    ``const``; integer and boolean arguments never are. ``dtypes`` lists the
    floating dtypes to check (default: that of the first concrete floating
    input, else float32).
    """
    if mx is None:
        raise ImportError("gradcheck needs MLX (import mlx.core failed)")
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(CHECKS)}")
    args = [_as_arg(x) for x in inputs]
    concrete = [
        x for x in inputs if mx is not None and isinstance(x, mx.array) and _name(x.dtype) in FLOATS
    ]
    default = _name(concrete[0].dtype) if concrete else "float32"
    result = Result(label or str(getattr(fn, "__name__", repr(fn))), seed)
    run = _Run(fn, args, _arg_names(fn, len(args)), tuple(checks), rtol, atol, result)
    redraws = REDRAWS if any(a.random for a in args) else 1
    for dtype in dtypes or [default]:
        for point in range(points):
            reason = None
            for attempt in range(redraws):
                try:
                    _check_point(run, dtype, point, [seed, point, attempt])
                except _NotChecked as exc:
                    reason = str(exc)
                    if not exc.retry:
                        break
                else:
                    reason = None
                    result.checked += 1
                    break
            if reason is not None:
                result.not_checked.append(f"{dtype} point {point}: {reason}")
            if result.findings:
                return result  # the first point that disagrees is the report; later ones may crash
    return result


def _check_point(run: _Run, dtype: str, point: int, seeds: list[int]) -> None:
    """Check one point; keep a disagreement only if it survives a jitter of a few ulps.

    A point on a tie (sort, max of equal values) or on a kink that the one-sided
    differences miss is non-differentiable only there: a few ulps away the
    disagreement vanishes. A wrong derivative does not.
    """
    findings = run.result.findings
    before = len(findings)
    _Point(run, dtype, point, np.random.default_rng(seeds)).check()
    if len(findings) == before:
        return
    found = findings[before:]
    del findings[before:]
    try:
        _Point(run, dtype, point, np.random.default_rng(seeds), jitter=True).check()
    except _NotChecked:
        pass  # inconclusive: keep what the point itself showed
    else:
        if len(findings) == before:
            raise _NotChecked("a disagreement here vanishes a few ulps away (a tie or a kink)")
    del findings[before:]
    findings.extend(found)


def gradcheck(fn: Callable[..., Any], inputs: Sequence[Any], **options: Any) -> Result:
    """Like :func:`check`, but raise :class:`CheckFailed` with the report on any disagreement."""
    result = check(fn, inputs, **options)
    if not result.ok:
        raise CheckFailed(result.report())
    return result


def setitem(x: Any, index: Any, value: Any) -> Any:
    """``x`` with ``x[index] = value``, as an expression (slice and mask assignment in a ``fn``)."""
    out = x + 0  # MLX assigns in place: never touch the caller's array
    out[index] = value
    return out


def check_spec(spec: Mapping[str, Any], scope: Mapping[str, Any]) -> Result:
    """Run a declarative ``gradcheck:`` block (see docs/gradcheck.md)."""
    fn = eval(
        compile(spec["fn"], "<gradcheck fn>", "eval"), {"setitem": setitem, **scope}
    )  # corpus code is trusted
    return check(
        fn,
        [Arg.from_spec(s) for s in spec["inputs"]],
        dtypes=spec.get("dtypes"),
        seed=int(spec.get("seed", 0)),
        checks=tuple(spec.get("checks", CHECKS)),
        rtol=spec.get("rtol"),
        atol=spec.get("atol"),
        points=int(spec.get("points", 2)),
        label=spec["fn"],
    )


def run_declarative(spec: Mapping[str, Any], scope: Mapping[str, Any]) -> None:
    """The child's entry point for a ``gradcheck:`` corpus entry: fail on any disagreement."""
    result = check_spec(spec, scope)
    if not result.ok:
        raise CheckFailed(result.report())
    if result.checked == 0:
        reasons = "; ".join((result.unsupported + result.not_checked)[:3])
        raise RuntimeError(f"gradcheck checked nothing: {reasons}")
    print(result.report())


def run_batch(specs: Sequence[Mapping[str, Any]], log_path: str, scope: Mapping[str, Any]) -> None:
    """Run several specs in this child, appending one JSON line per event to ``log_path``.

    A "start" line precedes each case and a "done" line follows it, flushed at
    once, so that when a case crashes the child the parent knows which one did.
    """
    global trace
    trace = sys.stderr
    with open(log_path, "a", encoding="utf-8") as log:
        for index, spec in enumerate(specs):
            log.write(json.dumps({"case": index, "event": "start"}) + "\n")
            log.flush()
            try:
                line: dict[str, Any] = {"result": check_spec(spec, scope).to_json()}
            except Exception as exc:  # noqa: BLE001 - reported per case
                line = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
            log.write(json.dumps({"case": index, "event": "done", **line}) + "\n")
            log.flush()
