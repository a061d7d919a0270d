# Does the result of a compiled function live in the buffer of an input whose last
# reference was handed over? Eager code reuses it; compare the data addresses.
import mlx.core as mx, numpy as np
def address(a):
    return np.asarray(a).__array_interface__["data"][0]
def step(p, g):
    return p - 0.1 * g * g        # an SGD-like update: p's buffer can hold the result
for name, fn in [("eager", step), ("compiled", mx.compile(step))]:
    p = mx.random.normal((256, 256)); g = mx.random.normal((256, 256)); mx.eval(p, g)
    where_p = address(p); pn, gn = np.array(p), np.array(g)
    p = fn(p, g)                  # the old p is freed by this assignment
    mx.eval(p)
    print(f"{name:8}: result in the old p's buffer: {address(p) == where_p};",
          "values right" if np.allclose(np.array(p), pn - 0.1 * gn * gn, atol=1e-6) else "values WRONG")
print(mx.__version__)
