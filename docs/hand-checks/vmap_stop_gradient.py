# Gradients through mx.vmap of functions that hold a factor fixed with mx.stop_gradient,
# against the same gradient taken row by row without vmap (a Python loop of mx.grad).
import mlx.core as mx, numpy as np
x = mx.array([[1.0, 2.0, -0.5], [3.0, -1.0, 0.25]])
FUNCS = {
    "stop_gradient(r) * r": lambda r: mx.stop_gradient(r) * r,
    "stop_gradient(r * r) + r": lambda r: mx.stop_gradient(r * r) + r,
    "exp(r) * stop_gradient(sin(r))": lambda r: mx.exp(r) * mx.stop_gradient(mx.sin(r)),
}
for name, f in FUNCS.items():
    through_vmap = np.array(mx.grad(lambda v: mx.vmap(f)(v).sum())(x))
    row_by_row = np.stack([np.array(mx.grad(lambda r: f(r).sum())(x[i])) for i in range(x.shape[0])])
    verdict = "right" if np.allclose(through_vmap, row_by_row) else f"wrong {through_vmap.tolist()} vs {row_by_row.tolist()}"
    print(f"{name:32} {verdict}")
print(mx.__version__)
