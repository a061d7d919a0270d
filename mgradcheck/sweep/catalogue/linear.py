"""Products, linear algebra, convolutions, ``mx.fast`` and quantised matmuls.

Decompositions run in float32 (LAPACK has no half precision) and on
well-conditioned inputs (``x @ x.T + 3 I``); several are also called with
``stream=mx.cpu``, which linear algebra needs on a GPU, and with the flags that
change their derivative (``upper``, ``transpose``, ``flip``, ``alpha``/``beta``).
"""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.sweep.catalogue.case import F32, Case, arr, literal, parts

SPD = "(x @ mx.swapaxes(x, -1, -2) + 3.0 * mx.eye(x.shape[-1]))"
TRIL = "(mx.tril(x) + 3.0 * mx.eye(x.shape[-1]))"
FIXED = ("shapeless",)


def _products() -> Iterable[Case]:
    a23, a34 = arr(2, 3), arr(3, 4)
    for name, fn, inputs, dtypes in (
        ("matmul", "lambda a, b: a @ b", (a23, a34), None),
        ("matmul-batched", "lambda a, b: a @ b", (arr(2, 2, 3), arr(3, 2)), None),
        ("matmul-vector", "lambda a, b: mx.matmul(a, b)", (arr(3), arr(3, 2)), None),
        ("matmul-const", "lambda b: mx.ones((2, 3)) @ b", (a34,), None),
        ("matmul-transposed", "lambda a, b: mx.matmul(a.T, b.T)", (arr(3, 2), arr(4, 3)), None),
        ("addmm", "lambda c, a, b: mx.addmm(c, a, b)", (arr(2, 4), a23, a34), None),
        ("addmm-scaled", "lambda c, a, b: mx.addmm(c, a, b, alpha=0.5, beta=2.0)", (arr(2, 4), a23, a34), None),
        ("addmm-broadcast", "lambda c, a, b: mx.addmm(c, a, b)", (arr(4), a23, a34), None),
        ("inner", "lambda a, b: mx.inner(a, b)", (a23, arr(3)), None),
        ("outer", "lambda a, b: mx.outer(a, b)", (arr(3), arr(2)), None),
        ("vecdot", "lambda a, b: mx.vecdot(a, b, axis=0)", (a23, a23), None),
        ("tensordot", "lambda a, b: mx.tensordot(a, b, axes=1)", (a23, arr(3, 2)), None),
        ("tensordot-axes", "lambda a, b: mx.tensordot(a, b, axes=([0, 2], [1, 0]))", (arr(2, 3, 4), arr(4, 2, 3)), None),
        ("einsum", "lambda a, b: mx.einsum('ij,jk->ik', a, b)", (a23, arr(3, 2)), None),
        ("einsum-trace", "lambda a, b: mx.einsum('ii,ij->j', a, b)", (arr(3, 3), a34), None),
        ("gather-mm", "lambda a, b, i: mx.gather_mm(a, b, None, i)", (arr(2, 1, 3), arr(3, 3, 4), literal([2, 0], "int32")), F32),
        ("segmented-mm", "lambda a, b, s: mx.segmented_mm(a, b, s)", (arr(2, 6), arr(6, 3), literal([[0, 2], [2, 6]], "uint32")), F32),
        ("block-masked-mm", "lambda a, b, m: mx.block_masked_mm(a, b, 32, None, m, None)", (arr(64, 32), arr(32, 32), literal([[True], [False]], "bool")), F32),
        ("hadamard", "lambda x: mx.hadamard_transform(x)", (arr(2, 8),), F32),
        ("hadamard-scale", "lambda x: mx.hadamard_transform(x, scale=0.25)", (arr(16),), F32),
    ):  # fmt: skip
        op = {"gather-mm": "gather_mm", "segmented-mm": "segmented_mm", "block-masked-mm": "block_masked_mm"}.get(name, name.split("-")[0])  # fmt: skip
        yield Case(name, op, "linalg", fn, inputs, dtypes=dtypes)


