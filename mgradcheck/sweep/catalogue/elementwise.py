"""Elementwise cases: unary and binary operations, their aliases, where, power and bitwise masks.

Binary ops also appear with a Python-scalar constant on either side, since a
constant operand takes a different path through jvp and vjp (the bug class of
ml-explore/mlx#3627).
"""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.sweep.catalogue.case import F32, POS, UNIT, Case, Input, M, arr, mask

UNARY: list[tuple[str, Input]] = [
    ("abs", M), ("negative", M), ("sign", M), ("square", M), ("sqrt", POS), ("rsqrt", POS),
    ("reciprocal", POS), ("exp", M), ("expm1", M), ("log", POS), ("log1p", arr(2, 3, lo=-0.5)),
    ("log2", POS), ("log10", POS), ("sin", M), ("cos", M), ("tan", arr(2, 3, lo=-1.2, hi=1.2)),
    ("arcsin", UNIT), ("arccos", UNIT), ("arctan", M), ("sinh", M), ("cosh", M), ("tanh", M),
    ("arcsinh", M), ("arccosh", arr(2, 3, lo=1.2, hi=3.0)), ("arctanh", UNIT), ("sigmoid", M),
    ("erf", M), ("erfinv", UNIT), ("floor", M), ("ceil", M), ("round", M), ("degrees", M),
    ("radians", M), ("trunc", M), ("positive", M),
]  # fmt: skip

BINARY: list[tuple[str, Input, Input]] = [
    ("add", M, M), ("subtract", M, M), ("multiply", M, M), ("divide", M, POS),
    ("maximum", M, M), ("minimum", M, M), ("power", POS, M), ("arctan2", M, M),
    ("logaddexp", M, M), ("remainder", POS, POS), ("floor_divide", POS, POS),
]  # fmt: skip

# Other names for the same functions: each is called once, in float32.
ALIASES: list[tuple[str, str, tuple[Input, ...]]] = [
    ("acos", "lambda x: mx.acos(x)", (UNIT,)), ("asin", "lambda x: mx.asin(x)", (UNIT,)),
    ("atan", "lambda x: mx.atan(x)", (M,)), ("acosh", "lambda x: mx.acosh(x)", (arr(2, 3, lo=1.2, hi=3.0),)),
    ("asinh", "lambda x: mx.asinh(x)", (M,)), ("atanh", "lambda x: mx.atanh(x)", (UNIT,)),
    ("atan2", "lambda a, b: mx.atan2(a, b)", (M, M)), ("pow", "lambda a, b: mx.pow(a, b)", (POS, M)),
    ("conjugate", "lambda x: mx.conjugate(x) * x", (M,)), ("conj", "lambda x: mx.conj(x) + x", (M,)),
]  # fmt: skip
# The function each alias names (a finding of an alias is a finding of that function).
ALIAS_OF = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh",
            "asinh": "arcsinh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power",
            "conj": "conjugate"}  # fmt: skip

CONSTANT = 1.5  # a Python scalar on one side of a binary op


def _elementwise() -> Iterable[Case]:
    for op, x in UNARY:
        yield Case(op, op, "unary", f"lambda x: mx.{op}(x)", (x,))
    for op, a, b in BINARY:
        yield Case(op, op, "binary", f"lambda a, b: mx.{op}(a, b)", (a, b))
        yield Case(f"{op}-const-left", op, "binary", f"lambda b: mx.{op}({CONSTANT}, b)", (b,))
        yield Case(f"{op}-const-right", op, "binary", f"lambda a: mx.{op}(a, {CONSTANT})", (a,))
    for name, fn, inputs in ALIASES:
        yield Case(f"alias-{name}", name, "alias", fn, inputs, dtypes=F32)
    yield Case(
        "multiply-broadcast", "multiply", "binary", "lambda a, b: a * b", (arr(2, 3), arr(1, 3))
    )
    yield Case("add-broadcast", "add", "binary", "lambda a, b: a + b", (arr(2, 1), arr(3)))
    yield Case(
        "divide-broadcast", "divide", "binary", "lambda a, b: a / b", (arr(3), arr(2, 1, lo=0.5))
    )
    yield Case("divmod", "divmod", "multi-output", "lambda a, b: mx.divmod(a, b)", (POS, POS))
    yield Case("divmod-const", "divmod", "multi-output", "lambda a: mx.divmod(a, 0.7)", (POS,))


def _complex_and_casts() -> Iterable[Case]:
    """Operations that are the identity (or zero) on real inputs, and casts between floats."""
    yield Case("real", "real", "complex", "lambda x: mx.real(x * (1.0 + 2.0j))", (M,), dtypes=F32)
    yield Case("imag", "imag", "complex", "lambda x: mx.imag(x * (1.0 + 2.0j))", (M,), dtypes=F32)
    yield Case(
        "conjugate-complex",
        "conjugate",
        "complex",
        "lambda a, b: mx.imag(mx.conjugate(a + 1j * b) * (a - 2j * b))",
        (M, M),
        dtypes=F32,
    )
    # Up to float32 and back: exact in every swept dtype, so finite differences see x * x.
    yield Case(
        "astype",
        "astype",
        "cast",
        "lambda x: mx.astype(mx.astype(x, mx.float32), x.dtype) * x",
        (M,),
    )
    yield Case(
        "nan-to-num", "nan_to_num", "unary", "lambda x: mx.nan_to_num(x * 3.0, posinf=9.0)", (M,)
    )
    yield Case(
        "nan-to-num-log",
        "nan_to_num",
        "unary",
        "lambda x: mx.nan_to_num(mx.log(x), nan=-1.0)",
        (arr(2, 3, lo=0.2),),
    )
    yield Case(
        "depends",
        "depends",
        "graph",
        "lambda x, y: mx.depends([mx.sin(x)], [y * y])[0] + y",
        (M, M),
        dtypes=F32,
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
    yield Case("clip-one-sided", "clip", "where", "lambda x: mx.clip(x, None, 0.5)", (M,))
    yield Case(
        "clip-arrays",
        "clip",
        "where",
        "lambda x, lo, hi: mx.clip(x, lo, hi)",
        (M, arr(2, 3, hi=-0.5), arr(2, 3, lo=0.5)),
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


def cases() -> Iterable[Case]:
    yield from _elementwise()
    yield from _complex_and_casts()
    yield from _where()
    yield from _power_and_bits()
