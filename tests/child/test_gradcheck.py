"""gradcheck on the installed MLX: right derivatives pass, wrong ones are caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

mx = pytest.importorskip("mlx.core")

from mgradcheck.child.checks import CheckFailed  # noqa: E402
from mgradcheck.child.gradcheck import Arg, check, check_spec, gradcheck, run_declarative  # noqa: E402
from mgradcheck.child.gradcheck.graphs import graph  # noqa: E402

pytestmark = pytest.mark.mlx


def kinds(result: Any) -> set[tuple[str, str]]:
    return {(f.kind, f.check) for f in result.findings}


@pytest.mark.parametrize(
    ("fn", "inputs"),
    [
        (lambda x: mx.sin(x) * mx.exp(x), [Arg((3,))]),
        (lambda a, b: mx.arctan2(a, b), [Arg((4,)), Arg((4,))]),
        (lambda c, x, y: mx.where(c, x, y * y), [Arg((4,), "bool"), Arg((4,)), Arg((4,))]),
        (lambda a, b: a @ b, [Arg((2, 3)), Arg((3, 2))]),
        (lambda x: mx.split(x, 2, axis=0), [Arg((4, 2))]),
        (lambda x, i: mx.take(x, i, axis=0), [Arg((5,)), Arg((3,), "int32", (0, 4))]),
        (lambda x: mx.logsumexp(x, axis=-1), [Arg((2, 3))]),
    ],
)
def test_right_derivatives_pass(fn: Any, inputs: list[Arg]) -> None:
    result = gradcheck(fn, inputs, dtypes=["float32", "float16"])
    assert result.ok and result.checked > 0, result.report()


def test_concrete_inputs_keep_their_dtype() -> None:
    result = gradcheck(lambda x: x * x, [mx.array([1.0, 2.0], dtype=mx.float16)], points=1)
    assert result.checked == 1 and not result.not_checked


def custom_mul(
    *, vjp_wrong: bool = False, jvp_wrong: bool = False, packs_tangents: bool = False
) -> Any:
    @mx.custom_function
    def f(a: Any, b: Any) -> Any:
        return a * b

    @f.vjp
    def f_vjp(primals: Any, cotangent: Any, output: Any) -> Any:
        a, b = primals
        return cotangent * (b + 1.0 if vjp_wrong else b), cotangent * a

    @f.jvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        a, b = primals
        if packs_tangents:
            # The atan2 bug class: untraced tangents dropped, so indices shift.
            ts = [t for t in tangents if t is not None]
            return ts[0] * b + (ts[1] * a if len(ts) > 1 else 0.0)
        ta = tangents[0] if tangents[0] is not None else mx.zeros_like(a)
        tb = tangents[1] if tangents[1] is not None else mx.zeros_like(b)
        return ta * b + tb * a * (2.0 if jvp_wrong else 1.0)

    return lambda a, b: f(a, b)


INPUTS = [Arg((3,), range=(0.5, 2.0)), Arg((3,), range=(0.5, 2.0))]


def test_a_custom_function_with_right_derivatives_passes() -> None:
    assert check(custom_mul(), INPUTS).ok


def test_the_custom_check_s_own_vmap_rule_takes_an_array_with_no_elements() -> None:
    # The default sweep of 0.32.4 found "vmap through the custom vmap rule" raising for sum
    # of a (0, 3) array: the rule's own mx.take(x, 1, axis=0), which MLX refuses for an
    # array with no elements (x[1] and an index array are fine): the check's, not MLX's AD.
    result = check(lambda a: mx.sum(a), [Arg((0, 3), fill=1.0)], checks=["custom"], points=1)
    assert result.ok, [f.line() for f in result.findings]
    assert result.ran["custom"] >= 1


def test_a_wrong_vjp_is_caught() -> None:
    result = check(custom_mul(vjp_wrong=True), INPUTS)
    assert ("wrong-value", "vjp") in kinds(result)
    assert ("wrong-value", "jvp") not in kinds(
        result
    )  # the jvp is right: the vjp is the odd one out


def test_a_vjp_stands_against_any_step_of_the_differences_as_a_jvp_does() -> None:
    # The default sweep of 0.32.4 took max(a) at a unique maximum of 1.83 for a wrong vjp: in
    # float32 the settled estimate was 2 % off its slope (0.00954 for 0.00932), a step not.
    fn = lambda a: ((t1 := mx.max(a)), (mx.erf(mx.cosh(t1)), t1))[-1]  # noqa: E731
    result = check(fn, [Arg((2, 3))], checks=["vjp"], points=2, seed=0)
    assert result.ok, [f.line() for f in result.findings]
    assert result.ran["vjp"] == 2


def test_a_wrong_jvp_is_caught_and_raises_with_the_report() -> None:
    with pytest.raises(CheckFailed) as info:
        gradcheck(custom_mul(jvp_wrong=True), INPUTS, seed=3)
    text = str(info.value)
    assert "jvp vs finite differences" in text and "seed 3" in text and "inputs: a=" in text


def test_only_a_subset_of_arguments_traced_is_checked() -> None:
    result = check(custom_mul(packs_tangents=True), INPUTS)
    traced = {f.traced for f in result.findings}
    assert ("b",) in traced and ("a", "b") not in traced
    assert ("wrong-value", "subsets") in kinds(result)


def test_const_arguments_are_never_traced() -> None:
    inputs = [Arg((3,), range=(0.5, 2.0)), Arg((3,), range=(0.5, 2.0), const=True)]
    result = check(custom_mul(packs_tangents=True), inputs)
    assert result.ok  # with b constant, a is the only tangent: nothing shifts


def test_a_wrong_dtype_is_caught() -> None:
    @mx.custom_function
    def f(x: Any) -> Any:
        return x * 2.0

    @f.vjp
    def f_vjp(primals: Any, cotangent: Any, output: Any) -> Any:
        return (cotangent * 2.0).astype(mx.float32)

    result = check(f, [Arg((2,))], dtypes=["float16"], checks=["dtype"])
    assert kinds(result) == {("wrong-dtype", "dtype")}


def test_a_kink_or_jump_is_not_checked_not_a_bug() -> None:
    # Every element sits exactly on the kink of abs / the jump of floor.
    assert check(lambda x: mx.abs(x), [Arg((3,), fill=0.0)]).ok
    result = check(lambda x: mx.maximum(x, 0.0), [Arg((3,), fill=0.0)], points=1)
    assert result.ok and result.checked == 0 and "kink" in result.not_checked[0]
    result = check(lambda x: mx.floor(x * 4.0), [Arg((8,))], dtypes=["float32", "bfloat16"])
    assert result.ok


def test_nan_points_are_redrawn_and_integer_outputs_not_checked() -> None:
    result = check(lambda x: mx.log(x), [Arg((1,), range=(-1.0, 1.0))], points=3)
    assert result.ok and result.checked == 3  # negative draws give NaN and are re-drawn
    result = check(lambda x: (x > 0).astype(mx.int32), [Arg((3,))], points=1)
    assert result.ok and result.not_checked == ["float32 point 0: integer outputs only"]


def test_the_declarative_form() -> None:
    scope = {"mx": mx}
    spec = {
        "fn": "lambda a, b: mx.arctan2(a, b)",
        "inputs": [{"shape": [3]}, {"shape": [3], "const": True}],
    }
    assert check_spec(spec, scope).ok
    run_declarative({**spec, "dtypes": ["bfloat16"], "checks": ["jvp", "vjp"], "points": 1}, scope)
    with pytest.raises(RuntimeError, match="checked nothing"):
        run_declarative({"fn": "lambda x: x > 0", "inputs": [{"shape": [2]}]}, scope)


def with_vmap_rule(reverse_batch: bool) -> Any:
    """a * b whose custom vmap rule can return the batch in the wrong order."""

    @mx.custom_function
    def f(a: Any, b: Any) -> Any:
        return a * b

    @f.vmap
    def f_vmap(inputs: Any, axes: Any) -> Any:
        a, b = (
            x if ax in (0, None) else mx.moveaxis(x, ax, 0)
            for x, ax in zip(inputs, axes, strict=True)
        )
        out = a * b
        return (out[::-1] if reverse_batch else out), 0

    return lambda a, b: f(a, b)


def test_vmap_agrees_with_a_loop_and_a_wrong_batch_rule_is_caught() -> None:
    right = check(with_vmap_rule(False), INPUTS, checks=["vmap"], points=1)
    assert right.ok and right.ran["vmap"] >= 4, right.report()
    wrong = check(with_vmap_rule(True), INPUTS, checks=["vmap"], points=1)
    assert ("wrong-value", "vmap") in kinds(wrong)
    finding = wrong.findings[0]
    assert "vs a loop over slices (in_axes=" in finding.paths  # names the combination
    assert finding.repro["path"] == "vmap" and len(finding.repro["slices"]) == 2


def test_every_transform_passes_on_a_right_function() -> None:
    transforms = ["vmap", "views", "specials", "shapeless", "checkpoint", "custom"]
    result = check(lambda a, b: a * b, INPUTS, checks=transforms, points=1)
    assert result.ok, result.report()
    assert set(result.ran) >= set(transforms) and not result.refused


def test_a_shape_written_into_the_function_is_caught_by_shapeless_replay() -> None:
    result = check(lambda x: x * x.shape[0], [Arg((3,))], checks=["shapeless"], points=1)
    assert kinds(result) == {("wrong-value", "shapeless")}
    assert result.findings[0].repro["variant"] == "larger"


def test_a_graph_holding_a_traced_shape_is_mlx_s_documented_limit_not_a_finding() -> None:
    # repeat broadcasts to a stored shape and reshapes to another: at (1, 1, 3) the replay
    # raises a broadcast error, which MLX's docs say shapeless compilation does.
    result = check(lambda x: mx.repeat(x, 2, axis=1), [Arg((1, 1, 2))], checks=["shapeless"])
    assert result.ok, result.report()
    assert "fixed when traced (Broadcast, Reshape)" in result.refused["shapeless"]


def test_a_function_building_another_graph_at_other_shapes_is_conditional_on_them() -> None:
    # hadamard_transform of one element is a multiplication: MLX's Hadamard replayed there
    # drops its scale, but no eager call ever runs it at that shape.
    fn = lambda x: mx.hadamard_transform(x, scale=0.25)  # noqa: E731
    result = check(fn, [Arg((16,))], checks=["shapeless"], points=1)
    assert result.ok, result.report()
    assert (
        "another graph at these shapes (Multiply there, no Hadamard)" in result.refused["shapeless"]
    )


def test_a_shape_following_graph_that_replays_wrong_is_still_a_finding() -> None:
    # The corpus's shapeless-power-broadcast-after-replay: fused broadcasts follow the shapes.
    inputs = [Arg((2, 3), range=(0.5, 2.0)), Arg((2, 3))]
    result = check(lambda a, b: mx.power(a, b), inputs, checks=["shapeless"], points=1)
    assert kinds(result) == {("wrong-value", "shapeless")}
    assert result.findings[0].repro["variant"] == "broadcast operand"


def test_one_more_leading_axis_keeps_a_literal_index_into_the_old_one_in_range() -> None:
    # x[2] of (4, 3): a new leading axis of 2 would make it read out of bounds (MLX does not
    # check), so the new axis is as long as the old leading one.
    import numpy as np

    from mgradcheck.child.gradcheck.layouts import _shapes
    from mgradcheck.child.gradcheck.point import Point, Run
    from mgradcheck.child.gradcheck.result import Result

    run = Run(lambda x: x[2], [Arg((4, 3))], ["x"], ("shapeless",), None, None, Result("f", 0))
    shapes = dict(_shapes(Point(run, "float32", 0, np.random.default_rng(0))))
    assert shapes["one more axis"] == {0: (4, 4, 3)} and shapes["larger"] == {0: (5, 4)}


def test_drawn_indices_keep_the_array_they_index_at_shapes_they_stay_in_range_of() -> None:
    # take_along_axis(a, indices) with indices drawn in 0..3: a at size-1 axes read out of
    # bounds, eager MLX returning garbage, which the default sweep of 0.32.4 took for a finding.
    import numpy as np

    from mgradcheck.child.gradcheck.layouts import _shapes
    from mgradcheck.child.gradcheck.point import Point, Run
    from mgradcheck.child.gradcheck.result import Result

    fn = lambda a, i: mx.take_along_axis(a, i, -1)  # noqa: E731
    args = [Arg((4,)), Arg((4,), dtype="int32", range=(0, 3))]  # 0 to 3, both included
    run = Run(fn, args, ["a", "indices"], ("shapeless",), None, None, Result("f", 0))
    point = Point(run, "float32", 0, np.random.default_rng(0))
    check_at_shapes = dict(_shapes(point))
    assert list(check_at_shapes) == ["larger"] and check_at_shapes["larger"] == {0: (5,)}
    result = check(fn, args, checks=["shapeless"], points=1)
    assert not result.findings, result.findings


def test_which_primitives_hold_a_traced_shape() -> None:
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])

    def fixed(fn: Any) -> list[str]:
        found = graph(fn, [x])
        assert found is not None
        return list(found.fixed)

    assert fixed(lambda a: [a.reshape(-1)]) == ["Reshape"]
    assert fixed(lambda a: [mx.broadcast_to(a[:1], (2, 2))]) == ["Broadcast"]
    assert fixed(lambda a: [a * a + 1, mx.sum(a, axis=1)]) == []


def test_an_explicit_refusal_is_unsupported_not_a_finding() -> None:
    @mx.custom_function
    def f(x: Any, i: Any) -> Any:
        return x * i

    @f.vjp
    def f_vjp(primals: Any, cotangent: Any, output: Any) -> Any:
        raise ValueError("[gather] Cannot calculate VJP with respect to indices.")

    result = check(lambda x: f(x, x), [Arg((2,))], checks=["jvp", "vjp"], points=1)
    assert result.ok and "vjp" in result.refused and "indices" in result.refused["vjp"]


def test_special_values_kernels_hold_no_random_draw_of_another_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Beside each captured special value, an untraced size-1 argument (a const one, as
    # shrinking leaves them) is passed in: captured, each draw would be a kernel of its own.
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where MLX builds its CPU kernels
    inputs = [Arg((3,)), Arg((3,)), Arg((), const=True)]

    def kernels(seed: int) -> set[str]:
        fn = lambda x, w, y: x * w + y  # noqa: E731
        result = check(fn, inputs, checks=["specials"], seed=seed, points=1)
        assert result.ok and result.ran["specials"] > 0, result.report()
        return {p.name for p in tmp_path.rglob("lib*.so")}

    first = kernels(0)
    assert first and kernels(1) == first
