"""Check helpers available to corpus entry code.

A failed check raises :class:`CheckFailed`, an ``AssertionError``: the runner
reads that as "the bug reproduced" (outcome ``fail``). Any other exception is an
``error``. Messages always carry the observed and the expected value so that a
report line says what went wrong without rerunning anything.

Standard library and NumPy only; MLX arrays are converted through NumPy.
NumPy is imported on first use: a reproducer that never needs it should not
pay its import time, which is most of a child's start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType

TYPE_CHECKING = False  # typing itself costs start-up time in every child
if TYPE_CHECKING:
    from typing import Any


class LazyModule(ModuleType):
    """A module that imports itself on first attribute access."""

    def __getattr__(self, name: str) -> Any:
        __import__(self.__name__)  # importlib.import_module would import importlib in every child
        module = sys.modules[self.__name__]
        self.__dict__.update(module.__dict__)
        return getattr(module, name)


if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")

__all__ = [
    "CheckFailed",
    "Printed",
    "assert_close",
    "assert_dtype",
    "assert_printed",
    "assert_shape",
    "assert_true",
    "fd_grad",
    "fd_jvp",
    "np",
    "to_numpy",
]


class CheckFailed(AssertionError):
    """A reproducer's oracle disagreed with MLX: the bug is present."""


def to_numpy(x: Any) -> np.ndarray:
    """Return ``x`` (MLX array, NumPy array or number) as a float64-capable NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    module = type(x).__module__ or ""
    if module.startswith("mlx"):
        # bfloat16 has no NumPy dtype; widen it before converting.
        dtype_name = str(getattr(x, "dtype", ""))
        if "bfloat16" in dtype_name:
            import mlx.core as mx

            x = x.astype(mx.float32)
        return np.array(x)
    return np.asarray(x)


def _fmt(a: np.ndarray) -> str:
    with np.printoptions(precision=6, suppress=False, threshold=12, edgeitems=3):
        return np.array2string(a, separator=", ") if a.ndim else repr(a.item())


def assert_close(
    observed: Any,
    expected: Any,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    what: str = "value",
) -> None:
    """Fail unless ``observed`` matches ``expected`` elementwise within tolerance.

    Shapes must be equal; NaN only matches NaN, and an infinity only the same
    infinity. Complex values compare both parts, with the tolerance on the
    modulus of their difference.
    """
    obs, exp = to_numpy(observed), to_numpy(expected)
    # Casting a complex value to float64 would drop its imaginary part, and the
    # conjugation bugs that live there with it.
    wide = np.complex128 if np.iscomplexobj(obs) or np.iscomplexobj(exp) else np.float64
    obs, exp = obs.astype(wide), exp.astype(wide)
    if obs.shape != exp.shape:
        raise CheckFailed(f"{what}: shape {obs.shape} observed, {exp.shape} expected")
    ok = np.isclose(obs, exp, rtol=rtol, atol=atol, equal_nan=True)
    if not bool(np.all(ok)):
        bad = int(np.size(ok) - np.count_nonzero(ok))
        where = ""
        if obs.ndim:
            first = tuple(int(i) for i in np.argwhere(~ok)[0])
            where = f" ({bad}/{ok.size} differ, first at {first})"
        raise CheckFailed(f"{what}: observed {_fmt(obs)}, expected {_fmt(exp)}{where}")


def assert_dtype(x: Any, dtype: Any, *, what: str = "value") -> None:
    """Fail unless the array ``x`` has dtype ``dtype`` (an MLX or NumPy dtype)."""
    actual = getattr(x, "dtype", type(x))
    if actual != dtype:
        raise CheckFailed(f"{what}: dtype {actual} observed, {dtype} expected")


def assert_shape(x: Any, shape: Sequence[int], *, what: str = "value") -> None:
    """Fail unless ``x`` has exactly ``shape``."""
    actual = tuple(getattr(x, "shape", np.shape(x)))
    if actual != tuple(shape):
        raise CheckFailed(f"{what}: shape {actual} observed, {tuple(shape)} expected")


def assert_true(condition: Any, message: str) -> None:
    """Fail with ``message`` unless ``condition`` holds."""
    if not bool(condition):
        raise CheckFailed(message)


def fd_grad(f: Callable[[np.ndarray], Any], x: Any, *, eps: float = 1e-6) -> np.ndarray:
    """Central finite-difference gradient of a scalar function, in float64.

    ``f`` takes and returns NumPy values (or anything :func:`to_numpy` reads).
    """
    x0 = to_numpy(x).astype(np.float64)
    grad = np.zeros(x0.size, dtype=np.float64)
    for i in range(x0.size):
        step = np.zeros(x0.size, dtype=np.float64)
        step[i] = eps
        hi = float(to_numpy(f(x0 + step.reshape(x0.shape))).sum())
        lo = float(to_numpy(f(x0 - step.reshape(x0.shape))).sum())
        grad[i] = (hi - lo) / (2 * eps)
    return grad.reshape(x0.shape)


def fd_jvp(
    f: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    eps: float = 1e-6,
) -> np.ndarray:
    """Central finite-difference directional derivative ``J(primals) @ tangents``, in float64."""
    xs = [to_numpy(p).astype(np.float64) for p in primals]
    ts = [to_numpy(t).astype(np.float64) for t in tangents]
    hi = to_numpy(f(*[x + eps * t for x, t in zip(xs, ts)])).astype(np.float64)
    lo = to_numpy(f(*[x - eps * t for x, t in zip(xs, ts)])).astype(np.float64)
    return (hi - lo) / (2 * eps)


class Printed:
    """A ``print`` that also keeps what it wrote to stdout: bound as ``print`` in the
    code of a reproducer that shows its bug by printing a wrong value, so that
    :func:`assert_printed` can check that value."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __call__(self, *args: Any, sep: str | None = " ", end: str | None = "\n",
                 file: Any = None, flush: bool = False) -> None:  # fmt: skip
        import builtins

        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        if file is None:
            self.parts.append((" " if sep is None else sep).join(map(str, args)))
            self.parts.append("\n" if end is None else end)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def assert_printed(printed: str, expected: str, *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Fail unless ``printed`` says what ``expected`` says: the same numbers, within
    tolerance, where both hold as many; else the same words."""
    import re

    number = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)"
    got, want = re.findall(number, printed), re.findall(number, expected)
    shown = f"the printed output is not the expected one: printed {printed.strip()!r}, expected {expected.strip()!r}"
    if want and len(got) == len(want):
        obs = np.array([float(v) for v in got])
        exp = np.array([float(v) for v in want])
        if not bool(np.all(np.isclose(obs, exp, rtol=rtol, atol=atol, equal_nan=True))):
            raise CheckFailed(shown)
    elif printed.split() != expected.split():
        raise CheckFailed(shown)
