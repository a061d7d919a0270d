# A captured -0.0 (an array made outside the compiled function) under mx.compile, against
# IEEE arithmetic in NumPy (float64), per operation.
import mlx.core as mx, numpy as np
a, c = np.array([0.548, -1.25]), mx.array(-0.0)
with np.errstate(all="ignore"):
    cases = [
        ("divide a / c", lambda x: x / c, np.divide(a, -0.0)),
        ("floor_divide a // c", lambda x: x // c, np.floor_divide(a, -0.0)),
        ("arctan2(c, -a)", lambda x: mx.arctan2(c, -x), np.arctan2(-0.0, -a)),
        ("arctan2(c, a) [atan2]", lambda x: mx.atan2(c, x), np.arctan2(-0.0, a)),
    ]
for name, f, ref in cases:
    eager, compiled = f(mx.array(a)).tolist(), mx.compile(f)(mx.array(a)).tolist()
    print(f"{name:24} numpy {ref.tolist()!r:>20} eager {eager!r:>20} compiled {compiled!r:>20}")
print(mx.__version__)
