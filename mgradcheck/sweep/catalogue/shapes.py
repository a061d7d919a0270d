"""Shape operations, indexing reads and writes, sorting and multi-output operations.

A case whose ``fn`` writes a shape into the graph (``reshape(x, (4, 6))``)
skips the shapeless check: replayed at another shape it computes what it was
told to, which is no bug.
"""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.sweep.catalogue.case import F32, Case, Input, M, arr, literal, mask

FIXED_SHAPE = ("shapeless",)


def _shapes() -> Iterable[Case]:
    x = arr(2, 3, 4)
    for name, op, body, skip in (
        ("reshape", "reshape", "mx.reshape(x, (4, 6))", FIXED_SHAPE),
        ("transpose", "transpose", "mx.transpose(x, (2, 0, 1))", ()),
        ("permute-dims", "transpose", "mx.permute_dims(x, (1, 2, 0))", ()),
        ("matrix-transpose", "transpose", "mx.matrix_transpose(x)", ()),
        ("swapaxes", "swapaxes", "mx.swapaxes(x, 0, 2)", ()),
        ("moveaxis", "moveaxis", "mx.moveaxis(x, 0, -1)", ()),
        ("expand-dims", "expand_dims", "mx.expand_dims(x, 1)", ()),
        ("squeeze", "squeeze", "mx.squeeze(x[:1], 0)", ()),
        ("flatten", "flatten", "mx.flatten(x, 1)", ()),
        ("unflatten", "unflatten", "mx.unflatten(x, 2, (2, 2))", FIXED_SHAPE),
        ("broadcast-to", "broadcast_to", "mx.broadcast_to(x[:, :1], (2, 3, 4))", FIXED_SHAPE),
        ("repeat", "repeat", "mx.repeat(x, 2, axis=1)", ()),
        ("tile", "tile", "mx.tile(x, (1, 2, 1))", ()),
        ("pad", "pad", "mx.pad(x, [(0, 0), (1, 2), (0, 1)])", ()),
        ("pad-value", "pad", "mx.pad(x, 1, constant_values=3.0)", ()),
        ("pad-edge", "pad", "mx.pad(x, [(1, 1), (0, 0), (2, 0)], mode='edge')", ()),
        ("pad-symmetric", "pad", "mx.pad(x, [(0, 0), (1, 1), (2, 1)], mode='symmetric')", ()),
        ("flip-slice", "slice", "x[::-1, :, ::-2]", ()),
        ("flip", "flip", "mx.flip(x, axis=(0, 2))", ()),
        ("diagonal", "diagonal", "mx.diagonal(x, axis1=1, axis2=2)", ()),
        ("diagonal-offset", "diagonal", "mx.diagonal(x, offset=-1, axis1=0, axis2=2)", ()),
        ("roll", "roll", "mx.roll(x, 2, axis=2)", ()),
        ("roll-axes", "roll", "mx.roll(x, (1, -1), axis=(0, 1))", ()),
        ("sort", "sort", "mx.sort(x, axis=-1)", ()),
        ("sort-axis0", "sort", "mx.sort(x, axis=0)", ()),
        ("topk", "topk", "mx.topk(x, 2, axis=-1)", ()),
        ("partition", "partition", "mx.partition(x, 1, axis=1)", ()),
        ("atleast", "atleast", "(mx.atleast_1d(x[0, 0, 0]), mx.atleast_2d(x[0, 0]), mx.atleast_3d(x[0]))", ()),
        ("tril", "tril", "mx.tril(x, k=1)", ()),
        ("triu", "triu", "mx.triu(x[0], k=-1)", ()),
        ("contiguous", "contiguous", "mx.contiguous(mx.swapaxes(x, 1, 2)) * 2.0", ()),
        ("as-strided", "as_strided", "mx.as_strided(x, (2, 2, 3), (12, 4, 1), 1)", FIXED_SHAPE),
    ):  # fmt: skip
        yield Case(name, op, "shape", f"lambda x: {body}", (x,), skip=skip)
    yield Case("diag", "diag", "shape", "lambda v: mx.diag(v)", (arr(3),))
    yield Case("diag-matrix", "diag", "shape", "lambda x: mx.diag(x, k=1)", (arr(3, 4),))
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
    yield Case(
        "concat", "concatenate", "alias", "lambda a, b: mx.concat([a, b])", (M, M), dtypes=F32
    )
    yield Case("stack", "stack", "shape", "lambda a, b: mx.stack([a, b], axis=0)", (M, M))
    yield Case("stack-last", "stack", "shape", "lambda a, b: mx.stack([a, b], axis=-1)", (M, M))
    yield Case(
        "meshgrid",
        "meshgrid",
        "shape",
        "lambda a, b: mx.meshgrid(a, b, indexing='ij')",
        (arr(2), arr(3)),
    )
    yield Case(
        "broadcast-arrays",
        "broadcast_arrays",
        "shape",
        "lambda a, b: mx.broadcast_arrays(a, b)",
        (arr(2, 1), arr(3)),
    )
    yield Case(
        "kron", "kron", "shape", "lambda a, b: mx.kron(a, b)", (arr(2, 2), arr(2, 3)), dtypes=F32
    )


