"""The operations a drawn graph (:mod:`.graphs`) is built of, and where each applies.

Each is an :data:`~.graphs.Apply`: given the graph being built and the node it
reads, it adds itself when the node's shape and the interval of its values fit
(a second operand is an earlier node or a fresh input whose shape fits), and
says whether it did. An operation's value interval is its function's, sampled
in Python (:func:`image`); one whose values could leave ``[-LIMIT, LIMIT]`` or
its domain is not applied.
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from collections.abc import Callable, Mapping, Sequence

from mgradcheck.sweep.explore.domains import SPD, Shape
from mgradcheck.sweep.explore.graphs import DEFAULT, LIMIT, Apply, Builder, Node, Span

POSITIVE: Span = (0.5, 2.0)


def image(f: Callable[..., float], spans: Sequence[Span]) -> Span | None:
    """The interval of ``f`` over ``spans`` (sampled), or None where it is not finite and small."""
    grids = [[lo + (hi - lo) * k / 24 for k in range(25)] for lo, hi in spans]
    points = list(itertools.product(*grids))
    try:
        values = [f(*p) for p in points]
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    if not all(math.isfinite(v) and abs(v) <= LIMIT for v in values):
        return None
    return (min(values), max(values))


def broadcast(a: Shape, b: Shape) -> Shape | None:
    """The shape ``a`` and ``b`` broadcast to, or None when they do not."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    if any(m != n and 1 not in (m, n) for m, n in zip(a, b, strict=True)):
        return None
    return tuple(n if m == 1 else m for m, n in zip(a, b, strict=True))


def smaller_shape(shape: Shape, rng: random.Random) -> Shape:
    """A shape that broadcasts to ``shape``: itself, fewer leading axes, a size-1 axis, a scalar."""
    choices = [shape, shape[1:], ()]
    if shape:
        axis = rng.randrange(len(shape))
        choices.append((*shape[:axis], 1, *shape[axis + 1 :]))
    return rng.choice(choices)


def unary(name: str, f: Callable[[float], float], domain: Span) -> Apply:
    def apply(b: Builder, x: int) -> bool:
        lo, hi = b.nodes[x].span
        span = image(f, [(lo, hi)]) if domain[0] <= lo and hi <= domain[1] else None
        if span is not None:
            b.add(Node(name, f"mx.{name}({{0}})", (x,), b.shape(x), span))
        return span is not None

    return apply


def binary(name: str, f: Callable[[float, float], float]) -> Apply:
    def apply(b: Builder, x: int) -> bool:
        shape = b.shape(x)
        if b.rng.random() < 0.15:  # a Python scalar takes its own path through jvp and vjp
            span = image(lambda u: f(u, 1.5), [b.nodes[x].span])
            if span is not None:
                b.add(Node(name, f"mx.{name}({{0}}, 1.5)", (x,), shape, span))
            return span is not None
        denominator = name == "divide"
        y = b.other(
            x,
            lambda n: (
                broadcast(shape, n.shape or ()) == shape and not (denominator and n.span[0] < 0.3)
            ),
            smaller_shape(shape, b.rng),
            POSITIVE if denominator else DEFAULT,
        )
        operands = (x, y) if denominator or b.rng.random() < 0.5 else (y, x)
        span = image(f, [b.nodes[i].span for i in operands])
        out = broadcast(b.shape(x), b.shape(y))
        if span is not None and out is not None:
            b.add(Node(name, f"mx.{name}({{0}}, {{1}})", operands, out, span))
        return span is not None and out is not None

    return apply


def reduction(name: str, span_of: Callable[[Span, int], Span], whole: bool = True) -> Apply:
    """``name`` over one axis, two or (``whole``: it reduces) all, keeping the axes or not."""

    def apply(b: Builder, x: int) -> bool:
        shape = b.shape(x)
        if not shape or 0 in shape:
            return False
        ndim = len(shape)
        choices: list[tuple[int, ...] | None] = [(a,) for a in range(-ndim, ndim)]
        if whole:
            choices += [None] + ([(0, -1)] if ndim > 1 else [])
        axes = b.rng.choice(choices)
        reduced = set(range(ndim)) if axes is None else {a % ndim for a in axes}
        size = math.prod(shape[a] for a in reduced)
        span = span_of(b.nodes[x].span, size)
        if max(abs(v) for v in span) > LIMIT:
            return False
        axis = "None" if axes is None else str(axes[0]) if len(axes) == 1 else str(axes)
        if not whole:  # softmax, cumsum: the shape stays
            b.add(Node(name, f"mx.{name}({{0}}, axis={axis})", (x,), shape, span))
            return True
        keep = b.rng.random() < 0.3
        out = tuple(
            1 if a in reduced else n for a, n in enumerate(shape) if keep or a not in reduced
        )
        extra = ", keepdims=True" if keep else ""
        b.add(Node(name, f"mx.{name}({{0}}, axis={axis}{extra})", (x,), out, span))
        return True

    return apply


