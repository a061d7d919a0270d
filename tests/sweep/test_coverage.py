"""Coverage: every public callable of the installed MLX is swept or excluded with a reason."""

from __future__ import annotations

import re

import pytest

from mgradcheck.child.gradcheck_spec import CHECKS
from mgradcheck.sweep.case_runs import CaseResult, Status, Task
from mgradcheck.sweep.catalogue import Case, arr, calls, catalogue
from mgradcheck.sweep.catalogue.excluded import EXCLUDED, account
from mgradcheck.sweep.coverage import CHECKED, FINDING, NOT_COVERED, UNSUPPORTED, tabulate

TARGET = 0.95


def test_the_operations_a_case_covers_are_read_from_its_function() -> None:
    fn = "lambda x: mx.linalg.inv(x) + mx.fft.fft(x).real * mx.sin(mx.fast.rms_norm(x, None, 1e-5))"
    assert calls(fn) == ("linalg.inv", "fft.fft", "mx.sin", "fast.rms_norm")
    assert calls("lambda x: x.at[0].add(1.0)") == ()


def test_coverage_sorts_names_into_covered_excluded_and_missing() -> None:
    cases = [Case("c", "sin", "unary", "lambda x: mx.sin(x) * mx.ones_like(x)", (arr(2),))]
    cov = account(["mx.sin", "mx.ones_like", "mx.cos", "mx.stop_gradient"], cases)
    assert cov.covered == ("mx.sin",) and cov.missing == ("mx.cos",)
    assert set(cov.excluded) == {"mx.ones_like", "mx.stop_gradient"}  # a helper stays excluded
    # stop_gradient is differentiable but left out: it counts against the share, ones_like does not.
    assert cov.differentiable == ("mx.sin", "mx.stop_gradient", "mx.cos")
    assert cov.share == pytest.approx(1 / 3)
    assert all(e.reason for e in EXCLUDED.values())


@pytest.mark.mlx
def test_every_public_callable_of_the_installed_mlx_is_covered_or_excluded() -> None:
    pytest.importorskip("mlx.core")
    from mgradcheck.child.gradcheck.entry_points import public_callables
    from mgradcheck.sweep.catalogue.excluded import public

    cov = account(public(public_callables()), catalogue())
    assert not cov.missing, f"neither in the catalogue nor in EXCLUDED: {', '.join(cov.missing)}"
    assert cov.share >= TARGET, f"{len(cov.covered)}/{len(cov.differentiable)} covered"
    for ns, (covered, *_rest) in cov.by_namespace().items():
        assert covered > 0, f"nothing covered in {ns}"


@pytest.mark.mlx
def test_every_case_runs_on_the_installed_mlx() -> None:
    """The newest release must take every case as written: a refusal here is a catalogue typo."""
    mx = pytest.importorskip("mlx.core")
    import numpy as np

    from mgradcheck.child.gradcheck.api import setitem
    from mgradcheck.child.gradcheck.arrays import Arg, outputs, to_mlx

    rng = np.random.default_rng(0)
    broken = []
    for case in catalogue():
        fn = eval(case.fn, {"mx": mx, "np": np, "setitem": setitem})  # catalogue code is ours
        args = [Arg.from_spec(i) for i in case.inputs]
        xs = [to_mlx(a.draw(a.dtype or "float32", rng), a.dtype or "float32") for a in args]
        try:
            mx.eval(outputs(fn(*xs)))
        except Exception as exc:  # noqa: BLE001 - collected and reported together
            broken.append(f"{case.id}: {type(exc).__name__}: {exc}")
    assert not broken, "\n".join(broken)


def result(case: Case, status: Status, **fields: object) -> CaseResult:
    return CaseResult(Task.of(case, "float32"), status, **fields)  # type: ignore[arg-type]


def test_the_table_says_checked_finding_unsupported_or_not_covered() -> None:
    sin = Case("sin", "sin", "unary", "lambda x: mx.sin(x)", (arr(2),))
    solve = Case("solve", "solve", "linalg", "lambda x: mx.linalg.solve(x, x)", (arr(2, 2),))
    refusal = "ValueError: [Primitive::vmap] Not implemented for Solve."
    results = [
        result(sin, Status.PASS, ran={"jvp": 2, "vmap": 4}),
        result(
            sin,
            Status.WRONG,
            ran={"compile": 3},
            findings=[{"kind": "wrong-value", "check": "compile"}],
        ),
        result(solve, Status.PASS, ran={"jvp": 2}, refused={"vmap": refusal}),
    ]
    table = tabulate(["mx.sin", "linalg.solve", "mx.cos"], [sin, solve], results)
    assert table.coverage.missing == ("mx.cos",)
    sin_row, solve_row = table.cells["mx.sin"], table.cells["linalg.solve"]
    assert sin_row["jvp"].status == CHECKED and sin_row["compile"].status == FINDING
    assert solve_row["vmap"].status == UNSUPPORTED and solve_row["vmap"].message == refusal
    assert solve_row["custom"].status == NOT_COVERED and set(sin_row) == set(CHECKS)
    assert table.to_json()["ops"]["linalg.solve"]["vmap"]["message"] == refusal


@pytest.mark.parametrize(
    ("message", "refusal"),
    [
        # MLX's documented refusals, as 0.32.4 words them: unsupported, never findings.
        (
            "[masked_scatter] Cannot calculate VJP with respect to mask. Use stop_gradient on mask",
            True,
        ),
        ("[masked_scatter] invalid arg index in JVP", True),  # the same mask, in forward mode
        ("[gather_axis] Cannot calculate VJP with respect to indices.", True),  # linalg.solve's vjp
        ("[Primitive::vjp] Not implemented for Inverse.", True),
        ("[QuantizedMatmul::vmap] NYI", True),
        ("[conv] Can only handle groups != 1 in 1D or 2D convolutions.", True),  # vmap of conv3d
        # Found as "new" by the default sweep of 0.32.4 (vmap(grad(checkpoint)) of gather_qmm).
        ("[GatherQMM::vjp] cannot compute the gradient wrt the indices.", True),
        # Errors that are bugs: vmap of addmm with only c mapped; a crash in a kernel.
        ("[addmm] input c must broadcast to the output shape", False),
        ("[SliceUpdate] index out of range", False),
    ],
)
def test_refusals_are_told_from_errors(message: str, refusal: bool) -> None:
    from mgradcheck.child.gradcheck_spec import UNSUPPORTED as REFUSAL

    assert bool(re.search(REFUSAL, f"ValueError: {message}")) is refusal
