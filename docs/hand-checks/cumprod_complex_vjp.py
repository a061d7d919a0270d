# The vjp of mx.cumprod (and its alias mx.cumulative_prod) at complex64 z, against the
# Jacobian written out by hand: p_k = z_0 ... z_k, so dp_k/dz_j = p_k / z_j for j <= k.
# MLX's convention for a complex vjp is w^T conj(J) (multiplication by a constant and mx.cumsum
# follow it, checked below; mx.exp too from 0.32.0); NumPy complex128 gives the expected value.
# Exits 1 when cumprod differs.
import sys
import mlx.core as mx, numpy as np

z = np.array([0.7 + 0.4j, -1.1 + 0.3j, 0.5 - 0.9j])
w = np.array([1.0 - 0.5j, 0.3 + 0.2j, -0.7 + 1.1j])
p = np.cumprod(z)
jac = {
    "cumprod": np.array([[p[k] / z[j] if j <= k else 0 for j in range(3)] for k in range(3)]),
    "cumsum": np.tril(np.ones((3, 3))),
    "exp": np.diag(np.exp(z)),
    "times c": np.diag(np.full(3, 0.3 - 1.2j)),
}
wrong = False
for name, fn in (("times c", lambda v: v * mx.array(0.3 - 1.2j, dtype=mx.complex64)),
                 ("exp", mx.exp), ("cumsum", mx.cumsum), ("cumprod", mx.cumprod),
                 ("cumulative_prod", getattr(mx, "cumulative_prod", None))):
    if fn is None:
        continue
    J = jac["cumprod" if name == "cumulative_prod" else name]
    _, (g,) = mx.vjp(fn, [mx.array(z.astype(np.complex64))], [mx.array(w.astype(np.complex64))])
    got, want = np.array(g), w @ J.conj()
    ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    wrong |= not ok and name.startswith("cum")
    print(f"{name:15} mlx {np.round(got, 4)}  by hand w^T conj(J) {np.round(want, 4)}:",
          "right" if ok else f"WRONG (w^T J without the conjugate is {np.round(w @ J, 4)})")
# Real input: the same formula, no conjugate to miss.
x, c = np.array([0.7, -1.1, 0.5]), np.array([1.0, 0.3, -0.7])
J = np.array([[np.prod(x[: k + 1]) / x[j] if j <= k else 0 for j in range(3)] for k in range(3)])
g = np.array(mx.vjp(mx.cumprod, [mx.array(x.astype(np.float32))], [mx.array(c.astype(np.float32))])[1][0])
print("cumprod float32 mlx", np.round(g, 4), "by hand", np.round(c @ J, 4), "(control)")
print(mx.__version__)
sys.exit(1 if wrong else 0)
