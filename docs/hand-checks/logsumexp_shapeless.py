# The vjp, and the forward alone, of logsumexp over axis 1 compiled shapeless at (2, 3, 4) and
# called at (3, 4, 5): MLX reshapes to the traced shape (a graph conditional on its shapes).
import mlx.core as mx, numpy as np
def vjp(x, c):
    return mx.vjp(lambda x: mx.logsumexp(x, axis=1), [x], [c])[1][0]
g = mx.compile(vjp, shapeless=True)
x0 = mx.random.normal((2, 3, 4)); g(x0, mx.ones((2, 4)))
x1 = mx.random.normal((3, 4, 5)); c1 = mx.ones((3, 5))
try:
    out = g(x1, c1); print("shapeless:", np.allclose(np.array(out), np.array(vjp(x1, c1)), atol=1e-5))
except Exception as e:
    print("shapeless raises:", e)
# the forward alone, and the last axis
f = mx.compile(lambda x: mx.logsumexp(x, axis=1), shapeless=True); f(x0)
print("forward axis=1:", np.allclose(np.array(f(x1)), np.array(mx.logsumexp(x1, axis=1)), atol=1e-5))
h = mx.compile(lambda x, c: mx.vjp(lambda x: mx.logsumexp(x, axis=-1), [x], [c])[1][0], shapeless=True); h(x0, mx.ones((2, 3)))
try:
    print("vjp axis=-1:", np.allclose(np.array(h(x1, mx.ones((3, 4)))), np.array(mx.vjp(lambda x: mx.logsumexp(x, axis=-1), [x1], [mx.ones((3, 4))])[1][0]), atol=1e-5))
except Exception as e:
    print("vjp axis=-1 raises:", e)
print(mx.__version__)
