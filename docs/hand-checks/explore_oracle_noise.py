# The exploring sweep's findings of 2026-11-28 that were not MLX bugs, checked against
# derivatives worked out by hand at the sweep's own points. MLX's float64 kernels (cos, erfinv,
# exp, the convolutions) are accurate to about float32's 1e-7, so central differences of them
# with a step of 1e-6 are off by percents; the derivatives themselves are right. Exits 1 when
# MLX differs from the formula. Written for 0.32.4 (0.31.2 has no jvp of logcumsumexp).
import sys
from math import erf, exp, pi, sqrt
import mlx.core as mx, numpy as np

def erfinv(y):  # Newton on erf, in float64
    x = 0.0
    for _ in range(50):
        x -= (erf(x) - y) / (2 / sqrt(pi) * exp(-x * x))
    return x

wrong = False
def check(what, got, want, rtol=1e-6):
    global wrong
    ok = np.allclose(got, want, rtol=rtol, atol=1e-9)
    wrong |= not ok
    print(f"{what}: mlx {np.round(np.ravel(got), 7)}, by hand {np.round(np.ravel(want), 7)}:", "right" if ok else "WRONG")

f64 = lambda v: mx.array(v, dtype=mx.float64)
for name, f, x, d in (("cos", mx.cos, 1.0, -np.sin(1.0)), ("erfinv", mx.erfinv, 0.5, sqrt(pi) / 2 * exp(erfinv(0.5) ** 2)),
                      ("arcsin", mx.arcsin, 0.7015298, 1 / np.sqrt(1 - 0.7015298**2))):
    check(f"float64 jvp of {name} at {x}", float(mx.jvp(f, [f64(x)], [f64(1.0)])[1][0]), d)
    h = 1e-6
    print(f"  (central differences of MLX's float64 {name}: {(float(f(f64(x + h))) - float(f(f64(x - h)))) / (2 * h):.7f})")
rng = np.random.default_rng(0)
t = rng.standard_normal(6)
_, (jl,) = mx.jvp(mx.logcumsumexp, [f64(np.ones((2, 1, 3)))], [f64(t.reshape(2, 1, 3))])
check("float64 jvp of logcumsumexp at ones (the running mean of t)", np.array(jl), np.cumsum(t) / np.arange(1, 7))
a, ta = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
_, (ji,) = mx.jvp(lambda z: mx.fft.irfft2(z, axes=None, norm="ortho"), [f64(a)], [f64(ta)])
check("float64 jvp of irfft2 (linear: irfft2 of the tangent)", np.array(ji), np.fft.irfftn(ta, norm="ortho"), rtol=1e-5)
x, c = rng.uniform(-2, 2, (2, 6, 2)), rng.standard_normal((2, 6, 2))
g = mx.vjp(lambda w: mx.conv1d(f64(x), w, 1, 0, 1, 2), [f64(np.ones((2, 1, 1)))], [f64(c)])[1][0]
check("float64 vjp of conv1d(groups=2) by the weight", np.array(g).ravel(), [(c[:, :, o] * x[:, :, o]).sum() for o in range(2)], rtol=1e-5)
for name, npf in (("arcsinh", np.arcsinh), ("cosh", np.cosh), ("arctanh", np.arctanh), ("arcsin", np.arcsin)):
    are, aim, h = 0.7015298, 0.1028485, 1e-7
    d = (npf(are + 1j * (aim + h)) - npf(are + 1j * (aim - h))) / (2 * h)
    got = [float(mx.grad(lambda ai: part(getattr(mx, name)(mx.array(are) + 1j * ai)))(mx.array(aim))) for part in (mx.real, mx.imag)]
    check(f"complex64 d(real, imag) {name}(a + ib) / db", got, [d.real, d.imag], rtol=1e-4)
# vmap refuses out_axes=1 for an output whose lane is a scalar, real or complex alike.
vj = lambda x, b: mx.vjp(lambda q, w: mx.minimum(q, w), [x, b], [mx.ones(x.shape)])[1][1]
try:
    mx.vmap(vj, in_axes=(1, None), out_axes=1)(mx.ones((1, 3)), mx.array(0.5))
except IndexError as e:
    print("vmap with out_axes=1 of a scalar per lane refuses:", e)
check("the same with out_axes=0", np.array(mx.vmap(vj, in_axes=(1, None), out_axes=0)(mx.ones((1, 3)), mx.array(0.5))), [1.0, 1.0, 1.0])
print(mx.__version__)
sys.exit(1 if wrong else 0)
