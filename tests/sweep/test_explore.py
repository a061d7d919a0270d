"""Calls drawn from MLX's own signatures: their description, their draw, and the integers check."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from functools import cache
from typing import Any

import pytest

from mgradcheck.run.child_process import ChildCommand
from mgradcheck.sweep.case_runs import CaseResult, Executor, Status, Task
from mgradcheck.sweep.catalogue import Case, catalogue
from mgradcheck.sweep.explore.domains import DOMAINS, Domain
from mgradcheck.sweep.explore.generate import draw, example_ranges, explore
from mgradcheck.sweep.explore.signatures import (
    EITHER,
    KEYWORD,
    POSITIONAL,
    VAR,
    describe,
    parse,
    target_signatures,
)
from mgradcheck.sweep.findings import group
from mgradcheck.sweep.known import causes
from mgradcheck.sweep.pipeline import SweepOptions, plan
from tests.conftest import environment

pytestmark = pytest.mark.mlx


@cache
def signatures() -> dict[str, list[str]]:
    """The installed MLX's signatures, as its own interpreter (a real child) writes them."""
    pytest.importorskip("mlx.core")
    return target_signatures(ChildCommand(sys.executable), environment())


def test_a_new_keyword_or_operation_is_described_without_anyone_listing_it() -> None:
    line = (
        "conv9d(input: array, weight: array, /, stride: int | tuple[int, int] = 1, "
        "mode: Literal['a, b', 'c'] = 'a, b', *, new_flag: bool = False, "
        "stream: StreamOrDevice = None) -> array"
    )
    op = parse("mx.conv9d", line)
    assert op is not None and op.returns == "array"
    assert [(p.name, p.kind, p.default) for p in op.params] == [
        ("input", POSITIONAL, None), ("weight", POSITIONAL, None), ("stride", EITHER, "1"),
        ("mode", EITHER, "'a, b'"), ("new_flag", KEYWORD, "False"), ("stream", KEYWORD, "None"),
    ]  # fmt: skip
    assert op.params[0].is_array and not op.params[2].is_array
    assert parse("mx.exporter", "exporter(mx.array(1))") is None  # a docstring's example


def test_the_installed_mlx_describes_its_operations_through_a_child() -> None:
    operations, unparsed = describe(signatures())
    by_name = {op.name: op for op in operations}
    assert len(by_name) > 250 and not unparsed
    conv = by_name["mx.conv2d"]
    assert [p.name for p in conv.params] == [
        "input", "weight", "stride", "padding", "dilation", "groups", "stream",
    ]  # fmt: skip
    assert conv.param("input").kind == POSITIONAL and conv.param("groups").default == "1"  # type: ignore[union-attr]
    assert conv.param("stride").annotation == "int | tuple[int, int]"  # type: ignore[union-attr]
    assert by_name["fft.fft"].param("norm").default == "'backward'"  # type: ignore[union-attr]
    assert by_name["mx.einsum"].param("operands").kind == VAR  # type: ignore[union-attr]
    # An alias is described by the function it names.
    assert [p.name for p in by_name["mx.acos"].params] == ["a", "stream"]


def test_the_draw_is_seeded_and_skips_what_it_cannot_draw() -> None:
    sigs = signatures()
    first, again = (explore(sigs, 80, seed=7, examples=catalogue()) for _ in range(2))
    assert [(c.id, c.fn, c.inputs) for c in first.cases] == [
        (c.id, c.fn, c.inputs) for c in again.cases
    ]
    other = explore(sigs, 80, seed=8, examples=catalogue())
    assert [c.fn for c in other.cases] != [c.fn for c in first.cases]
    assert len(first.cases) == 80 and len({c.op for c in first.cases}) > 60
    assert {c.family for c in first.cases} == {
        "generated", "generated-complex", "generated-integer",
    }  # fmt: skip
    assert {c.dtypes for c in first.cases if c.family == "generated"} >= {("float64",)}
    assert first.skipped["mx.zeros"].startswith("excluded: a constructor")
    assert first.skipped["fast.rope"] == "no domain for its parameter 'dims'"
    # The catalogue's plain call of an operation says where it is smooth.
    ranges = example_ranges(catalogue())
    assert ranges["mx.log"] == [(0.3, 2.0)]
    (log,) = (op for op in describe(sigs)[0] if op.name == "mx.log")
    fn, inputs = draw(log, random.Random(0), "float", "float32", ranges)
    assert fn == "lambda a: mx.log(a)" and inputs[0]["range"] == [0.3, 2.0]


