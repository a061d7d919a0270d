"""The oracle helpers bound in every entry's code: each accepts what is right and
rejects what is wrong, since an oracle that cannot fail hides its bug."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from mgradcheck.child.checks import (
    CheckFailed,
    Printed,
    assert_close,
    assert_dtype,
    assert_printed,
    assert_shape,
    assert_true,
    fd_grad,
    fd_jvp,
    to_numpy,
)

NAN, INF = math.nan, math.inf


def rejects(observed: Any, expected: Any, **kw: Any) -> str:
    with pytest.raises(CheckFailed) as info:
        assert_close(observed, expected, **kw)
    return str(info.value)


@pytest.mark.parametrize(
    ("observed", "expected"), [(NAN, 1.0), (1.0, NAN), ([1.0, NAN], [1.0, 2.0])]
)
def test_nan_never_matches_a_number(observed: Any, expected: Any) -> None:
    assert "nan" in rejects(observed, expected, what="grad")


def test_nan_matches_nan_where_nan_is_expected() -> None:
    """The docstring's "NaN only matches NaN": an oracle may expect NaN (0/0 on purpose)."""
    assert_close([NAN, 1.0], [NAN, 1.0])
    assert_close(NAN, NAN)
    rejects([NAN, 1.0], [1.0, NAN])


def test_inf_matches_only_the_same_inf() -> None:
    assert_close([INF, -INF], [INF, -INF])
    rejects(INF, -INF)
    rejects(INF, 1e308)
    rejects(1e308, INF)
    rejects(INF, NAN)


@pytest.mark.parametrize(
    ("observed", "expected"),
    [(np.zeros(3), np.zeros((1, 3))), (np.zeros(3), 0.0), (np.zeros((2, 3)), np.zeros((3, 2)))],
)
def test_shapes_must_be_equal_not_just_broadcast(observed: Any, expected: Any) -> None:
    assert "shape" in rejects(observed, expected, what="vjp")


def test_the_message_names_what_and_both_values_and_the_first_difference() -> None:
    message = rejects(np.array([1.0, 2.0, 3.0]), [1.0, 2.5, 3.5], what="jvp of f")
    assert message.startswith("jvp of f: observed ")
    assert "2.5" in message and "(2/3 differ, first at (1,))" in message


def test_tolerance_is_atol_plus_rtol_times_expected() -> None:
    assert_close(1.0 + 0.9e-3, 1.0, rtol=1e-3, atol=0.0)
    rejects(1.0 + 1.1e-3, 1.0, rtol=1e-3, atol=0.0)
    assert_close(0.9e-3, 0.0, rtol=0.0, atol=1e-3)
    rejects(1.1e-3, 0.0, rtol=0.0, atol=1e-3)
    # The defaults: a float32 rounding passes, a wrong last digit of a float64 sum does not.
    assert_close(np.float32(0.1), 0.1)
    rejects(1.0 + 1e-4, 1.0)


def test_complex_values_compare_both_parts() -> None:
    assert_close(np.array([1 + 2j, 3 - 1j]), [1 + 2j, 3 - 1j])
    assert "expected" in rejects(np.array([1 + 2j]), [1 - 2j], what="vjp of exp")
    rejects(np.array([1 + 2j]), [1.0])
    rejects(1.0, np.array([1 + 1e-3j]))
    assert_close(np.array([1 + 0j]), [1.0])


def test_dtype_is_left_to_assert_dtype() -> None:
    """assert_close compares values only; a float16 result of the right value passes it."""
    assert_close(np.float16(0.5), 0.5)
    assert_close(np.array([True, False]), [1.0, 0.0])
    assert_dtype(np.zeros(1, np.float32), np.float32)
    with pytest.raises(CheckFailed, match=r"^tangent: dtype float16 observed, float32 expected$"):
        assert_dtype(np.zeros(1, np.float16), np.dtype(np.float32), what="tangent")


def test_assert_shape_and_assert_true() -> None:
    assert_shape(np.zeros((2, 3)), (2, 3))
    assert_shape(np.zeros((2, 3)), [2, 3])
    with pytest.raises(CheckFailed, match=re.escape("g: shape (3,) observed, (1, 3) expected")):
        assert_shape(np.zeros(3), (1, 3), what="g")
    assert_true(np.array([True]), "never shown")
    with pytest.raises(CheckFailed, match=r"^the grad is zero$"):
        assert_true(False, "the grad is zero")
    with pytest.raises(CheckFailed):
        assert_true(np.array([False]), "a single false element")


def test_a_failed_check_is_an_assertion_error() -> None:
    """The runner reads an AssertionError as the bug reproduced, anything else as an error."""
    assert issubclass(CheckFailed, AssertionError)


