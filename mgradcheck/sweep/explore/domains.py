"""What the signatures do not say: where each operation's arguments are valid and smooth.

A :class:`Domain` per operation that needs one: a joint draw of its shapes and
keywords (a convolution's ``(N, H, W, C)`` input and ``(O, KH, KW, C/groups)``
weight with a stride, padding, dilation and group count that fit them), the
ranges where its array arguments are smooth, an expression that makes a valid
operand from a drawn one (a symmetric positive definite matrix), and the dtype
kinds it takes. Every other operation is drawn from its signature alone
(:mod:`.generate`): elementwise-compatible shapes, and keywords by their name.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

FLOAT, COMPLEX, INTEGER = "float", "complex", "integer"
KINDS = (FLOAT, COMPLEX, INTEGER)
Shape = tuple[int, ...]

# A matrix made symmetric positive definite, and one made triangular with a safe diagonal.
SPD = "({x} @ mx.swapaxes({x}, -1, -2) + 3.0 * mx.eye({x}.shape[-1]))"
TRIL = "(mx.tril({x}) + 3.0 * mx.eye({x}.shape[-1]))"


@dataclass(frozen=True)
class Index:
    """An argument that is data, not a point: integer indices below ``high``, or a mask."""

    shape: Shape
    high: int = 1  # inclusive
    dtype: str = "int32"


Drawn = dict[str, "Shape | list[Shape] | Index | str"]  # an array's shape, a list's, or source


@dataclass(frozen=True)
class Domain:
    draw: Callable[[random.Random], Drawn] | None = None  # None: from the signature alone
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    wrap: Mapping[str, str] = field(default_factory=dict)  # parameter -> "...{x}..."
    kinds: tuple[str, ...] = KINDS
    # Parameters drawn with tied elements in every real call (float32, where the adjoint check
    # runs; the catalogue's cases of these operations have none): where an order statistic
    # has no derivative, its jvp and vjp must still agree, and only a tie in the point
    # itself (not one built by the function) shows whether they do.
    ties: tuple[str, ...] = ()


def _conv(dims: int, transpose: bool = False) -> Callable[[random.Random], Drawn]:
    def draw(rng: random.Random) -> Drawn:
        groups = rng.choice((1, 1, 2))
        c_in, c_out = groups * rng.choice((1, 2)), groups * rng.choice((1, 2))
        kernel = tuple(rng.choice((1, 2, 3)) for _ in range(dims))
        dilation = rng.choice((1, 1, 2))
        padding = rng.choice((0, 0, 1, 2))
        if transpose:  # its output must not be cropped below nothing
            padding = min(padding, min((k - 1) * dilation for k in kernel))
        spatial = tuple(max(rng.choice((3, 4, 5, 6)), (k - 1) * dilation + 1) for k in kernel)
        drawn: Drawn = {
            "input": (rng.choice((1, 2)), *spatial, c_in),
            "weight": (c_out, *kernel, c_in // groups),  # conv_transpose's too
            "stride": str(rng.choice((1, 1, 2))),
            "padding": str(padding),
            "dilation": str(dilation),
            "groups": str(groups),
        }
        if dims > 1 and rng.random() < 0.3:  # a tuple with a different value per axis
            drawn["stride"] = str(tuple(rng.choice((1, 2)) for _ in range(dims)))
        if transpose:
            drawn["output_padding"] = "0"
        return drawn

    return draw


def _matmul(rng: random.Random) -> Drawn:
    m, k, n = (rng.choice((1, 2, 3, 4)) for _ in range(3))
    a: Shape = rng.choice(((m, k), (k,), (2, m, k), (1, m, k)))
    b: Shape = rng.choice(((k, n), (k,), (2, k, n))) if len(a) > 1 else (k, n)
    return {"a": a, "b": b}


def _addmm(rng: random.Random) -> Drawn:
    m, k, n = (rng.choice((1, 2, 3)) for _ in range(3))
    c: Shape = rng.choice(((m, n), (n,), (1, n), ()))
    return {"c": c, "a": (m, k), "b": (k, n), "alpha": rng.choice(("1.0", "0.5", "-2.0", "0.0")),
            "beta": rng.choice(("1.0", "2.0", "0.0"))}  # fmt: skip


def _inner(rng: random.Random) -> Drawn:
    k = rng.choice((1, 3, 4))
    return {"a": rng.choice(((k,), (2, k))), "b": rng.choice(((k,), (3, k)))}


def _square(
    *names: str, extra: Mapping[str, tuple[str, ...]] | None = None
) -> Callable[[random.Random], Drawn]:
    def draw(rng: random.Random) -> Drawn:
        n = rng.choice((1, 2, 3, 4))
        batch: Shape = rng.choice(((), (), (2,)))
        drawn: Drawn = {name: (*batch, n, n) for name in names}
        for key, values in (extra or {}).items():
            drawn[key] = rng.choice(values)
        return drawn

    return draw


def _solve(rng: random.Random) -> Drawn:
    n = rng.choice((1, 2, 3))
    return {"a": (n, n), "b": rng.choice(((n,), (n, 1), (n, 2)))}


def _rectangular(rng: random.Random) -> Drawn:
    return {"a": rng.choice(((2, 3), (3, 2), (3, 3), (1, 2), (2, 2, 3)))}


def _norm(rng: random.Random) -> Drawn:
    vector = rng.random() < 0.5
    if vector:
        return {"a": (rng.choice((1, 3, 4)),), "ord": rng.choice(("None", "1", "2", "3", "0.5", "float('inf')")),
                "keepdims": rng.choice(("False", "True"))}  # fmt: skip
    return {"a": rng.choice(((2, 3), (3, 3))), "ord": rng.choice(("None", "'fro'", "1", "-1", "float('inf')")),
            "axis": rng.choice(("None", "[0, 1]", "[-1, -2]"))}  # fmt: skip


def _norm_layer(bias: bool) -> Callable[[random.Random], Drawn]:
    def draw(rng: random.Random) -> Drawn:
        d = rng.choice((1, 3, 8))
        drawn: Drawn = {
            "x": rng.choice(((d,), (2, d), (2, 3, d))),
            "eps": rng.choice(("1e-5", "1e-2")),
        }
        drawn["weight"] = (d,) if rng.random() < 0.7 else "None"
        if bias:
            drawn["bias"] = (d,) if rng.random() < 0.7 else "None"
        return drawn

    return draw


def _attention(rng: random.Random) -> Drawn:
    b, h, q, s, d = (
        rng.choice((1, 2)),
        rng.choice((1, 2)),
        rng.choice((1, 3)),
        rng.choice((1, 4)),
        rng.choice((4, 8)),
    )
    kv = rng.choice((h, 1)) if h > 1 else 1
    return {"q": (b, h, q, d), "k": (b, kv, s, d), "v": (b, kv, s, d), "scale": rng.choice(("0.5", "1.0")),
            "mask": rng.choice(("None", "None", "'causal'")), "force_fused": "False"}  # fmt: skip


EINSUM = (
    ("'ij,jk->ik'", (2, 3), (3, 4)), ("'ii->i'", (3, 3)), ("'ij->ji'", (2, 3)), ("'i,i->'", (3,), (3,)),
    ("'bij,bjk->bik'", (2, 2, 3), (2, 3, 2)), ("'ij,ij->i'", (2, 3), (2, 3)), ("'i,j->ij'", (2,), (3,)),
    ("'ii'", (3, 3)), ("'ijk->k'", (2, 3, 4)), ("'ij,kj->ik'", (2, 3), (4, 3)),
)  # fmt: skip


def _einsum(rng: random.Random) -> Drawn:
    subscripts, *shapes = rng.choice(EINSUM)
    drawn: Drawn = {"subscripts": str(subscripts)}
    drawn["operands"] = [tuple(s) for s in shapes if isinstance(s, tuple)]
    return drawn


def _split(rng: random.Random) -> Drawn:
    return {"a": (4, 6), "indices_or_sections": rng.choice(("2", "[1, 3]", "[0, 2]", "1")),
            "axis": rng.choice(("0", "1", "-1"))}  # fmt: skip


def _take_along_axis(rng: random.Random) -> Drawn:
    shape = rng.choice(((3, 4), (2, 3, 4), (5,)))
    axis = rng.randrange(-len(shape), len(shape))
    k = rng.choice((1, 2, shape[axis], shape[axis] + 2))
    index = tuple(k if i == axis % len(shape) else n for i, n in enumerate(shape))
    return {"a": shape, "indices": Index(index, shape[axis] - 1), "axis": str(axis)}


def _take(rng: random.Random) -> Drawn:
    shape = rng.choice(((3, 4), (5,)))
    axis = rng.choice((None, 0, -1))
    high = (3 * 4 if len(shape) > 1 else 5) if axis is None else shape[axis]
    return {
        "a": shape,
        "indices": Index(rng.choice(((2,), (3,), (2, 2), ())), high - 1),
        "axis": str(axis),
    }


def _where(rng: random.Random) -> Drawn:
    base: Shape = rng.choice(((2, 3), (3,), (2, 1, 3)))
    return {"condition": Index(rng.choice((base, base[-1:], ())), 1, "bool"), "x": base,
            "y": rng.choice((base, base[-1:], ()))}  # fmt: skip


def _topk(key: str) -> Callable[[random.Random], Drawn]:
    def draw(rng: random.Random) -> Drawn:
        shape = rng.choice(((5,), (2, 4), (3, 1)))
        axis = rng.choice((None, -1, 0))
        size = shape[axis] if axis is not None else 1
        for n in shape if axis is None else ():
            size *= n
        return {"a": shape, key: str(rng.randrange(1 if key == "k" else 0, size + (1 if key == "k" else 0))),
                "axis": str(axis)}  # fmt: skip

    return draw


def _pick(
    array: str, shapes: tuple[Shape, ...], **choices: tuple[str, ...]
) -> Callable[[random.Random], Drawn]:
    """One array of one of ``shapes``, and each keyword one of its values (source text)."""

    def draw(rng: random.Random) -> Drawn:
        drawn: Drawn = {array: rng.choice(shapes)}
        for key, values in choices.items():
            drawn[key] = rng.choice(values)
        return drawn

    return draw


# Views of the 6 elements of a (2, 3) array: shape, strides and offset together, since they
# address memory directly and MLX reads what they address unchecked (offset + sum of
# (size - 1) * stride is at most 5 in each). Drawn apart, (3, 2) with strides (3, 1) read 7.
_VIEWS = (("(3, 2)", "(1, 3)", "0"), ("(3, 2)", "(2, 1)", "0"), ("(2, 2)", "(3, 1)", "0"),
          ("(2, 2)", "(3, 1)", "1"), ("(2, 2)", "(1, 3)", "0"), ("(2, 2)", "(1, 3)", "1"))  # fmt: skip


def _as_strided(rng: random.Random) -> Drawn:
    shape, strides, offset = rng.choice(_VIEWS)
    return {"a": (2, 3), "shape": shape, "strides": strides, "offset": offset}


def _cross(rng: random.Random) -> Drawn:
    shape: Shape = rng.choice(((3,), (2, 3)))
    return {"a": shape, "b": rng.choice((shape, (3,))), "axis": "-1"}


def _vecdot(rng: random.Random) -> Drawn:
    k = rng.choice((1, 3))
    a: Shape = rng.choice(((k,), (2, k)))
    return {"a": a, "b": rng.choice((a, (1, k))) if len(a) > 1 else a, "axis": "-1"}


def _tensordot(rng: random.Random) -> Drawn:
    options: tuple[Drawn, ...] = ({"a": (2, 3), "b": (3, 4), "axes": "1"}, {"a": (2, 3, 4), "b": (3, 4, 2), "axes": "2"},
         {"a": (2, 3), "b": (4,), "axes": "0"}, {"a": (2, 3, 4), "b": (4, 2, 3), "axes": "([0, 2], [1, 0])"},
    )  # fmt: skip
    return dict(rng.choice(options))


def _put_along_axis(rng: random.Random) -> Drawn:
    shape = rng.choice(((3, 4), (5,)))
    axis = rng.randrange(len(shape))
    index = tuple(1 if i == axis else n for i, n in enumerate(shape))
    return {"a": shape, "indices": Index(index, shape[axis] - 1), "values": rng.choice((index, ())),
            "axis": str(axis)}  # fmt: skip


def _cross_entropy(rng: random.Random) -> Drawn:
    classes = rng.choice((2, 5))
    batch: Shape = rng.choice(((3,), (2, 2), ()))
    return {"logits": (*batch, classes), "targets": Index(batch, classes - 1)}


def _convolve(rng: random.Random) -> Drawn:
    return {"a": (rng.choice((1, 3, 5)),), "v": (rng.choice((1, 2, 3)),),
            "mode": rng.choice(("'full'", "'valid'", "'same'"))}  # fmt: skip


def _fft(rng: random.Random) -> Drawn:
    size = rng.choice((2, 4, 5, 8))  # irfft of one element asks for an output of none
    return {"a": rng.choice(((size,), (2, size))), "n": rng.choice(("None", "None", str(max(1, size - 2)), str(size + 3))),
            "norm": rng.choice(("'backward'", "'ortho'", "'forward'"))}  # fmt: skip


FLOAT_ONLY = (FLOAT,)
DOMAINS: dict[str, Domain] = {
    **{f"mx.conv{d}d": Domain(_conv(d)) for d in (1, 2, 3)},
    **{f"mx.conv_transpose{d}d": Domain(_conv(d, transpose=True)) for d in (1, 2, 3)},
    "mx.matmul": Domain(_matmul), "mx.addmm": Domain(_addmm), "mx.inner": Domain(_inner),
    "mx.einsum": Domain(_einsum), "mx.split": Domain(_split),
    "mx.take_along_axis": Domain(_take_along_axis), "mx.take": Domain(_take), "mx.where": Domain(_where),
    "mx.reshape": Domain(_pick("a", ((2, 3), (6,)), shape=("(3, 2)", "(-1,)", "(1, 6)", "(6, 1)", "[2, 3]"))),
    "mx.permute_dims": Domain(_pick("a", ((2, 3, 4),), axes=("None", "(2, 0, 1)", "[1, 0, 2]"))),
    "mx.transpose": Domain(_pick("a", ((2, 3, 4),), axes=("None", "(2, 0, 1)", "[1, 0, 2]", "(-1, 0, 1)"))),
    "mx.swapaxes": Domain(_pick("a", ((2, 3, 4),), axis1=("0", "-1", "1"), axis2=("2", "0", "-2"))),
    "mx.moveaxis": Domain(_pick("a", ((2, 3, 4),), source=("0", "-1", "1"), destination=("2", "0", "-2"))),
    # Several new axes at once, of an array with an axis to map over besides.
    "mx.expand_dims": Domain(_pick("a", ((2, 3), (3,), (2, 1, 3), ()),
                                   axis=("0", "-1", "(0, 1)", "(-1, 0)", "[1, 0]", "[0]"))),
    "mx.squeeze": Domain(_pick("a", ((2, 1, 3), (1, 1)), axis=("None", "1", "-2"))),
    "mx.broadcast_to": Domain(_pick("a", ((1, 3),), shape=("(2, 3)", "(4, 2, 3)", "[1, 3]"))),
    "mx.tile": Domain(_pick("a", ((2, 3), (3,)), reps=("2", "(1, 2)", "(2, 1, 2)"))),
    "mx.repeat": Domain(_pick("array", ((2, 3), (3,)), repeats=("1", "2", "3"), axis=("None", "0", "-1"))),
    "mx.roll": Domain(_pick("a", ((2, 3), (4,)), shift=("1", "-2", "5", "(1,)"), axis=("None", "0", "(0,)"))),
    "mx.pad": Domain(_pick("a", ((2, 3),), pad_width=("1", "(0, 2)", "[(1, 0), (0, 2)]", "0"),
                            mode=("'constant'", "'edge'", "'reflect'", "'symmetric'"))),
    "mx.flatten": Domain(_pick("a", ((2, 3, 4),), start_axis=("0", "1", "-2"), end_axis=("-1", "1", "2"))),
    "mx.unflatten": Domain(_pick("a", ((6, 2),), axis=("0",), shape=("(2, 3)", "(3, -1)", "(6,)"))),
    "mx.diag": Domain(_pick("a", ((3,), (3, 3), (2, 3)), k=("0", "1", "-1"))),
    "mx.diagonal": Domain(_pick("a", ((3, 3), (2, 3, 4)), offset=("0", "1", "-1"), axis1=("0",), axis2=("1", "-1"))),
    "mx.trace": Domain(_pick("a", ((3, 3), (2, 3, 4)), offset=("0", "1", "-1"), axis1=("0",), axis2=("1", "-1"))),
    "mx.tril": Domain(_pick("x", ((3, 3), (2, 4), (2, 3, 3)), k=("0", "1", "-1"))),
    "mx.triu": Domain(_pick("x", ((3, 3), (2, 4), (2, 3, 3)), k=("0", "1", "-1"))),
    "mx.hadamard_transform": Domain(_pick("a", ((4,), (2, 8), (1,)), scale=("None", "0.25"))),
    "fast.rms_norm": Domain(_norm_layer(bias=False)), "fast.layer_norm": Domain(_norm_layer(bias=True)),
    "fast.scaled_dot_product_attention": Domain(_attention, kinds=FLOAT_ONLY),
    "linalg.inv": Domain(_square("a"), wrap={"a": SPD}, kinds=FLOAT_ONLY),
    "linalg.cholesky": Domain(_square("a", extra={"upper": ("False", "True")}), wrap={"a": SPD}, kinds=FLOAT_ONLY),
    "linalg.cholesky_inv": Domain(_square("a", extra={"upper": ("False",)}), wrap={"a": TRIL}, kinds=FLOAT_ONLY),
    "linalg.tri_inv": Domain(_square("a", extra={"upper": ("False",)}), wrap={"a": TRIL}, kinds=FLOAT_ONLY),
    "linalg.eigh": Domain(_square("a", extra={"UPLO": ("'L'", "'U'")}), wrap={"a": SPD}, kinds=FLOAT_ONLY),
    "linalg.eigvalsh": Domain(_square("a", extra={"UPLO": ("'L'", "'U'")}), wrap={"a": SPD}, kinds=FLOAT_ONLY),
    "linalg.solve": Domain(_solve, wrap={"a": SPD}, kinds=FLOAT_ONLY),
    "linalg.solve_triangular": Domain(_solve, wrap={"a": TRIL}, kinds=FLOAT_ONLY),
    "linalg.svd": Domain(_rectangular, kinds=FLOAT_ONLY), "linalg.qr": Domain(_rectangular, kinds=FLOAT_ONLY),
    "linalg.pinv": Domain(_rectangular, kinds=FLOAT_ONLY), "linalg.lu": Domain(_square("a"), kinds=FLOAT_ONLY),
    "linalg.lu_factor": Domain(_square("a"), kinds=FLOAT_ONLY), "linalg.norm": Domain(_norm, kinds=FLOAT_ONLY),
    "linalg.cross": Domain(_cross, kinds=FLOAT_ONLY),
    **{f"fft.{name}": Domain(_fft) for name in ("fft", "ifft", "rfft", "irfft")},
    **{f"fft.{name}": Domain(_pick("a", ((2, 3), (3, 4), (2, 3, 4)), axes=("None", "(-2, -1)", "[0, 1]"),
                                   norm=("'backward'", "'ortho'", "'forward'")))
       for name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")},
    "mx.convolve": Domain(_convolve),
    "mx.vecdot": Domain(_vecdot), "mx.tensordot": Domain(_tensordot),
    "mx.put_along_axis": Domain(_put_along_axis), "fast.cross_entropy": Domain(_cross_entropy),
    "mx.matrix_transpose": Domain(_rectangular),
    **{f"linalg.{name}": Domain(_square("a"), kinds=FLOAT_ONLY) for name in ("det", "slogdet", "eig", "eigvals")},
    "mx.as_strided": Domain(_as_strided),
    # A standard deviation over one element is sqrt(0) whatever the element, where sqrt has no
    # derivative (its chain rule gives 0 * inf): every reduced axis holds two or more.
    "mx.std": Domain(_pick("a", ((2, 3), (3,), (4,), (2, 3, 2)), axis=("None", "-1", "0"))),
    **{f"mx.{name}": Domain(ties=("a",))
       for name in ("max", "min", "minmax", "sort", "median", "cummax", "cummin")},
    **{f"mx.{name}": Domain(ties=("a", "b")) for name in ("maximum", "minimum")},
    "mx.topk": Domain(_topk("k"), ties=("a",)), "mx.partition": Domain(_topk("kth"), ties=("a",)),
    # Exclusive, its first element is log(0) = -inf, which no check can judge (every such call
    # was "not checked"): drawn inclusive.
    "mx.logcumsumexp": Domain(_pick("a", ((5,), (2, 4), (2, 3, 2)), axis=("None", "0", "-1"),
                                    reverse=("False", "True"), inclusive=("True",))),
    # A norm has no derivative at 0 (its jvp is <x, t> / |x|, NaN there), and the norm of an
    # empty array is 0: drawn from its signature, matrix_norm took a (0, 3) operand.
    "mx.matrix_norm": Domain(_norm),
}  # fmt: skip

# Operations no call is drawn for yet, and why (each a domain still to write).
UNDRAWN = {
    **dict.fromkeys(("mx.quantized_matmul", "mx.gather_qmm", "mx.dequantize"),
                    "quantised weights: a domain has to quantise them first"),
    **dict.fromkeys(("mx.gather_mm", "mx.block_masked_mm", "mx.segmented_mm", "mx.conv_general",
                     "fast.gated_delta_update", "fft.stft", "fft.istft"),
                    "shapes that depend on one another in ways no domain says yet"),
}  # fmt: skip