def reshaped(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    targets = [(math.prod(shape),), tuple(reversed(shape))] if len(shape) > 1 else [(1, *shape)]
    target = b.rng.choice(targets)
    b.add(Node("reshape", f"mx.reshape({{0}}, {target})", (x,), target, b.nodes[x].span))
    return True


def transposed(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    if len(shape) < 2:
        return False
    b.add(Node("transpose", "mx.transpose({0})", (x,), tuple(reversed(shape)), b.nodes[x].span))
    return True


# Views of the leading axis: (its name, the index, the size it leaves of n).
VIEWS: dict[str, tuple[str, Callable[[int], int]]] = {
    "reversed": ("[::-1]", lambda n: n), "stepped": ("[::2]", lambda n: (n + 1) // 2),
    "sliced": ("[1:]", lambda n: n - 1),
}  # fmt: skip


def view(name: str) -> Apply:
    index, size = VIEWS[name]

    def apply(b: Builder, x: int) -> bool:
        shape = b.shape(x)
        if not shape or size(shape[0]) < 1:
            return False
        out = (size(shape[0]), *shape[1:])
        b.add(Node(name, f"{{0}}{index}", (x,), out, b.nodes[x].span))
        return True

    return apply


def broadcast_to(b: Builder, x: int) -> bool:
    shape = (2, *b.shape(x))
    b.add(Node("broadcast_to", f"mx.broadcast_to({{0}}, {shape})", (x,), shape, b.nodes[x].span))
    return True


def _bound(*spans: Span) -> float:
    return max(abs(v) for span in spans for v in span)


def matmul(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    if not shape:
        return False
    k = shape[-1]
    y = b.other(x, lambda n: n.shape is not None and len(n.shape) == 2 and n.shape[0] == k,
                (k, b.rng.choice((1, 2, 3))), DEFAULT)  # fmt: skip
    reach = k * _bound(b.nodes[x].span, b.nodes[y].span) ** 2
    if reach > LIMIT:
        return False
    out = (*shape[:-1], b.shape(y)[1])
    b.add(Node("matmul", "mx.matmul({0}, {1})", (x, y), out, (-reach, reach)))
    return True


def where(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    mask = b.add(Node("", "", (), smaller_shape(shape, b.rng), mask=True))
    y = b.other(x, lambda n: broadcast(shape, n.shape or ()) == shape,
                smaller_shape(shape, b.rng), DEFAULT)  # fmt: skip
    spans = (b.nodes[x].span, b.nodes[y].span)
    span = (min(s[0] for s in spans), max(s[1] for s in spans))
    out = broadcast(shape, b.shape(y))
    b.add(Node("where", "mx.where({0}, {1}, {2})", (mask, x, y), out, span))
    return True


def split(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    axes = [a for a, n in enumerate(shape) if n > 1 and n % 2 == 0]
    if not axes:
        return False
    axis = b.rng.choice(axes)
    half = tuple(n // 2 if a == axis else n for a, n in enumerate(shape))
    span = b.nodes[x].span
    b.parts("split", f"mx.split({{0}}, 2, axis={axis})", (x,), [(half, span), (half, span)])
    return True


def divmod_(b: Builder, x: int) -> bool:
    shape = b.shape(x)
    y = b.fresh(smaller_shape(shape, b.rng), POSITIVE)
    quotient = image(lambda u, v: math.floor(u / v), [b.nodes[x].span, POSITIVE])
    if quotient is None:
        return False
    b.parts("divmod", "mx.divmod({0}, {1})", (x, y), [(shape, quotient), (shape, (0.0, 2.0))])
    return True


def linalg(name: str) -> Apply:
    """A factorisation of a matrix node: qr (Q, R), eigh of it made SPD (values, vectors), svd."""

    def apply(b: Builder, x: int) -> bool:
        shape = b.shape(x)
        if len(shape) != 2 or (name == "eigh" and shape[0] != shape[1]):
            return False
        m, n = shape
        reach = math.sqrt(m * n) * _bound(b.nodes[x].span) ** (2 if name == "eigh" else 1)
        if reach + 3.0 > LIMIT:
            return False
        unit: Span = (-1.0, 1.0)
        parts: dict[str, list[tuple[Shape, Span]]] = {
            "qr": [((m, min(m, n)), unit), ((min(m, n), n), (-reach, reach))],
            "eigh": [((n,), (0.0, reach + 3.0)), ((n, n), unit)],
            "svd": [((m, m), unit), ((min(m, n),), (0.0, reach)), ((n, n), unit)],
        }
        operand = SPD.format(x="{0}") if name == "eigh" else "{0}"
        b.parts(f"linalg.{name}", f"mx.linalg.{name}({operand})", (x,), parts[name])
        return True

    return apply


MATH: dict[str, Callable[[float], float]] = {
    "abs": abs, "negative": operator.neg, "square": lambda v: v * v, "sqrt": math.sqrt,
    "rsqrt": lambda v: 1 / math.sqrt(v), "reciprocal": lambda v: 1 / v, "exp": math.exp,
    "expm1": math.expm1, "log": math.log, "log1p": math.log1p, "log2": math.log2,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "arcsin": math.asin, "arccos": math.acos,
    "arctan": math.atan, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "arcsinh": math.asinh, "arccosh": math.acosh, "arctanh": math.atanh, "erf": math.erf,
    "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
}  # fmt: skip
BINARY: dict[str, Callable[[float, float], float]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "maximum": max, "minimum": min,
    "logaddexp": lambda u, v: max(u, v) + math.log1p(math.exp(-abs(u - v))),
}  # fmt: skip
REDUCTIONS: dict[str, tuple[Callable[[Span, int], Span], bool]] = {
    "sum": (lambda s, n: (n * s[0], n * s[1]), True), "mean": (lambda s, n: s, True),
    "max": (lambda s, n: s, True), "min": (lambda s, n: s, True),
    "logsumexp": (lambda s, n: (s[0], s[1] + math.log(n)), True),
    "var": (lambda s, n: (0.0, (s[1] - s[0]) ** 2), True),
    "softmax": (lambda s, n: (0.0, 1.0), False),
    "cumsum": (lambda s, n: (n * min(s[0], 0.0), n * max(s[1], 0.0)), False),
}  # fmt: skip


def operations(
    described: Sequence[str], ranges: Mapping[str, Sequence[Span]]
) -> list[tuple[str, int, Apply]]:
    """The operations a graph is drawn from, with their weights: those the target MLX
    describes (``described``: qualified names). A unary operation's domain is bounded where
    the catalogue's plain call of it is (``ranges``: see :func:`.generate.example_ranges`)."""
    table: list[tuple[str, int, Apply]] = []
    for name, f in MATH.items():
        lo, hi = (ranges.get(f"mx.{name}") or [DEFAULT])[0]
        domain = (lo if lo > DEFAULT[0] else -math.inf, hi if hi < DEFAULT[1] else math.inf)
        table.append((f"mx.{name}", 1, unary(name, f, domain)))
    table += [(f"mx.{name}", 3, binary(name, f)) for name, f in BINARY.items()]
    table += [(f"mx.{n}", 3, reduction(n, *how)) for n, how in REDUCTIONS.items()]
    table += [("mx.reshape", 3, reshaped), ("mx.transpose", 3, transposed),
              ("mx.broadcast_to", 3, broadcast_to), ("mx.matmul", 8, matmul), ("mx.where", 4, where),
              ("mx.split", 4, split), ("mx.divmod", 2, divmod_)]  # fmt: skip
    table += [(f"linalg.{n}", 1, linalg(n)) for n in ("qr", "eigh", "svd")]
    table = [row for row in table if row[0] in described]
    return table + [(name, 4, view(name)) for name in VIEWS]  # indexing: every release has it
