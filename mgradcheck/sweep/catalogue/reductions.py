"""Reductions and scans, over every axis, one axis and a subset of axes, with and without keepdims."""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.sweep.catalogue.case import F32, Case, M, arr


def _reductions() -> Iterable[Case]:
    x = arr(2, 3, 4)
    for op in ("sum", "mean", "prod", "max", "min", "logsumexp", "var", "std", "median"):
        yield Case(op, op, "reduce", f"lambda x: mx.{op}(x)", (x,))
        yield Case(f"{op}-axis", op, "reduce", f"lambda x: mx.{op}(x, axis=1)", (x,))
        yield Case(
            f"{op}-axes-keepdims",
            op,
            "reduce",
            f"lambda x: mx.{op}(x, axis=(0, 2), keepdims=True)",
            (x,),
        )
    yield Case("sum-last-axis", "sum", "reduce", "lambda x: mx.sum(x, axis=-1)", (x,))
    yield Case("var-ddof", "var", "reduce", "lambda x: mx.var(x, axis=1, ddof=1)", (x,))
    yield Case("std-ddof", "std", "reduce", "lambda x: mx.std(x, axis=(0, 2), ddof=1)", (x,))
    yield Case(
        "logsumexp-keepdims",
        "logsumexp",
        "reduce",
        "lambda x: mx.logsumexp(x, axis=-1, keepdims=True)",
        (x,),
    )
    yield Case("minmax", "minmax", "reduce", "lambda x: mx.minmax(x, axis=1)", (x,))
    yield Case("softmax", "softmax", "reduce", "lambda x: mx.softmax(x, axis=-1)", (x,))
    yield Case("softmax-axis0", "softmax", "reduce", "lambda x: mx.softmax(x, axis=0)", (x,))
    yield Case(
        "softmax-precise",
        "softmax",
        "reduce",
        "lambda x: mx.softmax(x, axis=(1, 2), precise=True)",
        (x,),
    )
    yield Case("norm", "norm", "norm", "lambda x: mx.linalg.norm(x)", (M,))
    yield Case("norm-axis", "norm", "norm", "lambda x: mx.linalg.norm(x, axis=-1)", (M,))
    for name, ord_, shape in (
        ("ord1", "1", (4,)), ("ord3", "3.0", (4,)), ("ord-inf", "float('inf')", (4,)),
        ("fro", "'fro'", (3, 3)), ("nuc", "'nuc'", (3, 3)), ("ord2-matrix", "2", (3, 3)),
        ("ord1-matrix", "1", (3, 3)), ("ord-inf-matrix", "float('inf')", (3, 3)),
    ):  # fmt: skip
        yield Case(
            f"norm-{name}",
            "norm",
            "norm",
            f"lambda x: mx.linalg.norm(x, ord={ord_}, keepdims=True)",
            (arr(*shape),),
            dtypes=F32,
        )
    yield Case(
        "matrix-norm",
        "norm",
        "norm",
        "lambda x: mx.matrix_norm(x, ord='fro', axis=(1, 2))",
        (arr(2, 3, 3),),
        dtypes=F32,
    )
    yield Case("trace", "trace", "reduce", "lambda x: mx.trace(x)", (arr(3, 3),))
    yield Case(
        "trace-offset",
        "trace",
        "reduce",
        "lambda x: mx.trace(x, offset=1, axis1=1, axis2=2)",
        (arr(2, 3, 4),),
    )
    yield Case("diff", "diff", "reduce", "lambda x: mx.diff(x, axis=1)", (arr(2, 5),))
    yield Case("diff-n2", "diff", "reduce", "lambda x: mx.diff(x, n=2)", (arr(2, 5),))


def _scans() -> Iterable[Case]:
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
    yield Case(
        "cumulative-sum",
        "cumsum",
        "alias",
        "lambda x: mx.cumulative_sum(x, axis=1)",
        (arr(2, 5),),
        dtypes=F32,
    )
    yield Case(
        "cumulative-prod",
        "cumprod",
        "alias",
        "lambda x: mx.cumulative_prod(x, axis=0)",
        (arr(3, 2),),
        dtypes=F32,
    )


def cases() -> Iterable[Case]:
    yield from _reductions()
    yield from _scans()
