"""The check helpers of :mod:`mgradcheck.child.checks`, written out for code that leaves mgradcheck.

An entry's code calls ``assert_close``, ``fd_grad`` and the rest, which the
child binds for it. A reproducer pasted into an issue, or a test pasted into
MLX's ``python/tests``, must stand alone: it gets the few helpers it uses as
plain functions (MLX and NumPy only), each meaning what the child's does, the
same keyword arguments included. A failed check is an ``AssertionError``, so
unittest counts it a failure, as the child counts it the bug reproduced.
"""

from __future__ import annotations

import re

from mgradcheck.child import checks
from mgradcheck.errors import UsageError

# In dependency order: a helper comes after those it calls.
HELPERS = {
    "CheckFailed": (
        'class CheckFailed(AssertionError):\n    """A check failed: the bug is present."""\n'
    ),
    "to_numpy": (
        "def to_numpy(x):\n"
        "    if isinstance(x, mx.array):  # bfloat16 has no NumPy dtype: widen it first\n"
        "        return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)\n"
        "    return np.asarray(x)\n"
    ),
    "assert_close": (
        "def assert_close(observed, expected, *, rtol=1e-5, atol=1e-6, what='value'):\n"
        "    obs, exp = to_numpy(observed), to_numpy(expected)\n"
        "    # float64 would drop a complex value's imaginary part, and the bugs that live there.\n"
        "    wide = np.complex128 if np.iscomplexobj(obs) or np.iscomplexobj(exp) else np.float64\n"
        "    obs, exp = obs.astype(wide), exp.astype(wide)\n"
        "    if obs.shape != exp.shape:\n"
        "        raise CheckFailed(f'{what}: shape {obs.shape} observed, {exp.shape} expected')\n"
        "    if not np.allclose(obs, exp, rtol=rtol, atol=atol, equal_nan=True):\n"
        "        raise CheckFailed(f'{what}: observed {obs.tolist()}, expected {exp.tolist()}')\n"
    ),
    "assert_dtype": (
        "def assert_dtype(x, dtype, *, what='value'):\n"
        "    actual = getattr(x, 'dtype', type(x))\n"
        "    if actual != dtype:\n"
        "        raise CheckFailed(f'{what}: dtype {actual} observed, {dtype} expected')\n"
    ),
    "assert_shape": (
        "def assert_shape(x, shape, *, what='value'):\n"
        "    actual = tuple(getattr(x, 'shape', np.shape(x)))\n"
        "    if actual != tuple(shape):\n"
        "        raise CheckFailed(f'{what}: shape {actual} observed, {tuple(shape)} expected')\n"
    ),
    "assert_true": (
        "def assert_true(condition, message):\n"
        "    if not bool(condition):\n"
        "        raise CheckFailed(message)\n"
    ),
    "fd_grad": (
        "def fd_grad(f, x, *, eps=1e-6):\n"
        "    # Central differences of a scalar function, in float64.\n"
        "    x0 = to_numpy(x).astype(np.float64)\n"
        "    grad = np.zeros(x0.size)\n"
        "    for i in range(x0.size):\n"
        "        step = np.zeros(x0.size)\n"
        "        step[i] = eps\n"
        "        hi = float(to_numpy(f(x0 + step.reshape(x0.shape))).sum())\n"
        "        lo = float(to_numpy(f(x0 - step.reshape(x0.shape))).sum())\n"
        "        grad[i] = (hi - lo) / (2 * eps)\n"
        "    return grad.reshape(x0.shape)\n"
    ),
    "fd_jvp": (
        "def fd_jvp(f, primals, tangents, *, eps=1e-6):\n"
        "    # Central differences along the tangents, in float64.\n"
        "    xs = [to_numpy(p).astype(np.float64) for p in primals]\n"
        "    ts = [to_numpy(t).astype(np.float64) for t in tangents]\n"
        "    hi = to_numpy(f(*[x + eps * t for x, t in zip(xs, ts)])).astype(np.float64)\n"
        "    lo = to_numpy(f(*[x - eps * t for x, t in zip(xs, ts)])).astype(np.float64)\n"
        "    return (hi - lo) / (2 * eps)\n"
    ),
}


def _uses(text: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


def helpers(code: str, entry_id: str) -> str:
    """The source of the helpers ``code`` uses and of those they use, in order ("" for none).

    Raises UsageError for a helper of the child's that cannot be written out here
    (``Printed``, which takes over ``print``): such an entry's script is written by hand.
    """
    missing = [n for n in checks.__all__ if n not in HELPERS and n != "np" and _uses(code, n)]
    if missing:
        raise UsageError(
            f"{entry_id} uses {', '.join(missing)}, which cannot be written out: "
            "write its reproducer by hand"
        )
    wanted = {name for name in HELPERS if _uses(code, name)}
    for name in reversed(HELPERS):  # a helper's own uses come before it in the table
        if name in wanted:
            wanted.update(n for n in HELPERS if n != name and _uses(HELPERS[name], n))
    return "\n\n".join(HELPERS[name] for name in HELPERS if name in wanted)


__all__ = ["HELPERS", "helpers"]
