"""What every reproducer shares, and the reproducers of findings in derivatives.

The shared part is the :data:`PRELUDE` of helpers (MLX and NumPy only) and the
:class:`Script` that rebuilds the finding's inputs exactly; its paths are the
eager jvp and vjp against float64 finite differences, tangent and cotangent
dtypes, compiled against eager, second order and ``mx.checkpoint``. The other
transforms are in :mod:`.script_transforms`, the whole script in :mod:`.script`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mgradcheck.child.gradcheck_spec import FLOATS

PRELUDE = """\
import mlx.core as mx
import numpy as np

print("mlx", mx.__version__, mx.default_device())
rng = np.random.default_rng(0)


def listed(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def as_np(x):  # an MLX array as float64 NumPy
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x, dtype=np.float64)


def like(x, values):  # NumPy values as an MLX array of x's dtype
    return mx.array(np.asarray(values, dtype=np.float32)).astype(x.dtype)


def at64(fn, xs):  # fn at float64 NumPy inputs, in float64 on the CPU (float32 without a kernel)
    for dtype in (mx.float64, mx.float32):
        try:
            with mx.stream(mx.cpu):
                outs = listed(fn(*[mx.array(x, dtype=dtype) for x in xs]))
                mx.eval(outs)
            return [as_np(o) for o in outs], dtype
        except Exception:
            continue
    raise RuntimeError("no float64 or float32 kernel for the reference")


def fd_jvp(fn, xs, ts):  # central finite differences along ts
    x0, t0 = [as_np(x) for x in xs], [as_np(t) for t in ts]
    h = 1e-6 if at64(fn, x0)[1] == mx.float64 else 1e-3
    up = at64(fn, [x + h * t for x, t in zip(x0, t0)])[0]
    down = at64(fn, [x - h * t for x, t in zip(x0, t0)])[0]
    return [(u - d) / (2 * h) for u, d in zip(up, down)]


def fd_vjp(fn, xs, cs):  # the gradient of sum(<fn(x), c>), element by element
    x0, c0 = [as_np(x) for x in xs], [as_np(c) for c in cs]
    h = 1e-6 if at64(fn, x0)[1] == mx.float64 else 1e-3

    def s(vals):
        return sum(float((o * c).sum()) for o, c in zip(at64(fn, vals)[0], c0))

    grads = []
    for i, x in enumerate(x0):
        g = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            up, down = [v.copy() for v in x0], [v.copy() for v in x0]
            up[i][j] += h
            down[i][j] -= h
            g[j] = (s(up) - s(down)) / (2 * h)
        grads.append(g)
    return grads


def compare(what, observed, expected, rtol, atol):
    observed = [as_np(o) for o in listed(observed)]
    expected = [e if isinstance(e, np.ndarray) else as_np(e) for e in listed(expected)]
    print(what)
    for k, (o, e) in enumerate(zip(observed, expected)):
        print(f"  result {k}: observed {o.tolist()}")
        print(f"  result {k}: expected {e.tolist()}")
    assert len(observed) == len(expected), f"{what}: {len(observed)} results, expected {len(expected)}"
    for o, e in zip(observed, expected):
        assert o.shape == e.shape, f"{what}: shape {o.shape}, expected {e.shape}"
        np.testing.assert_allclose(o, e, rtol=rtol, atol=atol, err_msg=what)


def must_not_raise(what, call):
    try:
        out = call()
        mx.eval(out)
        return out
    except Exception as e:
        raise AssertionError(f"{what} raised {type(e).__name__}: {e}") from e
