"""jvp of arctan2 with both arguments traced, against the analytic derivative (mlx#2453)."""

import mlx.core as mx, numpy as np
y0, x0 = 0.7, -1.3
ty, tx = 0.4, 0.9
_, (t,) = mx.jvp(lambda y, x: mx.arctan2(y, x), [mx.array(y0), mx.array(x0)], [mx.array(ty), mx.array(tx)])
r2 = x0 * x0 + y0 * y0
want = (x0 * ty - y0 * tx) / r2  # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
print(mx.__version__, float(t), round(want, 6), "ok" if abs(float(t) - want) < 1e-5 else "WRONG")
