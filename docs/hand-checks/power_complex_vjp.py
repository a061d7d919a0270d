"""The vjp of mx.power at complex input, by each argument, against the Jacobian worked out by
hand in NumPy complex128: d a^b/da = b a^(b-1), d a^b/db = log(a) a^b. MLX's convention for
the vjp of a complex function is w conj(J) (multiplication, x * x and mx.exp follow it: the
controls). Exits 1 while mx.power's vjp differs from w conj(J)."""

import sys

import mlx.core as mx
import numpy as np

a0, b0, w0 = 1.0 + 1.3828349j, -0.9208531 - 1.8361059j, 0.6 - 0.8j


def c64(z: complex) -> mx.array:
    return mx.array(z, dtype=mx.complex64)


def vjp(f, x: complex) -> complex:
    return complex(mx.vjp(f, [c64(x)], [c64(w0)])[1][0].item())


rows = [
    ("control: x * k", vjp(lambda x: x * c64(0.3 + 0.7j), a0), w0 * np.conj(0.3 + 0.7j)),
    ("control: x * x", vjp(lambda x: x * x, a0), w0 * np.conj(2 * a0)),
    ("control: exp(x)", vjp(mx.exp, a0), w0 * np.conj(np.exp(a0))),
    ("power(x, b) by x", vjp(lambda x: mx.power(x, c64(b0)), a0), w0 * np.conj(b0 * a0 ** (b0 - 1))),
    ("power(a, y) by y", vjp(lambda y: mx.power(c64(a0), y), b0), w0 * np.conj(np.log(a0) * a0**b0)),
    ("power(x, 2) by x", vjp(lambda x: mx.power(x, c64(2)), a0), w0 * np.conj(2 * a0)),
]
wrong = False
for name, got, want in rows:
    ok = abs(got - want) <= 1e-4 * max(1.0, abs(want))
    wrong |= not ok and not name.startswith("control")
    print(f"{name:18} mlx {got:.5f}   w conj(J) {want:.5f}   {'right' if ok else 'WRONG'}")
print(f"mlx {mx.__version__}")
sys.exit(1 if wrong else 0)