"""

RTOL = {"float64": 1e-6, "float32": 2e-3, "float16": 2e-2, "bfloat16": 8e-2}
SPECIAL = {"nan": 'float("nan")', "inf": 'float("inf")', "-inf": 'float("-inf")', "-0.0": "-0.0"}


class Script:
    """Builds the reproducer of one finding of one gradcheck spec."""

    def __init__(
        self, spec: Mapping[str, Any], finding: Mapping[str, Any], names: Sequence[str]
    ) -> None:
        self.spec, self.finding = spec, finding
        self.names = list(names)
        self.repro: Mapping[str, Any] = finding.get("repro") or {}
        self.dtype = str(finding.get("dtype") or spec.get("dtypes", ["float32"])[0])
        self.dts = [i.get("dtype") or self.dtype for i in spec["inputs"]]
        traced = list(finding.get("traced") or [])
        self.traced = [n for n in self.names if n in traced]
        self.rtol = float(spec.get("rtol") or RTOL.get(self.dtype, 2e-3))
        self.atol = float(spec.get("atol") or self.rtol * 1e-2)

    # -- pieces ------------------------------------------------------------
    def arrays(self) -> str:
        lines = []
        for name, dt, values in zip(
            self.names, self.dts, self.finding.get("values") or [], strict=False
        ):
            if dt == "bool":
                lines.append(f"{name} = mx.array(np.array({values!r}) != 0)")
            elif dt in FLOATS:
                lines.append(
                    f"{name} = mx.array(np.array({values!r}, dtype=np.float32)).astype(mx.{dt})"
                )
            else:
                lines.append(f"{name} = mx.array(np.array({values!r}), dtype=mx.{dt})")
        return "\n".join(lines)

    @property
    def all_args(self) -> str:
        return ", ".join(self.names)

    @property
    def traced_args(self) -> str:
        return ", ".join(self.traced)

    def g(self) -> str:
        """``g``: the function of the traced arguments, the others as they are."""
        return f"def g({self.traced_args}):\n    return listed(f({self.all_args}))\n"

    def tangents(self) -> str:
        return f"t = [like(x, rng.standard_normal(x.shape)) for x in [{self.traced_args}]]"

    def cotangents(self, outs: str = "g") -> str:
        return (
            f"c = [like(o, rng.standard_normal(o.shape)) if o.dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64)"
            f" else mx.zeros_like(o) for o in {outs}]"
        )

    def check_line(self, what: str) -> str:
        return f"compare({what!r}, observed, expected, rtol={self.rtol!r}, atol={self.atol!r})"

    # -- the paths ----------------------------------------------------------
    def body(self) -> str:
        check = str(self.finding.get("check", ""))
        method = getattr(self, f"_{check}", None) if check else None
        return method() if method is not None else self._jvp()

    def _jvp(self) -> str:
        paths = str(self.finding.get("paths", ""))
        if paths.startswith("vjp") or "cotangent" in paths:
            return self._vjp()
        return "\n".join([
            self.g(), self.tangents(),
            f"observed = must_not_raise('mx.jvp', lambda: mx.jvp(g, [{self.traced_args}], t)[1])",
            f"expected = fd_jvp(g, [{self.traced_args}], t)  # float64 finite differences",
            self.check_line(f"jvp with ({self.traced_args}) traced vs finite differences"),
        ])  # fmt: skip

    _subsets = _jvp

    def _vjp(self) -> str:
        return "\n".join([
            self.g(), self.cotangents(f"g({self.traced_args})"),
            f"observed = must_not_raise('mx.vjp', lambda: mx.vjp(g, [{self.traced_args}], c)[1])",
            f"expected = fd_vjp(g, [{self.traced_args}], c)  # float64 finite differences",
            self.check_line(f"vjp with ({self.traced_args}) traced vs finite differences"),
        ])  # fmt: skip

    def _dtype(self) -> str:
        return "\n".join([
            self.g(), self.tangents(), self.cotangents(f"g({self.traced_args})"),
            f"outs = g({self.traced_args})",
            f"tangents = mx.jvp(g, [{self.traced_args}], t)[1]",
            f"cotangents = mx.vjp(g, [{self.traced_args}], c)[1]",
            "for o, tangent in zip(outs, tangents):",
            "    print('output', o.dtype, o.shape, 'tangent', tangent.dtype, tangent.shape)",
            "    assert (tangent.dtype, tangent.shape) == (o.dtype, o.shape), 'tangent differs from its output'",
            f"for x, cotangent in zip([{self.traced_args}], cotangents):",
            "    print('argument', x.dtype, x.shape, 'cotangent', cotangent.dtype, cotangent.shape)",
            "    assert (cotangent.dtype, cotangent.shape) == (x.dtype, x.shape), 'cotangent differs from its argument'",
        ])  # fmt: skip

    def _path(self, path: str) -> tuple[str, str]:
        """``path`` (the primal, jvp or vjp of g) as a function, and the arguments to call it
        with: tangents and cotangents are passed in, as the sweep compiled them."""
        args = self.traced_args
        if path == "jvp":
            return "\n".join([self.tangents(), f"def path({args}, *t):",
                               f"    return listed(mx.jvp(g, [{args}], list(t))[1])"]), f"{args}, *t"  # fmt: skip
        if path == "vjp":
            return "\n".join([self.cotangents(f"g({args})"), f"def path({args}, *c):",
                               f"    return listed(mx.vjp(g, [{args}], list(c))[1])"]), f"{args}, *c"  # fmt: skip
        return "path = g", args

    def _compile(self) -> str:
        path = str(self.repro.get("path", "primal"))
        definition, call = self._path(path)
        return "\n".join([
            self.g(), definition,
            f"expected = path({call})  # eager",
            f"observed = must_not_raise('mx.compile', lambda: mx.compile(path)({call}))",
            self.check_line(f"compiled {path} vs eager {path}"),
        ])  # fmt: skip

    def _hessian(self) -> str:
        return "\n".join([
            self.g(), self.cotangents(f"g({self.traced_args})"), self.tangents(),
            f"def grad({self.traced_args}):",
            f"    weighted = lambda {self.traced_args}: sum((o * w.astype(o.dtype)).sum() for o, w in zip(g({self.traced_args}), c))",
            f"    return listed(mx.grad(weighted, argnums=list(range({len(self.traced)})))({self.traced_args}))",
            f"observed = must_not_raise('jvp of grad', lambda: mx.jvp(grad, [{self.traced_args}], t)[1])",
            f"expected = fd_jvp(grad, [{self.traced_args}], t)  # finite differences of the float64 gradient",
            self.check_line("jvp of grad (forward over reverse) vs finite differences of grad"),
        ])  # fmt: skip

    def _checkpoint(self) -> str:
        path = str(self.repro.get("path", "vjp"))
        if path == "jvp":
            call = f"mx.jvp(mx.checkpoint(g), [{self.traced_args}], t)[1]"
            oracle = f"fd_jvp(g, [{self.traced_args}], t)"
            setup = self.tangents()
        else:
            call = f"mx.vjp(mx.checkpoint(g), [{self.traced_args}], c)[1]"
            oracle = f"fd_vjp(g, [{self.traced_args}], c)"
            setup = self.cotangents(f"g({self.traced_args})")
        return "\n".join([
            self.g(), setup,
            f"observed = must_not_raise('{path} through mx.checkpoint', lambda: {call})",
            f"expected = {oracle}  # float64 finite differences",
            self.check_line(f"{path} through mx.checkpoint vs finite differences"),
        ])  # fmt: skip
