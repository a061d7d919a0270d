"""A shapeless compiled elementwise function of an array with an empty axis and one of
size 1 on that axis: NumPy's broadcasting (and MLX's eager ops, and mx.compile without
shapeless) give the empty axis, size 0; the shapeless compiled kernel gives size 1. Then the
vjp of mx.prod over two axes of an empty array, which multiplies such a pair inside
(Reduce::vjp): eager and plain compile give zeros of the input's shape, shapeless compile
raises. Exits 1 while the shapeless shapes differ from NumPy's."""

import sys

import mlx.core as mx
import numpy as np

print("mlx", mx.__version__)
wrong = False
for a_shape, b_shape in [((0, 3), (1, 3)), ((1, 3), (0, 3)), ((2, 0), (2, 1)), ((0,), ())]:
    a, b = mx.zeros(a_shape), mx.ones(b_shape)
    want = np.broadcast_shapes(a_shape, b_shape)
    rows = [
        ("eager", (a * b).shape),
        ("compile", mx.compile(lambda x, y: x * y)(a, b).shape),
        ("compile(shapeless)", mx.compile(lambda x, y: x * y, shapeless=True)(a, b).shape),
    ]
    for how, got in rows:
        bad = tuple(got) != tuple(want)
        wrong |= bad
        print(f"{a_shape} * {b_shape}: {how:<20} {tuple(got)}  NumPy {want}{'  WRONG' if bad else ''}")


def prod_loss(x: mx.array) -> mx.array:
    return mx.prod(x, axis=(0, 1)).sum()


x = mx.zeros((0, 3))
for how, fn in [
    ("eager", mx.grad(prod_loss)),
    ("compile", mx.compile(mx.grad(prod_loss))),
    ("compile(shapeless)", mx.compile(mx.grad(prod_loss), shapeless=True)),
]:
    try:
        got = fn(x)
        print(f"grad of prod over (0, 1) at (0, 3): {how:<20} {tuple(got.shape)}")
    except Exception as e:  # noqa: BLE001 - the error is what is checked
        wrong = True
        print(f"grad of prod over (0, 1) at (0, 3): {how:<20} raises {e}")
sys.exit(1 if wrong else 0)