def test_told_no_count_every_operation_is_drawn_once_in_every_dtype_kind() -> None:
    """The default sweep's calls: one per operation and dtype kind it takes (float, complex,
    integer), where a weighted draw per call left kinds out; a count dealt in rounds."""
    sigs = signatures()
    every = explore(sigs, None, seed=5, examples=catalogue()).cases
    families: dict[str, list[str]] = {}
    for c in every:
        families.setdefault(c.op, []).append(c.family)
    for op in ("sin", "cumprod", "logcumsumexp", "matmul", "floor_divide"):
        assert sorted(families[op]) == ["generated", "generated-complex", "generated-integer"], op
    assert all(len(set(f)) == len(f) for f in families.values())  # no kind twice
    # a count of one round is every operation in one kind
    first = explore(sigs, len(families), seed=5, examples=catalogue()).cases
    assert len({c.op for c in first}) == len(first) > 150


def test_every_drawn_view_of_as_strided_stays_inside_its_array() -> None:
    """Its shape, strides and offset address memory unchecked: the default sweep of 0.32.4
    drew (3, 2) with strides (3, 1) over 6 elements, which read element 7 and crashed."""
    import ast
    import math

    (op,) = (o for o in describe(signatures())[0] if o.name == "mx.as_strided")
    for seed in range(60):
        fn, inputs = draw(op, random.Random(seed), "float", "float32", {})
        call = ast.parse(fn, mode="eval").body.body  # type: ignore[attr-defined]
        args = [ast.literal_eval(a) for a in call.args[1:]]
        args += [ast.literal_eval(k.value) for k in call.keywords]
        shape, strides, offset = [*args, 0][:3]
        size = math.prod(ast.literal_eval(str(inputs[0]["shape"])))
        assert offset + sum((n - 1) * st for n, st in zip(shape, strides, strict=True)) < size, fn


def test_a_drawn_standard_deviation_reduces_two_elements_or_more() -> None:
    """The default sweep of 0.32.4 drew mx.std over (1,): sqrt(0), whose derivative MLX gives
    as NaN where the function (identically 0) has 0: no bug, a point where sqrt has none."""
    (op,) = (o for o in describe(signatures())[0] if o.name == "mx.std")
    for seed in range(40):
        fn, inputs = draw(op, random.Random(seed), "float", "float32", {})
        shape = list(inputs[0]["shape"])  # type: ignore[call-overload]
        axis = fn.split("mx.std(a, ")[1].split(",")[0].split(")")[0]
        reduced = shape if axis == "None" else [shape[int(axis)]]
        assert all(n >= 2 for n in reduced), (fn, shape)


def test_order_statistics_are_drawn_with_tied_elements_in_every_real_call() -> None:
    """max-min-ties-jvp-vjp-disagree needs a tie in the point: drawn uniformly, none comes."""
    ops = {o.name: o for o in describe(signatures())[0]}
    for name, tied_params in (("mx.max", {"a"}), ("mx.maximum", {"a", "b"})):
        for seed in range(20):
            _, inputs = draw(ops[name], random.Random(seed), "float", "float32", {})
            assert len([s for s in inputs if s.get("ties")]) == len(tied_params), inputs
            _, inputs = draw(ops[name], random.Random(seed), "complex", "complex64", {})
            assert not any(spec.get("ties") for spec in inputs)  # ties in real calls only
    # at float32, whose points the adjoint check runs at
    calls = explore(signatures(), None, seed=0, dtypes=("bfloat16",)).cases
    tied = [c for c in calls if c.op in ("max", "sort") and c.family == "generated"]
    assert tied and all(c.dtypes == ("float32",) for c in tied), [c.id for c in tied]


def test_logcumsumexp_is_drawn_inclusive_where_its_values_are_finite() -> None:
    """Every exclusive logcumsumexp the default sweep drew was not checked: its first element
    is log(0), -inf; logcumsumexp-complex-vjp went unfound for it."""
    (op,) = (o for o in describe(signatures())[0] if o.name == "mx.logcumsumexp")
    for seed in range(40):
        fn, _ = draw(op, random.Random(seed), "complex", "complex64", {})
        call = fn.split("mx.logcumsumexp(")[1]
        assert "inclusive=False" not in call and not call.endswith(
            (", False, False))", ", True, False))")
        ), fn


@pytest.mark.parametrize("name", ["mx.matrix_norm", "linalg.norm"])
def test_a_drawn_norm_has_elements(name: str) -> None:
    """The default sweep of 0.32.4 drew mx.matrix_norm of a (0, 3) array, whose norm is 0,
    where a norm has no derivative (MLX's jvp is NaN there): no bug, a point to avoid."""
    (op,) = (o for o in describe(signatures())[0] if o.name == name)
    for seed in range(60):
        for kind, dtype in (("float", "float32"), ("complex", "complex64")):
            if kind not in DOMAINS.get(name, Domain()).kinds:
                continue
            _, inputs = draw(op, random.Random(seed), kind, dtype, {})
            assert all(n > 0 for n in inputs[0]["shape"]), (name, seed, inputs)  # type: ignore[attr-defined]


