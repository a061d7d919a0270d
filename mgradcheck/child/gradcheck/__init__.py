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

It runs inside the child, under any MLX release's environment: standard
library, NumPy and MLX only. The modules, by concern:

- :mod:`.arrays`: arguments (:class:`Arg`) and moving values between MLX and NumPy;
- :mod:`.numerics`: tolerances, comparisons and finite differences;
- :mod:`.report`: what a check finds (:class:`Finding`, :class:`Result`);
- :mod:`.point`: every comparison made at one drawn point;
- :mod:`.transforms`: the compiled and second-order paths of a point;
- :mod:`.adjoint`, :mod:`.exported`, :mod:`.composed`: jvp against vjp with no
  finite differences, export and import, transforms composed;
- :mod:`.at_point`: every check made at a point, in order;
- :mod:`.api`: :func:`check` and :func:`gradcheck`, the public entry points;
- :mod:`.entry`: what the child runs for a corpus entry or a sweep batch.
"""

from __future__ import annotations

from mgradcheck.child.gradcheck.api import check, check_spec, gradcheck, setitem
from mgradcheck.child.gradcheck.arrays import Arg
from mgradcheck.child.gradcheck.entry_points import run_batch, run_declarative
from mgradcheck.child.gradcheck.result import Finding, Result
from mgradcheck.child.gradcheck_spec import CHECKS

__all__ = [
    "CHECKS",
    "Arg",
    "Finding",
    "Result",
    "check",
    "check_spec",
    "gradcheck",
    "run_batch",
    "run_declarative",
    "setitem",
]
