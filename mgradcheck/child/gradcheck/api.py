"""The public entry points: :func:`check` (a result) and :func:`gradcheck` (raises on a disagreement)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from mgradcheck.child.checks import CheckFailed
from mgradcheck.child.gradcheck.arrays import Arg, as_arg, dtype_name, outputs
from mgradcheck.child.gradcheck.at_point import check_at
from mgradcheck.child.gradcheck.graphs import makers
from mgradcheck.child.gradcheck.point import NotChecked, Point, Run
from mgradcheck.child.gradcheck.result import Result
from mgradcheck.child.gradcheck_spec import CHECKS, DEFAULT_CHECKS, FLOATS

REDRAWS = 4


def _arg_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        params = []
    return params[:n] if len(params) >= n else [f"arg{i}" for i in range(n)]


def check(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    dtypes: Sequence[str] | None = None,
    seed: int = 0,
    checks: Sequence[str] = DEFAULT_CHECKS,
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
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(CHECKS)}")
    args = [as_arg(x) for x in inputs]
    concrete = [x for x in inputs if isinstance(x, mx.array) and dtype_name(x.dtype) in FLOATS]
    default = dtype_name(concrete[0].dtype) if concrete else "float32"
    result = Result(label or str(getattr(fn, "__name__", repr(fn))), seed)
    run = Run(fn, args, _arg_names(fn, len(args)), tuple(checks), rtol, atol, result)
    redraws = REDRAWS if any(a.random for a in args) else 1
    for dtype in dtypes or [default]:
        for point in range(points):
            reason = None
            for attempt in range(redraws):
                try:
                    _check_point(run, dtype, point, [seed, point, attempt])
                except NotChecked as exc:
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


def _check_point(run: Run, dtype: str, point: int, seeds: list[int]) -> None:
    """Check one point; keep a disagreement only if it survives a jitter of a few ulps.

    A point on a tie (sort, max of equal values) or on a kink that the one-sided
    differences miss is non-differentiable only there: a few ulps away the
    disagreement vanishes. A wrong derivative does not. The adjoint check's
    disagreement is kept all the same: the jvp and the vjp must pick the same
    derivative at a tie too, and that a few ulps away they agree does not excuse them.
    Where the point was drawn with ties (an input's ``ties``), nothing is judged against
    finite differences: across a tie they estimate no derivative, however near the jitter.
    """
    findings = run.result.findings
    before = len(findings)
    at = Point(run, dtype, point, np.random.default_rng(seeds))
    check_at(at)
    if any(a.ties for a in run.args):
        differences = [f for f in findings[before:] if " vs finite differences" in f.paths]
        for finding in differences:
            findings.remove(finding)
        if differences:  # counted, not hidden
            n = len(differences)
            run.result.not_checked.append(
                f"{dtype} point {point}: {n} disagreement{'s' * (n != 1)} with finite "
                "differences set aside (drawn with ties, where they estimate no derivative)"
            )
    if len(findings) == before:
        return
    found = findings[before:]
    del findings[before:]
    try:
        check_at(Point(run, dtype, point, np.random.default_rng(seeds), jitter=True))
    except NotChecked:
        pass  # inconclusive: keep what the point itself showed
    else:
        if len(findings) == before:
            found = [f for f in found if f.check == "adjoint"]
            if not found:
                raise NotChecked("a disagreement here vanishes a few ulps away (a tie or a kink)")
    del findings[before:]
    # What the function is made of, as MLX reports its graph: median's vjp is its sort's.
    made = makers(lambda *xs: outputs(run.fn(*xs)), at.xs)
    for finding in found:
        finding.made_by = finding.made_by or made  # a composition's own graph stays
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
        checks=tuple(spec.get("checks", DEFAULT_CHECKS)),
        rtol=spec.get("rtol"),
        atol=spec.get("atol"),
        points=int(spec.get("points", 2)),
        label=spec["fn"],
    )