SAMPLE = (
    "conv1d", "conv2d", "conv_transpose1d", "matmul", "addmm", "inv", "solve", "fft", "rfft",
    "split", "take_along_axis", "where", "softmax", "cumsum", "sum", "pad", "einsum", "topk",
    "rms_norm", "layer_norm", "scaled_dot_product_attention", "tensordot", "arctan2", "sin",
    "transpose", "concatenate", "eigh", "norm", "take", "convolve",
)  # fmt: skip


def test_every_drawn_call_of_a_sample_of_operations_runs_on_real_mlx() -> None:
    """Drawn calls run in real children through gradcheck: none raises (an error), whatever
    it then finds; an operation declining a dtype is a refusal, not an error."""
    drawn = explore(signatures(), 900, seed=3, examples=catalogue()).cases
    cases = [c for c in drawn if c.op in SAMPLE]
    assert {c.op for c in cases} == set(SAMPLE)
    tasks = [Task.of(c, c.dtypes[0], points=1, checks=["jvp", "integers"]) for c in cases]  # type: ignore[index]
    results = Executor(ChildCommand(sys.executable), environment(), jobs=2).run(
        tasks, time.monotonic() + 600
    )
    errors = [f"{r.task.case.fn} {r.task.spec['inputs']}: {r.message}" for r in results
              if r.status in (Status.ERROR, Status.NOT_RUN)]  # fmt: skip
    assert not errors, "\n".join(errors)


def _integral(name: str, fn: str, *inputs: dict[str, Any]) -> Case:
    return Case(name, name, "generated-integer", fn, inputs, dtypes=("float32",), drawn=True)


def test_an_integer_or_bool_argument_has_a_zero_derivative_or_a_refusal() -> None:
    """In real children: MLX differentiates sin by an integer argument as if it were a float
    (a finding); floor's derivative is zero and take refuses its indices (neither is)."""
    pytest.importorskip("mlx.core")
    ints: dict[str, Any] = {"shape": [3], "dtype": "int32", "range": [1, 3]}
    cases = [
        _integral("sin-int", "lambda a: mx.sin(a)", ints),
        _integral("sum-bool", "lambda a: mx.sum(mx.where(a, 2.0, 1.0) * a)", {"shape": [4], "dtype": "bool"}),
        _integral("floor-int", "lambda a: mx.floor(a)", ints),
        _integral("take-indices", "lambda x, i: mx.take(x, i)", {"shape": [4]}, {**ints, "range": [0, 3]}),
    ]  # fmt: skip
    tasks = [Task.of(c, "float32", points=1) for c in cases]
    assert all("integers" in t.spec["checks"] for t in tasks)
    results = Executor(ChildCommand(sys.executable), environment(), jobs=1).run(
        tasks, time.monotonic() + 300
    )
    by_id = {r.task.case.id: r for r in results}
    sin = by_id["sin-int"]
    assert sin.status is Status.WRONG, sin.message
    assert {(f["kind"], f["check"]) for f in sin.findings} == {("wrong-value", "integers")}
    assert any("jvp by a (int32)" in f["paths"] for f in sin.findings)
    assert by_id["sum-bool"].status is Status.WRONG
    assert by_id["floor-int"].status is Status.PASS, by_id["floor-int"].findings
    take = by_id["take-indices"]
    assert take.status is Status.PASS and "indices" in take.refused["integers"], take.refused
    # A catalogue case never differentiates by its indices and masks.
    assert "integers" not in Case("c", "take", "indexing", "lambda x: x", ()).checks


def test_drawn_calls_run_at_their_own_dtype_and_keep_the_integers_check() -> None:
    f64 = Case("g64", "sin", "generated", "lambda a: mx.sin(a)", ({"shape": [2]},),
               dtypes=("float64",), drawn=True)  # fmt: skip
    ints = _integral("gint", "lambda a: mx.sin(a)", {"shape": [2], "dtype": "int8"})
    options = SweepOptions(dtypes=("float32", "float16"), transform_dtypes=())
    _, tasks = plan(options, [f64, ints])
    assert [(t.case.id, t.dtype) for t in tasks] == [("g64", "float64"), ("gint", "float32")]
    assert "integers" in tasks[1].spec["checks"] and "integers" not in tasks[0].spec["checks"]


