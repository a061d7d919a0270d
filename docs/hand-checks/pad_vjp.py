# The vjp of a pad over some of the axes, seen two ways, against gradients worked out by hand:
# (1) vjp of vmap(pad(r, [(1, 2)])) over the rows of x (3, 2): pad is linear, its vjp is the
#     cotangent with the padding cut off, w[:, 1:3];
# (2) mx.convolve's mixed second derivative: with f(a, v) = sum(c * convolve(a, v)) (mode
#     "full"), d/da_i of sum_j tv_j df/dv_j is sum_j tv_j c[i + j] (np.correlate(c, tv, "valid")).
import mlx.core as mx, numpy as np
x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
w = np.arange(15.0, dtype=np.float32).reshape(3, 5)
_, (g,) = mx.vjp(lambda a: mx.vmap(lambda r: mx.pad(r, [(1, 2)]))(a), [x], [mx.array(w)])
want = w[:, 1:3]
print("vjp of vmap(pad):", g.shape, "right" if g.shape == want.shape and np.allclose(np.array(g), want) else f"wrong, {want.shape} {want.tolist()} expected")
a, v = mx.array([0.5, -1.0, 2.0, 1.5, 0.25]), mx.array([1.0, -0.5, 2.0])
c = np.array([1.0, 2.0, -1.0, 0.5, 0.25, -2.0, 1.5], np.float32); tv = np.array([1.0, 2.0, 3.0], np.float32)
dv = lambda a, v: mx.grad(lambda a, v: (mx.convolve(a, v) * mx.array(c)).sum(), argnums=1)(a, v)
want = np.correlate(c, tv, "valid")
try:
    h = mx.grad(lambda a: (dv(a, v) * mx.array(tv)).sum())(a)
    print("convolve, d/da <d/dv f, tv>:", "right" if np.allclose(np.array(h), want) else f"wrong {np.array(h).tolist()}", want.tolist())
except Exception as e:
    print("convolve, d/da <d/dv f, tv>: raises", type(e).__name__, e)
print(mx.__version__)
