# The derivative of mx.sign at complex z (sign(z) = z / |z|, smooth away from 0) and the
# second derivative of mx.abs at complex z (its first derivative is built on sign), against
# formulas worked out by hand, r = |z|:
#   d sign(z)[t] = t / r - z Re(conj(z) t) / r^3
#   d^2 |a + ib| / da^2 = b^2 / r^3
# Exits 1 when MLX differs.
import sys
import mlx.core as mx, numpy as np

wrong = False
for z, t in ((0.7 - 1.1j, 1.0 + 0.0j), (0.7 - 1.1j, 0.0 + 1.0j), (-2.0 + 0.5j, 0.3 - 0.4j)):
    r = abs(z)
    want = t / r - z * (np.conj(z) * t).real / r**3
    _, (got,) = mx.jvp(mx.sign, [mx.array(z, dtype=mx.complex64)], [mx.array(t, dtype=mx.complex64)])
    ok = np.isclose(complex(got.item()), want, rtol=1e-4, atol=1e-6)
    wrong |= not ok
    print(f"jvp of sign at {z} along {t}: mlx {complex(got.item()):.5f}, by hand {want:.5f}:",
          "right" if ok else "WRONG")
a, b = 0.7, -1.1
r = np.hypot(a, b)
first = float(mx.grad(lambda u: mx.abs(u + 1j * mx.array(b)))(mx.array(a)))
print(f"d|a + ib|/da at a={a}, b={b}: mlx {first:.5f}, by hand a / r = {a / r:.5f} (control)")
d_abs = lambda u: mx.grad(lambda v: mx.abs(v + 1j * mx.array(b)))(u)
_, (second,) = mx.jvp(d_abs, [mx.array(a)], [mx.array(1.0)])
ok = np.isclose(float(second), b**2 / r**3, rtol=1e-4)
wrong |= not ok
print(f"d2|a + ib|/da2: mlx {float(second):.5f}, by hand b^2 / r^3 = {b**2 / r**3:.5f}:",
      "right" if ok else "WRONG")
print(mx.__version__)
sys.exit(1 if wrong else 0)