@pytest.mark.parametrize(
    ("n", "seed", "ops", "said", "prefix"),
    [("6", "4", "generated*", "drew 6 calls of 6 operations from", "gen4-"),
     ("5", "2", "graph2-*", "and 5 graphs of several", "graph2-")],
)  # fmt: skip
def test_sweep_lists_the_calls_and_graphs_it_draws_from_the_target(
    n: str, seed: str, ops: str, said: str, prefix: str
) -> None:
    """``--ops`` selects the drawn calls, or the graphs, apart from each other."""
    pytest.importorskip("mlx.core")
    done = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "sweep", "--explore", n, "--seed", seed,
         "--ops", ops, "--list"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert said in done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == int(n) + 1 and all(line.startswith(prefix) for line in lines[: int(n)])


def test_a_float64_call_is_judged_at_the_accuracy_of_mlxs_float64_kernels() -> None:
    """MLX's float64 cos, sin and exp on the CPU are accurate to float32 only, and its FFTs
    compute in complex64: their correct derivatives, checked in real children, pass."""
    pytest.importorskip("mlx.core")
    cases = [
        Case(f"f64-{i}", "f64", "generated", fn, ({"shape": [2, 3]},), dtypes=("float64",), drawn=True)
        for i, fn in enumerate((
            "lambda a: mx.cos(a)", "lambda a: mx.exp(a)", "lambda a: mx.sin(a)",
            "lambda a: mx.fft.irfft2(a, axes=None, norm='ortho')",
        ))
    ]  # fmt: skip
    tasks = [Task.of(c, "float64", checks=["jvp", "vjp"]) for c in cases]
    results = Executor(ChildCommand(sys.executable), environment(), jobs=2).run(
        tasks, time.monotonic() + 300
    )
    assert [r.status for r in results] == [Status.PASS] * 4, [r.findings[:1] for r in results]


def test_non_zero_derivatives_by_integer_arguments_are_one_cause() -> None:
    """One mechanism (an integer input differentiated as a float, its derivative cast back) is
    one cause, whichever operations show it; a wrong shape stays its operation's own."""

    def result(op: str, kind: str) -> CaseResult:
        case = _integral(op, f"lambda a: mx.{op}(a)", {"shape": [2], "dtype": "int32"})
        found = {"kind": kind, "check": "integers", "paths": "vjp by a (int32)", "traced": ["a"],
                 "dtype": "float32", "point": 0, "detail": "observed [1.]", "inputs": "a=[1]"}  # fmt: skip
        return CaseResult(Task.of(case, "float32"), Status.WRONG, findings=[found])

    shown = [
        result("sin", "wrong-value"),
        result("abs", "wrong-value"),
        result("sum", "wrong-shape"),
    ]
    found = causes(group(shown), shown, [], "0.32.4", "cpu")
    assert [(c.key, c.ops) for c in found] == [
        ("integers: a derivative by an integer or bool argument is not zero", ["sin", "abs"]),
        ("sum: wrong-shape (integers)", ["sum"]),
    ]


PARTS = "lambda a_re, a_im: (lambda z: (mx.real(z), mx.imag(z)))(mx.{op}(a_re + 1j * a_im))"


def test_a_complex_call_is_judged_at_complex64s_precision() -> None:
    """MLX has no complex128: a call through complex64 is only as precise as float32, even
    with float64 parts, and its oracle is judged so. In real children, the correct vjps of
    arcsinh, cosh and arcsin at points a sweep drew pass; cumprod's, which is wrong for
    complex inputs on 0.32.4, is still found."""
    pytest.importorskip("mlx.core")
    part = {"shape": [1], "range": [-2.0, 2.0]}
    cases = [Case(op, op, "generated-complex", PARTS.format(op=op), (part, part), drawn=True,
                  dtypes=("float32",)) for op in ("arcsinh", "cosh", "arcsin")]  # fmt: skip
    cumprod = Case("cumprod", "cumprod", "generated-complex", PARTS.format(op="cumprod"),
                   ({"shape": [3]}, {"shape": [3]}), dtypes=("float32",), drawn=True)  # fmt: skip
    tasks = [Task.of(c, "float32", checks=["jvp", "vjp", "subsets"]) for c in [*cases, cumprod]]
    results = Executor(ChildCommand(sys.executable), environment(), jobs=2).run(
        tasks, time.monotonic() + 300
    )
    assert [r.status for r in results[:3]] == [Status.PASS] * 3, [r.findings[:1] for r in results]
    assert results[3].status is Status.WRONG
    assert {f["check"] for f in results[3].findings} == {"vjp"}