def _decompositions() -> Iterable[Case]:
    x = arr(3, 3)
    for name, op, body in (
        ("inv", "inv", f"mx.linalg.inv({SPD})"),
        ("inv-cpu", "inv", f"mx.linalg.inv({SPD}, stream=mx.cpu)"),
        ("cholesky", "cholesky", f"mx.linalg.cholesky({SPD})"),
        ("cholesky-upper", "cholesky", f"mx.linalg.cholesky({SPD}, upper=True)"),
        ("cholesky-inv", "cholesky_inv", f"mx.linalg.cholesky_inv(mx.linalg.cholesky({SPD}))"),
        ("tri-inv", "tri_inv", f"mx.linalg.tri_inv({TRIL})"),
        ("tri-inv-upper", "tri_inv", f"mx.linalg.tri_inv(mx.swapaxes({TRIL}, 0, 1), upper=True, stream=mx.cpu)"),
        ("solve", "solve", f"mx.linalg.solve({SPD}, x[:, :1])"),
        ("solve-cpu", "solve", f"mx.linalg.solve({SPD}, x, stream=mx.cpu)"),
        ("solve-triangular", "solve_triangular", f"mx.linalg.solve_triangular({TRIL}, x[:, 1])"),
        ("solve-triangular-upper", "solve_triangular", f"mx.linalg.solve_triangular(mx.swapaxes({TRIL}, 0, 1), x, upper=True)"),
        ("eigvalsh", "eigvalsh", f"mx.linalg.eigvalsh({SPD})"),
        ("eigvalsh-upper", "eigvalsh", f"mx.linalg.eigvalsh({SPD}, UPLO='U', stream=mx.cpu)"),
        ("eigh", "eigh", f"mx.linalg.eigh({SPD})"),
        ("qr", "qr", "mx.linalg.qr(x + 3.0 * mx.eye(3))"),
        ("svd-values", "svd", f"mx.linalg.svd({SPD}, compute_uv=False)"),
        ("svd", "svd", "mx.linalg.svd(x + 3.0 * mx.eye(3))"),
        ("det", "det", f"mx.linalg.det({SPD})"),
        ("slogdet", "slogdet", "mx.linalg.slogdet(x + 3.0 * mx.eye(3))"),
        ("pinv", "pinv", f"mx.linalg.pinv({SPD})"),
        ("lu", "lu", "mx.linalg.lu(x + 3.0 * mx.eye(3))"),
        ("lu-factor", "lu_factor", "mx.linalg.lu_factor(x + 3.0 * mx.eye(3))[0]"),
        ("eigvals", "eigvals", parts("mx.linalg.eigvals(x + 3.0 * mx.eye(3))")),
        ("eig", "eig", "(lambda w, v: (mx.real(w), mx.imag(w)))(*mx.linalg.eig(x + 3.0 * mx.eye(3)))"),
    ):  # fmt: skip
        # x.shape and eye(3) are written into the graph: no shapeless replay.
        yield Case(name, op, "decomposition", f"lambda x: {body}", (x,), dtypes=F32, skip=FIXED)
    yield Case(
        "inv-batched",
        "inv",
        "decomposition",
        f"lambda x: mx.linalg.inv({SPD})",
        (arr(2, 3, 3),),
        dtypes=F32,
        skip=FIXED,
    )
    yield Case(
        "cross", "cross", "linalg", "lambda a, b: mx.linalg.cross(a, b)", (arr(2, 3), arr(2, 3))
    )


def _convolutions() -> Iterable[Case]:
    for name, op, fn, inputs in (
        ("conv1d", "conv1d", "lambda x, w: mx.conv1d(x, w)", (arr(1, 6, 2), arr(3, 3, 2))),
        ("conv1d-stride-pad", "conv1d", "lambda x, w: mx.conv1d(x, w, stride=2, padding=1)", (arr(1, 7, 2), arr(2, 3, 2))),
        ("conv1d-dilation", "conv1d", "lambda x, w: mx.conv1d(x, w, dilation=2)", (arr(1, 7, 1), arr(2, 2, 1))),
        ("conv1d-const-weight", "conv1d", "lambda x: mx.conv1d(x, mx.ones((1, 3, 2)) * 0.5)", (arr(1, 6, 2),)),
        ("conv2d", "conv2d", "lambda x, w: mx.conv2d(x, w, padding=1)", (arr(1, 4, 4, 2), arr(2, 3, 3, 2))),
        ("conv2d-groups", "conv2d", "lambda x, w: mx.conv2d(x, w, groups=2)", (arr(1, 4, 4, 2), arr(2, 2, 2, 1))),
        ("conv3d", "conv3d", "lambda x, w: mx.conv3d(x, w)", (arr(1, 3, 3, 3, 1), arr(2, 2, 2, 2, 1))),
        ("conv-transpose1d", "conv_transpose1d", "lambda x, w: mx.conv_transpose1d(x, w, stride=2)", (arr(1, 4, 2), arr(3, 3, 2))),
        ("conv-transpose2d", "conv_transpose2d", "lambda x, w: mx.conv_transpose2d(x, w, padding=1)", (arr(1, 3, 3, 2), arr(2, 3, 3, 2))),
        ("conv-transpose3d", "conv_transpose3d", "lambda x, w: mx.conv_transpose3d(x, w)", (arr(1, 2, 2, 2, 1), arr(1, 2, 2, 2, 1))),
        ("conv-general-flip", "conv_general", "lambda x, w: mx.conv_general(x, w, stride=1, padding=1, flip=True)", (arr(1, 5, 2), arr(3, 3, 2))),
        ("conv-general-dilation", "conv_general", "lambda x, w: mx.conv_general(x, w, input_dilation=2, kernel_dilation=(1, 2))", (arr(1, 3, 4, 1), arr(2, 2, 2, 1))),
        ("convolve", "convolve", "lambda a, v: mx.convolve(a, v)", (arr(5), arr(3))),
        ("convolve-same", "convolve", "lambda a, v: mx.convolve(a, v, mode='same')", (arr(6), arr(3))),
    ):  # fmt: skip
        yield Case(name, op, "conv", fn, inputs)


