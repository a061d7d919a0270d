"""mx.max, mx.min and mx.minmax over an axis that has elements, of an array that has none
(shape (0, 3), axis -1): NumPy gives an empty result, and so does MLX since its pull request
4079 (0.32.1), which made max and min refuse only a reduced axis that is empty. Their vjp
gives zeros of shape (0, 3). Their jvp should give an empty result as the function does;
it raises, since Reduce::jvp takes the tangent at argmax / argmin, which still refuse any
array with no elements (NumPy's argmax of the same gives shape (0,)). Exits 1 while a jvp
raises where its function does not."""

import sys

import mlx.core as mx
import numpy as np

print("mlx", mx.__version__)
a = mx.zeros((0, 3))
print("NumPy max over axis -1 of (0, 3):", np.max(np.zeros((0, 3)), axis=-1).shape,
      "argmax:", np.argmax(np.zeros((0, 3)), axis=-1).shape)
wrong = False
for name in ("max", "min", "minmax"):
    if not hasattr(mx, name):
        print(f"mx.{name}: not in this release")
        continue
    f = lambda x, name=name: getattr(mx, name)(x, -1, True)  # noqa: E731
    try:
        outs = f(a)
    except ValueError as e:
        print(f"mx.{name}: the function itself raises here ({e}): nothing to differentiate")
        continue
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    cot = [mx.zeros_like(o) for o in outs]
    print(f"mx.{name}: {[tuple(o.shape) for o in outs]}; vjp",
          [tuple(g.shape) for g in mx.vjp(f, [a], cot)[1]], end="; ")
    try:
        print("jvp", [tuple(t.shape) for t in mx.jvp(f, [a], [mx.zeros_like(a)])[1]])
    except ValueError as e:
        wrong = True
        print(f"jvp raises: {e}  WRONG")
sys.exit(1 if wrong else 0)
