"""jvp of a masked assignment x[mask] = u with u alone traced (mlx#3633's masked_scatter part).

Run with a release's interpreter; a release with the bug dies of SIGSEGV here.
"""

import mlx.core as mx
import numpy as np

x = mx.array([1.0, 2.0, 3.0, 4.0, 5.0])
mask = mx.array([True, False, True, False, True])


def f(u):
    y = mx.array(x)
    y[mask] = u
    return y


u = mx.array([10.0, 20.0, 30.0])
t = mx.array([1.0, 2.0, 3.0])
try:
    out, (tan,) = mx.jvp(f, [u], [t])
    print(mx.__version__, "value", np.array(out[0]).tolist(), "tangent", np.array(tan).tolist())
    print("by hand: tangent [1.0, 0.0, 2.0, 0.0, 3.0]")
except Exception as e:
    print(mx.__version__, "raised", type(e).__name__, str(e)[:120])