def _fast() -> Iterable[Case]:
    x = arr(2, 3, 8)
    for name, op, fn, inputs, dtypes in (
        ("layer-norm", "layer_norm", "lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5)", (x, arr(8), arr(8)), None),
        ("layer-norm-no-bias", "layer_norm", "lambda x, w: mx.fast.layer_norm(x, w, None, 1e-5)", (x, arr(8)), None),
        ("layer-norm-plain", "layer_norm", "lambda x: mx.fast.layer_norm(x, None, None, 1e-5)", (x,), None),
        ("rms-norm", "rms_norm", "lambda x, w: mx.fast.rms_norm(x, w, 1e-5)", (x, arr(8)), None),
        ("rms-norm-plain", "rms_norm", "lambda x: mx.fast.rms_norm(x, None, 1e-5)", (x,), None),
        ("rope", "rope", "lambda x: mx.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0, offset=0)", (arr(1, 2, 4, 8),), None),
        ("rope-traditional", "rope", "lambda x: mx.fast.rope(x, 8, traditional=True, base=10000.0, scale=0.5, offset=3)", (arr(1, 2, 4, 8),), None),
        ("rope-partial", "rope", "lambda x: mx.fast.rope(x, 4, traditional=False, base=100.0, scale=1.0, offset=1)", (arr(1, 1, 3, 8),), None),
        ("rope-freqs", "rope", "lambda x, f: mx.fast.rope(x, 8, traditional=False, base=None, scale=1.0, offset=0, freqs=f)", (arr(1, 2, 4, 8), arr(4, lo=0.1, hi=1.0, const=True)), None),
        ("sdpa", "scaled_dot_product_attention", "lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5)", (arr(1, 2, 3, 4), arr(1, 2, 5, 4), arr(1, 2, 5, 4)), None),
        ("sdpa-causal", "scaled_dot_product_attention", "lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask='causal')", (arr(1, 2, 4, 4), arr(1, 2, 4, 4), arr(1, 2, 4, 4)), None),
        ("sdpa-additive-mask", "scaled_dot_product_attention", "lambda q, k, v, m: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask=m)", (arr(1, 1, 3, 4), arr(1, 1, 5, 4), arr(1, 1, 5, 4), arr(3, 5)), None),
        ("sdpa-bool-mask", "scaled_dot_product_attention", "lambda q, k, v, m: mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0, mask=m)", (arr(1, 2, 3, 4), arr(1, 1, 4, 4), arr(1, 1, 4, 4), literal([[True, False, True, True]] * 3, "bool")), None),
        ("cross-entropy", "cross_entropy", "lambda x, t: mx.fast.cross_entropy(x, t)", (arr(3, 5), literal([1, 4, 0], "int32")), None),
        ("gated-delta", "gated_delta_update", "lambda q, k, v, g, b: mx.fast.gated_delta_update(q, k, v, g, b)", (arr(1, 2, 1, 4), arr(1, 2, 1, 4), arr(1, 2, 1, 4), arr(1, 2, 1, lo=0.5, hi=1.0), arr(1, 2, 1, lo=0.1, hi=0.9)), F32),
    ):  # fmt: skip
        yield Case(name, op, "fast", fn, inputs, dtypes=dtypes)


def _quantized() -> Iterable[Case]:
    # Only the activations are differentiable: the weights are quantised once, a constant.
    w = "mx.quantize(mx.linspace(-1.0, 1.0, 512).reshape(8, 64), group_size=32, bits=4)"
    yield Case(
        "quantized-matmul",
        "quantized_matmul",
        "quantized",
        f"lambda x: (lambda q, s, b: mx.quantized_matmul(x, q, s, b, transpose=True, group_size=32, bits=4))(*{w})",
        (arr(2, 64),),
        dtypes=F32,
        skip=FIXED,
    )
    yield Case(
        "gather-qmm",
        "gather_qmm",
        "quantized",
        f"lambda x, i: (lambda q, s, b: mx.gather_qmm(x, q[None], s[None], b[None], rhs_indices=i, transpose=True, group_size=32, bits=4))(*{w})",
        (arr(2, 1, 64), literal([0, 0], "uint32")),
        dtypes=F32,
        skip=FIXED,
    )
    yield Case(
        "dequantize",
        "dequantize",
        "quantized",
        f"lambda s, b: mx.dequantize({w}[0], s, b, group_size=32, bits=4)",
        (arr(8, 2, lo=0.5, hi=1.5), arr(8, 2)),
        dtypes=F32,
        skip=FIXED,
    )


def cases() -> Iterable[Case]:
    yield from _products()
    yield from _decompositions()
    yield from _convolutions()
    yield from _fast()
    yield from _quantized()
