"""Tolerances, comparisons against references, and central finite differences in float64."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Relative tolerance of a derivative computed in each dtype against the float64 oracle.
# float64 gets float32's: MLX's CPU kernels of cos, sin, exp... in float64 are accurate to
# float32 only (errors near 5e-8 on 0.32.4) and its FFTs compute in complex64, so the float64
# function that finite differences are taken of is no closer than that.
RTOL = {"float64": 2e-3, "float32": 2e-3, "float16": 2e-2, "bfloat16": 8e-2}
STEPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)

Function64 = Callable[[list[np.ndarray]], list[np.ndarray]]


def fmt(a: np.ndarray) -> str:
    with np.printoptions(precision=7, threshold=16, edgeitems=4, floatmode="maxprec"):
        return np.array2string(a, separator=", ") if a.ndim else repr(float(a))


def rms(a: np.ndarray) -> float:
    """Root mean square of the finite elements: the scale that absolute errors are judged at."""
    finite = a[np.isfinite(a)]
    return float(np.sqrt(np.mean(finite**2))) if finite.size else 0.0


def close(obs: np.ndarray, ref: np.ndarray, rtol: float, atol: float, scale: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok: np.ndarray = np.abs(obs - ref) <= atol + rtol * (np.abs(ref) + scale)
    return ok


def mismatch(
    obs: np.ndarray, refs: Sequence[np.ndarray], mask: np.ndarray, rtol: float, atol: float
) -> str | None:
    """Why ``obs`` agrees with none of ``refs`` on the masked elements, or None."""
    if obs.shape != refs[0].shape:
        return None  # reported by the shape check
    scale = rms(refs[-1])
    ok = np.zeros(obs.shape, dtype=bool)
    for ref in refs:
        ok |= close(obs, ref, rtol, atol, scale)
    bad = mask & ~ok
    if not bad.any():
        return None
    ref = refs[-1]
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if obs.ndim else ()
    return (
        f"observed {fmt(obs)}, expected {fmt(ref)} "
        f"({int(bad.sum())}/{bad.size} differ, first at {where}: {obs[where]:.7g} vs {ref[where]:.7g})"
    )


@dataclass
class FiniteDifferences:
    """Central differences at every step, and which elements they determine."""

    steps: list[list[np.ndarray]]  # [output][step]
    estimate: list[np.ndarray]  # [output]: the first step that settled, per element
    mask: list[np.ndarray]  # [output]: elements that are smooth and settled along the direction


def finite_differences(
    func: Function64, xs: list[np.ndarray], tangents: list[np.ndarray], eps: float
) -> FiniteDifferences:
    """Directional derivatives of ``func`` at ``xs`` along ``tangents``, with kinks and jumps masked.

    ``eps`` is the machine epsilon of the reference's dtype: it sets the noise
    floor each step's difference is judged against.
    """
    base = func(xs)
    central: list[list[np.ndarray]] = [[] for _ in base]
    kinks: list[list[np.ndarray]] = [[] for _ in base]
    for h in STEPS:
        hi = func([x + h * t for x, t in zip(xs, tangents)])
        lo = func([x - h * t for x, t in zip(xs, tangents)])
        for k, (a, b, f0) in enumerate(zip(hi, lo, base)):
            central[k].append((a - b) / (2 * h))
            kinks[k].append(np.abs((a - f0) - (f0 - b)) / h)  # |D+ - D-|
    loose = eps > 1e-10  # a float32 oracle is noisier
    agree_tol, kink_tol = (2e-2, 1e-1) if loose else (1e-3, 2e-2)
    estimates, masks = [], []
    for k, f0 in enumerate(base):
        c = np.stack(central[k])
        scale = rms(c[len(STEPS) // 2]) + 1e-12
        noise = np.array([10 * eps * (1 + rms(f0)) / h for h in STEPS]).reshape(
            (-1,) + (1,) * f0.ndim
        )
        with np.errstate(invalid="ignore"):
            settled = np.abs(c[:-1] - c[1:]) <= noise[1:] + agree_tol * (np.abs(c[1:]) + scale)
            smooth = np.stack(kinks[k])[1:] <= noise[1:] + kink_tol * (np.abs(c[1:]) + scale)
        good = settled & smooth & np.isfinite(c[1:])
        first = np.argmax(good, axis=0)
        estimates.append(np.take_along_axis(c[1:], first[None], axis=0)[0])
        masks.append(good.any(axis=0))
    return FiniteDifferences(central, estimates, masks)


def special_mismatch(obs: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> str | None:
    """Like :func:`mismatch` over every element: NaN must meet NaN, an infinity the same one."""
    if obs.shape != ref.shape:
        return None  # reported by the shape check
    finite = np.isfinite(ref)
    with np.errstate(invalid="ignore"):
        ok = np.where(finite, close(obs, ref, rtol, atol, rms(ref)), obs == ref)
    ok |= np.isnan(obs) & np.isnan(ref)
    if ok.all():
        return None
    where = tuple(int(i) for i in np.argwhere(~ok)[0]) if obs.ndim else ()
    return (
        f"observed {fmt(obs)}, expected {fmt(ref)} "
        f"({int((~ok).sum())}/{ok.size} differ, first at {where}: {obs[where]:.7g} vs {ref[where]:.7g})"
    )
