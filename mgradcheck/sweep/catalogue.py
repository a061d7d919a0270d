"""The operations the sweep differentiates: one :class:`Case` per function and input layout.

Each case is a declarative gradcheck spec (docs/gradcheck.md) without its
dtype. Ranges keep points away from poles and domain edges; kinks and jumps
that remain are the checker's business, not the catalogue's. Binary ops also
appear with a Python-scalar constant on either side, since a constant operand
takes a different path through jvp/vjp (the bug class of ml-explore/mlx#3627).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

DTYPES = ("float32", "float16", "bfloat16")
Input = dict[str, Any]


@dataclass(frozen=True)
class Case:
    id: str  # unique, kebab-case
    op: str  # findings are grouped by this
    family: str
    fn: str
    inputs: tuple[Input, ...]
    dtypes: tuple[str, ...] | None = None  # None: every dtype swept
    checks: tuple[str, ...] | None = None  # None: every check
    notes: str = field(default="", compare=False)

    def spec(self, dtype: str, seed: int = 0, points: int = 2) -> dict[str, Any]:
        """The gradcheck block for one dtype."""
        spec: dict[str, Any] = {
            "fn": self.fn,
            "inputs": [dict(i) for i in self.inputs],
            "dtypes": [dtype],
            "seed": seed,
            "points": points,
        }
        if self.checks is not None:
            spec["checks"] = list(self.checks)
        return spec


def arr(*shape: int, lo: float = -2.0, hi: float = 2.0, **extra: Any) -> Input:
    return {"shape": list(shape), "range": [lo, hi], **extra}


def ints(*shape: int, lo: int = 0, hi: int = 3, dtype: str = "int32") -> Input:
    return {"shape": list(shape), "range": [lo, hi], "dtype": dtype}


def mask(*shape: int) -> Input:
    return {"shape": list(shape), "dtype": "bool"}


def literal(value: Any, dtype: str) -> Input:
    return {"value": value, "dtype": dtype}


M = arr(2, 3)
POS = arr(2, 3, lo=0.3, hi=2.0)
UNIT = arr(2, 3, lo=-0.9, hi=0.9)

UNARY: list[tuple[str, Input]] = [
    ("abs", M), ("negative", M), ("sign", M), ("square", M), ("sqrt", POS), ("rsqrt", POS),
    ("reciprocal", POS), ("exp", M), ("expm1", M), ("log", POS), ("log1p", arr(2, 3, lo=-0.5)),
    ("log2", POS), ("log10", POS), ("sin", M), ("cos", M), ("tan", arr(2, 3, lo=-1.2, hi=1.2)),
    ("arcsin", UNIT), ("arccos", UNIT), ("arctan", M), ("sinh", M), ("cosh", M), ("tanh", M),
    ("arcsinh", M), ("arccosh", arr(2, 3, lo=1.2, hi=3.0)), ("arctanh", UNIT), ("sigmoid", M),
    ("erf", M), ("erfinv", UNIT), ("floor", M), ("ceil", M), ("round", M), ("degrees", M),
    ("radians", M),
]  # fmt: skip

BINARY: list[tuple[str, Input, Input]] = [
    ("add", M, M), ("subtract", M, M), ("multiply", M, M), ("divide", M, POS),
    ("maximum", M, M), ("minimum", M, M), ("power", POS, M), ("arctan2", M, M),
    ("logaddexp", M, M), ("remainder", POS, POS), ("floor_divide", POS, POS),
]  # fmt: skip

CONSTANT = 1.5  # a Python scalar on one side of a binary op


def _elementwise() -> Iterable[Case]:
    for op, x in UNARY:
        yield Case(op, op, "unary", f"lambda x: mx.{op}(x)", (x,))
    for op, a, b in BINARY:
        yield Case(op, op, "binary", f"lambda a, b: mx.{op}(a, b)", (a, b))
        yield Case(f"{op}-const-left", op, "binary", f"lambda b: mx.{op}({CONSTANT}, b)", (b,))
        yield Case(f"{op}-const-right", op, "binary", f"lambda a: mx.{op}(a, {CONSTANT})", (a,))
    yield Case(
        "multiply-broadcast", "multiply", "binary", "lambda a, b: a * b", (arr(2, 3), arr(1, 3))
    )
    yield Case("add-broadcast", "add", "binary", "lambda a, b: a + b", (arr(2, 1), arr(3)))
    yield Case(
        "divide-broadcast", "divide", "binary", "lambda a, b: a / b", (arr(3), arr(2, 1, lo=0.5))
    )


def _where() -> Iterable[Case]:
    yield Case("where", "where", "where", "lambda c, x, y: mx.where(c, x, y)", (mask(2, 3), M, M))
    yield Case(
        "where-traced-cond", "where", "where", "lambda x, y: mx.where(x > y, x * y, x - y)", (M, M)
    )
    yield Case(
        "where-const-true",
        "where",
        "where",
        "lambda t: mx.where(t < -1.0, 999.0, t * t)",
        (arr(4),),
    )
    yield Case(
        "where-const-false", "where", "where", "lambda t: mx.where(t < 0.5, t * t, -7.0)", (arr(4),)
    )
    yield Case(
        "where-broadcast",
        "where",
        "where",
        "lambda c, x, y: mx.where(c, x, y)",
        (mask(2, 1), arr(3), arr(2, 3)),
    )
    yield Case(
        "where-mask-const",
        "where",
        "where",
        "lambda c, x: mx.where(c, mx.sin(x), x * x)",
        (mask(4), arr(4)),
    )
    yield Case(
        "compare-scale",
        "less",
        "where",
        "lambda a, b: (a < b).astype(a.dtype) * a + (a >= b) * b",
        (M, M),
    )
    yield Case("clip", "clip", "where", "lambda x: mx.clip(x, -1.0, 1.0)", (M,))
    yield Case(
        "clip-arrays",
        "clip",
        "where",
        "lambda x, lo, hi: mx.clip(x, lo, hi)",
        (M, arr(2, 3, hi=-0.5), arr(2, 3, lo=0.5)),
    )


def _reductions() -> Iterable[Case]:
    x = arr(2, 3, 4)
    for op in ("sum", "mean", "prod", "max", "min", "logsumexp", "var", "std"):
        yield Case(op, op, "reduce", f"lambda x: mx.{op}(x)", (x,))
        yield Case(f"{op}-axis", op, "reduce", f"lambda x: mx.{op}(x, axis=1)", (x,))
        yield Case(
            f"{op}-axes-keepdims",
            op,
            "reduce",
            f"lambda x: mx.{op}(x, axis=(0, 2), keepdims=True)",
            (x,),
        )
    yield Case("softmax", "softmax", "reduce", "lambda x: mx.softmax(x, axis=-1)", (x,))
    yield Case("softmax-axis0", "softmax", "reduce", "lambda x: mx.softmax(x, axis=0)", (x,))
    yield Case("norm", "norm", "reduce", "lambda x: mx.linalg.norm(x)", (M,))
    yield Case("norm-axis", "norm", "reduce", "lambda x: mx.linalg.norm(x, axis=-1)", (M,))
    for op in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
        yield Case(op, op, "scan", f"lambda x: mx.{op}(x, axis=1)", (arr(2, 5),))
        yield Case(
            f"{op}-reverse", op, "scan", f"lambda x: mx.{op}(x, axis=1, reverse=True)", (arr(2, 5),)
        )
        if op in ("cumsum", "cumprod"):  # the others start an exclusive scan at -inf or inf
            yield Case(
                f"{op}-exclusive",
                op,
                "scan",
                f"lambda x: mx.{op}(x, axis=0, inclusive=False)",
                (arr(3, 2),),
            )


def _shapes() -> Iterable[Case]:
    x = arr(2, 3, 4)
    for name, body in (
        ("reshape", "mx.reshape(x, (4, 6))"), ("transpose", "mx.transpose(x, (2, 0, 1))"),
        ("swapaxes", "mx.swapaxes(x, 0, 2)"), ("moveaxis", "mx.moveaxis(x, 0, -1)"),
        ("expand-dims", "mx.expand_dims(x, 1)"), ("squeeze", "mx.squeeze(x[:1], 0)"),
        ("flatten", "mx.flatten(x, 1)"), ("broadcast-to", "mx.broadcast_to(x[:, :1], (2, 3, 4))"),
        ("repeat", "mx.repeat(x, 2, axis=1)"), ("tile", "mx.tile(x, (1, 2, 1))"),
        ("pad", "mx.pad(x, [(0, 0), (1, 2), (0, 1)])"), ("pad-value", "mx.pad(x, 1, constant_values=3.0)"),
        ("pad-edge", "mx.pad(x, [(1, 1), (0, 0), (2, 0)], mode='edge')"),
        ("flip", "x[::-1, :, ::-2]"), ("diagonal", "mx.diagonal(x, axis1=1, axis2=2)"),
        ("roll", "mx.roll(x, 2, axis=2)"), ("sort", "mx.sort(x, axis=-1)"),
        ("topk", "mx.topk(x, 2, axis=-1)"),
    ):  # fmt: skip
        op = (
            name.split("-")[0].replace("expand", "expand_dims").replace("broadcast", "broadcast_to")
        )
        yield Case(name, op, "shape", f"lambda x: {body}", (x,))
    yield Case(
        "concatenate",
        "concatenate",
        "shape",
        "lambda a, b: mx.concatenate([a, b], axis=1)",
        (M, arr(2, 2)),
    )
    yield Case(
        "concatenate-const",
        "concatenate",
        "shape",
        "lambda a: mx.concatenate([mx.ones((2, 1)), a, a * 2.0], axis=1)",
        (M,),
    )
    yield Case("stack", "stack", "shape", "lambda a, b: mx.stack([a, b], axis=0)", (M, M))
    yield Case("split", "split", "multi-output", "lambda x: mx.split(x, 3, axis=1)", (arr(2, 6),))
    yield Case(
        "split-indices",
        "split",
        "multi-output",
        "lambda x: mx.split(x, [1, 4], axis=1)",
        (arr(2, 6),),
    )
    yield Case(
        "split-mix",
        "split",
        "multi-output",
        "lambda x, y: tuple(p * y for p in mx.split(x, 2))",
        (arr(4, 3), arr(3)),
    )


def _indexing() -> Iterable[Case]:
    x = arr(4, 3)
    idx = literal([2, 0, 2], "int32")
    col = literal([[1], [0], [2], [1]], "int32")
    read = (
        ("slice", "lambda x: x[1:, ::2]", (x,)),
        ("index-int", "lambda x: x[2]", (x,)),
        ("index-array", "lambda x, i: x[i]", (x, idx)),
        ("take", "lambda x, i: mx.take(x, i, axis=0)", (x, idx)),
        ("take-flat", "lambda x, i: mx.take(x, i)", (x, idx)),
        ("take-along-axis", "lambda x, i: mx.take_along_axis(x, i, axis=1)", (x, col)),
        ("index-newaxis", "lambda x: x[None, ..., 1:]", (x,)),
        ("slice-dynamic", "lambda x: mx.slice(x, mx.array([1, 0]), (0, 1), (2, 2))", (x,)),
    )
    for name, fn, inputs in read:
        yield Case(name, name.replace("-", "_"), "index-read", fn, inputs)
    y = arr(2, 3)
    write: tuple[tuple[str, str, str, tuple[Input, ...]], ...] = (
        ("setitem-slice", "slice_assign", "lambda x, y: setitem(x, slice(1, 3), y)", (x, y)),
        ("setitem-slice-const", "slice_assign", "lambda x: setitem(x, slice(0, 2), 0.5)", (x,)),
        (
            "setitem-step",
            "slice_assign",
            "lambda x, y: setitem(x, (slice(None, None, 2), slice(1, None)), y[:, :2])",
            (x, y),
        ),
        ("setitem-mask", "mask_assign", "lambda x, m, y: setitem(x, m, y)", (x, mask(4, 3), arr())),
        ("setitem-mask-scalar", "mask_assign", "lambda x: setitem(x, x > 0.5, 2.0)", (x,)),
        (
            "slice-update",
            "slice_update",
            "lambda x, y: mx.slice_update(x, y, mx.array([1, 0]), (0, 1))",
            (x, y),
        ),
        (
            "put-along-axis",
            "put_along_axis",
            "lambda x, i, y: mx.put_along_axis(x, i, y, axis=1)",
            (x, col, arr(4, 1)),
        ),
        ("at-add", "scatter_add", "lambda x, i, y: x.at[i].add(y)", (x, idx, arr(3, 3))),
        ("at-subtract", "scatter_add", "lambda x, i, y: x.at[i].subtract(y)", (x, idx, arr(3, 3))),
        ("at-multiply", "scatter_prod", "lambda x, i, y: x.at[i].multiply(y)", (x, idx, arr(3, 3))),
        (
            "at-divide",
            "scatter_prod",
            "lambda x, i, y: x.at[i].divide(y)",
            (x, idx, arr(3, 3, lo=0.5)),
        ),
        ("at-maximum", "scatter_max", "lambda x, i, y: x.at[i].maximum(y)", (x, idx, arr(3, 3))),
        ("at-minimum", "scatter_min", "lambda x, i, y: x.at[i].minimum(y)", (x, idx, arr(3, 3))),
        ("at-add-const", "scatter_add", "lambda x, i: x.at[i].add(2.0)", (x, idx)),
        (
            "at-add-into-const",
            "scatter_add",
            "lambda y, i: mx.zeros((4, 3)).at[i].add(y)",
            (arr(3, 3), idx),
        ),
    )
    for name, op, fn, args in write:
        yield Case(name, op, "index-write", fn, args)


def _multi_output() -> Iterable[Case]:
    yield Case("divmod", "divmod", "multi-output", "lambda a, b: mx.divmod(a, b)", (POS, POS))
    yield Case("divmod-const", "divmod", "multi-output", "lambda a: mx.divmod(a, 0.7)", (POS,))
    yield Case(
        "sort-argsort",
        "argsort",
        "multi-output",
        "lambda x: (mx.sort(x), mx.argsort(x))",
        (arr(5),),
    )
    yield Case(
        "max-argmax",
        "argmax",
        "multi-output",
        "lambda x: (x * mx.argmax(x, axis=1, keepdims=True), mx.argmax(x))",
        (M,),
    )


def _power_and_bits() -> Iterable[Case]:
    for name, fn, inputs in (
        ("power-int-exponent", "lambda x: mx.power(x, 3.0)", (M,)),
        ("power-square", "lambda x: x ** 2", (M,)),
        ("power-zero-exponent", "lambda x, y: mx.power(x, y * 0.0)", (POS, M)),
        ("power-base-const", "lambda y: mx.power(2.0, y)", (M,)),
        ("power-half", "lambda x: x ** 0.5", (POS,)),
    ):
        yield Case(name, "power", "power", fn, inputs)
    q = "(x * 8.0).astype(mx.int32)"
    for name, body in (
        ("and", f"x * (({q} & 5).astype(x.dtype))"),
        ("or-xor", f"x * x * ((({q} | 3) ^ ({q} >> 1)).astype(x.dtype))"),
        ("shift", f"mx.sin(x) + (({q} << 1) & 12).astype(x.dtype) * x"),
        ("mask-logic", "mx.where(((x > -1.0) & (x < 1.0)) | (x > 1.8), x * x, 2.0 * x)"),
    ):
        yield Case(f"bitwise-{name}", "bitwise", "bitwise", f"lambda x: {body}", (arr(6),))
    both = "((x * 4.0).astype(mx.int32) & (y * 4.0).astype(mx.int32)).astype(x.dtype)"
    yield Case(
        "bitwise-two-traced",
        "bitwise",
        "bitwise",
        f"lambda x, y: x * {both} + y * y",
        (arr(6), arr(6)),
    )


def _linalg() -> Iterable[Case]:
    f32 = ("float32",)
    yield Case("matmul", "matmul", "linalg", "lambda a, b: a @ b", (arr(2, 3), arr(3, 4)))
    yield Case(
        "matmul-batched", "matmul", "linalg", "lambda a, b: a @ b", (arr(2, 2, 3), arr(3, 2))
    )
    yield Case(
        "matmul-vector", "matmul", "linalg", "lambda a, b: mx.matmul(a, b)", (arr(3), arr(3, 2))
    )
    yield Case("matmul-const", "matmul", "linalg", "lambda b: mx.ones((2, 3)) @ b", (arr(3, 4),))
    yield Case(
        "addmm",
        "addmm",
        "linalg",
        "lambda c, a, b: mx.addmm(c, a, b)",
        (arr(2, 4), arr(2, 3), arr(3, 4)),
    )
    yield Case(
        "addmm-scaled",
        "addmm",
        "linalg",
        "lambda c, a, b: mx.addmm(c, a, b, alpha=0.5, beta=2.0)",
        (arr(2, 4), arr(2, 3), arr(3, 4)),
    )
    yield Case(
        "addmm-broadcast",
        "addmm",
        "linalg",
        "lambda c, a, b: mx.addmm(c, a, b)",
        (arr(4), arr(2, 3), arr(3, 4)),
    )
    yield Case("inner", "inner", "linalg", "lambda a, b: mx.inner(a, b)", (arr(2, 3), arr(3)))
    yield Case("outer", "outer", "linalg", "lambda a, b: mx.outer(a, b)", (arr(3), arr(2)))
    yield Case(
        "tensordot",
        "tensordot",
        "linalg",
        "lambda a, b: mx.tensordot(a, b, axes=1)",
        (arr(2, 3), arr(3, 2)),
    )
    yield Case(
        "einsum",
        "einsum",
        "linalg",
        "lambda a, b: mx.einsum('ij,jk->ik', a, b)",
        (arr(2, 3), arr(3, 2)),
    )
    spd = "x @ x.T + 3.0 * mx.eye(3)"
    for name, body in (
        ("inv", f"mx.linalg.inv({spd})"), ("cholesky", f"mx.linalg.cholesky({spd})"),
        ("solve", f"mx.linalg.solve({spd}, x[:, :1])"), ("eigvalsh", f"mx.linalg.eigvalsh({spd})"),
    ):  # fmt: skip
        yield Case(name, name, "linalg", f"lambda x: {body}", (arr(3, 3),), dtypes=f32)


def _conv() -> Iterable[Case]:
    yield Case(
        "conv1d", "conv1d", "conv", "lambda x, w: mx.conv1d(x, w)", (arr(1, 6, 2), arr(3, 3, 2))
    )
    yield Case(
        "conv1d-stride-pad",
        "conv1d",
        "conv",
        "lambda x, w: mx.conv1d(x, w, stride=2, padding=1)",
        (arr(1, 7, 2), arr(2, 3, 2)),
    )
    yield Case(
        "conv1d-dilation",
        "conv1d",
        "conv",
        "lambda x, w: mx.conv1d(x, w, dilation=2)",
        (arr(1, 7, 1), arr(2, 2, 1)),
    )
    yield Case(
        "conv2d",
        "conv2d",
        "conv",
        "lambda x, w: mx.conv2d(x, w, padding=1)",
        (arr(1, 4, 4, 2), arr(2, 3, 3, 2)),
    )
    yield Case(
        "conv2d-groups",
        "conv2d",
        "conv",
        "lambda x, w: mx.conv2d(x, w, groups=2)",
        (arr(1, 4, 4, 2), arr(2, 2, 2, 1)),
    )
    yield Case(
        "conv-transpose1d",
        "conv_transpose1d",
        "conv",
        "lambda x, w: mx.conv_transpose1d(x, w, stride=2)",
        (arr(1, 4, 2), arr(3, 3, 2)),
    )
    yield Case(
        "conv1d-const-weight",
        "conv1d",
        "conv",
        "lambda x: mx.conv1d(x, mx.ones((1, 3, 2)) * 0.5)",
        (arr(1, 6, 2),),
    )


def catalogue() -> list[Case]:
    """Every case, in a stable order (ids are unique)."""
    parts = (
        _elementwise,
        _where,
        _reductions,
        _shapes,
        _indexing,
        _multi_output,
        _power_and_bits,
        _linalg,
        _conv,
    )
    cases = [case for part in parts for case in part()]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise AssertionError(f"duplicate catalogue id {case.id}")
        seen.add(case.id)
    return cases


def select(cases: Sequence[Case], patterns: Sequence[str] = ()) -> list[Case]:
    """The cases whose id, op or family matches any of the shell-style ``patterns`` (all when none)."""
    if not patterns:
        return list(cases)
    return [
        c for c in cases
        if any(fnmatch.fnmatchcase(name, p) for p in patterns for name in (c.id, c.op, c.family))
    ]  # fmt: skip


def tasks(cases: Sequence[Case], dtypes: Sequence[str] = DTYPES) -> list[tuple[Case, str]]:
    """Every (case, dtype) to run: a case limited to some dtypes runs only those."""
    return [(c, d) for c in cases for d in dtypes if c.dtypes is None or d in c.dtypes]