def _multi_output() -> Iterable[Case]:
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
    yield Case("unstack", "unstack", "multi-output", "lambda x: mx.unstack(x, axis=1)", (M,))
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


def _indexing() -> Iterable[Case]:
    x = arr(4, 3)
    idx = literal([2, 0, 2], "int32")
    col = literal([[1], [0], [2], [1]], "int32")
    read: tuple[tuple[str, str, str, tuple[Input, ...]], ...] = (
        ("slice", "slice", "lambda x: x[1:, ::2]", (x,)),
        ("index-int", "slice", "lambda x: x[2]", (x,)),
        ("index-array", "gather", "lambda x, i: x[i]", (x, idx)),
        ("take", "take", "lambda x, i: mx.take(x, i, axis=0)", (x, idx)),
        ("take-flat", "take", "lambda x, i: mx.take(x, i)", (x, idx)),
        ("take-along-axis", "take_along_axis", "lambda x, i: mx.take_along_axis(x, i, axis=1)", (x, col)),
        ("index-newaxis", "slice", "lambda x: x[None, ..., 1:]", (x,)),
        ("slice-dynamic", "slice", "lambda x: mx.slice(x, mx.array([1, 0]), (0, 1), (2, 2))", (x,)),
    )  # fmt: skip
    for name, op, fn, inputs in read:
        yield Case(name, op, "index-read", fn, inputs)
    y = arr(2, 3)
    write: tuple[tuple[str, str, str, tuple[Input, ...]], ...] = (
        ("setitem-slice", "slice_assign", "lambda x, y: setitem(x, slice(1, 3), y)", (x, y)),
        ("setitem-slice-const", "slice_assign", "lambda x: setitem(x, slice(0, 2), 0.5)", (x,)),
        ("setitem-step", "slice_assign", "lambda x, y: setitem(x, (slice(None, None, 2), slice(1, None)), y[:, :2])", (x, y)),
        ("setitem-mask", "mask_assign", "lambda x, m, y: setitem(x, m, y)", (x, mask(4, 3), arr())),
        ("setitem-mask-scalar", "mask_assign", "lambda x: setitem(x, x > 0.5, 2.0)", (x,)),
        ("slice-update", "slice_update", "lambda x, y: mx.slice_update(x, y, mx.array([1, 0]), (0, 1))", (x, y)),
        ("put-along-axis", "put_along_axis", "lambda x, i, y: mx.put_along_axis(x, i, y, axis=1)", (x, col, arr(4, 1))),
        ("at-add", "scatter_add", "lambda x, i, y: x.at[i].add(y)", (x, idx, arr(3, 3))),
        ("at-subtract", "scatter_add", "lambda x, i, y: x.at[i].subtract(y)", (x, idx, arr(3, 3))),
        ("at-multiply", "scatter_prod", "lambda x, i, y: x.at[i].multiply(y)", (x, idx, arr(3, 3))),
        ("at-divide", "scatter_prod", "lambda x, i, y: x.at[i].divide(y)", (x, idx, arr(3, 3, lo=0.5))),
        ("at-maximum", "scatter_max", "lambda x, i, y: x.at[i].maximum(y)", (x, idx, arr(3, 3))),
        ("at-minimum", "scatter_min", "lambda x, i, y: x.at[i].minimum(y)", (x, idx, arr(3, 3))),
        ("at-add-const", "scatter_add", "lambda x, i: x.at[i].add(2.0)", (x, idx)),
        ("at-add-into-const", "scatter_add", "lambda y, i: mx.zeros((4, 3)).at[i].add(y)", (arr(3, 3), idx)),
    )  # fmt: skip
    for name, op, fn, args in write:
        yield Case(name, op, "index-write", fn, args)


def cases() -> Iterable[Case]:
    yield from _shapes()
    yield from _multi_output()
    yield from _indexing()