def f_scalar(x: np.ndarray) -> Any:
    return np.sum(np.sin(x) * x**2)


def f_scalar_grad(x: np.ndarray) -> np.ndarray:
    grad: np.ndarray = np.cos(x) * x**2 + 2 * x * np.sin(x)
    return grad


def test_fd_grad_agrees_with_the_analytic_gradient_in_float64() -> None:
    x = np.array([[0.3, -1.2], [2.0, 0.7]])
    grad = fd_grad(f_scalar, x)
    assert grad.dtype == np.float64 and grad.shape == x.shape
    assert_close(grad, f_scalar_grad(x), rtol=1e-7, atol=1e-8)


def test_fd_grad_catches_a_wrong_gradient() -> None:
    x = np.array([0.3, -1.2, 2.0])
    wrong = f_scalar_grad(x).copy()
    wrong[1] *= -1  # the sign error of a transposed or conjugated cotangent
    with pytest.raises(CheckFailed, match=r"first at \(1,\)"):
        assert_close(wrong, fd_grad(f_scalar, x), rtol=1e-5, atol=1e-6)
    with pytest.raises(CheckFailed):
        assert_close(f_scalar_grad(x) * (1 + 1e-3), fd_grad(f_scalar, x), rtol=1e-5, atol=1e-6)


def test_fd_grad_sums_a_function_with_an_array_result() -> None:
    x = np.array([0.5, 1.5])
    assert_close(fd_grad(np.exp, x), np.exp(x), rtol=1e-7)


def test_fd_grad_reads_float32_input_in_float64() -> None:
    """A float32 input is differentiated in float64: a step of 1e-6 would lose most digits in float32."""
    x32 = np.array([1.0, 2.0], dtype=np.float32)
    assert_close(fd_grad(lambda x: np.sum(x**3), x32), 3 * x32.astype(np.float64) ** 2, rtol=1e-7)


def test_fd_jvp_agrees_with_the_analytic_directional_derivative() -> None:
    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        value: np.ndarray = a * b + np.sin(a)
        return value

    a, b = np.array([0.2, -0.4, 1.1]), np.array([2.0, 0.5, -3.0])
    ta, tb = np.array([1.0, 0.0, -2.0]), np.array([0.5, 1.0, 0.25])
    expected = (b + np.cos(a)) * ta + a * tb
    jvp = fd_jvp(f, [a, b], [ta, tb])
    assert jvp.dtype == np.float64
    assert_close(jvp, expected, rtol=1e-7, atol=1e-8)
    with pytest.raises(CheckFailed):  # the bug of a dropped tangent: only a's term
        assert_close((b + np.cos(a)) * ta, fd_jvp(f, [a, b], [ta, tb]))


def test_to_numpy_takes_numbers_lists_and_arrays() -> None:
    array = np.array([1.0])
    assert to_numpy(array) is array
    assert to_numpy(2.5).shape == ()
    assert to_numpy([[1, 2]]).shape == (1, 2)


def test_mlx_arrays_compare_through_numpy() -> None:
    mx = pytest.importorskip("mlx.core")
    assert_close(mx.array([1.0, 2.0]), [1.0, 2.0])
    assert_close(mx.array([0.5], dtype=mx.bfloat16), [0.5])
    assert "nan" in rejects(mx.array([NAN]), [0.0])
    assert_close(mx.array([1 + 2j], dtype=mx.complex64), [1 + 2j])
    rejects(mx.array([1 + 2j], dtype=mx.complex64), [1 - 2j])
    assert_dtype(mx.zeros((1,), dtype=mx.float16), mx.float16)
    with pytest.raises(CheckFailed, match="float16 observed"):
        assert_dtype(mx.zeros((1,), dtype=mx.float16), mx.float32)
    with pytest.raises(CheckFailed, match="shape"):
        assert_shape(mx.zeros((2,)), (2, 1))


def test_assert_printed_compares_numbers_within_tolerance_else_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_ = Printed()
    print_("grad:", 0.1 + 0.2, [1, 2])
    print_("done", end="")
    assert capsys.readouterr().out == "grad: 0.30000000000000004 [1, 2]\ndone"
    assert_printed(print_.text, "grad: 0.3 [1, 2] done")
    with pytest.raises(CheckFailed, match="printed output is not the expected one"):
        assert_printed(print_.text, "grad: 0.31 [1, 2] done")
    with pytest.raises(CheckFailed):
        assert_printed("nan", "0.0")
    assert_printed("nan inf", "nan inf")
    assert_printed("(3, 5)", "(3, 5)")
    with pytest.raises(CheckFailed):
        assert_printed("(3, 5)", "(3, 5, 1)")  # not as many numbers: the words differ
    with pytest.raises(CheckFailed):
        assert_printed("shape wrong", "shape right")
