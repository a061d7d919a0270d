# The jvp and the vjp of mx.max / mx.min are two views of one linear map J: the jvp along the
# basis tangent e_i is column i of J, the vjp of the basis cotangent e_k is row k, so the matrix
# built from jvps must equal the one built from vjps (<vjp(c), t> = <c, jvp(t)>). With a unique
# maximum both must be float64 central differences of NumPy's max (the control); at a tie max
# has no derivative and any choice is a convention, but jvp and vjp must make the same one.
# Exits 1 when they differ.
import sys
import mlx.core as mx, numpy as np

def jacobians(f, xn):
    x = mx.array(xn.astype(np.float32))
    out = f(x)
    by_jvp = np.stack([np.array(mx.jvp(f, [x], [mx.array(e.reshape(xn.shape))])[1][0]).ravel()
                       for e in np.eye(xn.size, dtype=np.float32)], axis=1)
    by_vjp = np.stack([np.array(mx.vjp(f, [x], [mx.array(e.reshape(out.shape))])[1][0]).ravel()
                       for e in np.eye(out.size, dtype=np.float32)], axis=0)
    return by_jvp, by_vjp

def fd(g, xn, h=1e-6):
    cols = [(g(xn + h * e.reshape(xn.shape)) - g(xn - h * e.reshape(xn.shape))).ravel() / (2 * h)
            for e in np.eye(xn.size)]
    return np.stack(cols, axis=1)

wrong = False
for what, f, g, xn in (
    ("max of [1, 2, 3] (control, unique)", mx.max, np.max, np.array([1.0, 2.0, 3.0])),
    ("max of [1, 3, 3]", mx.max, np.max, np.array([1.0, 3.0, 3.0])),
    ("min of [2, -1, -1]", mx.min, np.min, np.array([2.0, -1.0, -1.0])),
    ("max over axis 1 of [[1, 3, 3], [2, 2, 0]]", lambda v: mx.max(v, axis=1),
     lambda v: np.max(v, axis=1), np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])),
    ("max over both axes of [[3, 1], [0, 3]]", lambda v: mx.max(v, axis=(0, 1)),
     lambda v: np.max(v, axis=(0, 1)), np.array([[3.0, 1.0], [0.0, 3.0]])),
    ("maximum(a, b) at a = b = 3 (control)", lambda v: mx.maximum(v[:1], v[1:]),
     lambda v: np.maximum(v[:1], v[1:]), np.array([3.0, 3.0])),
):
    by_jvp, by_vjp = jacobians(f, xn)
    ok = np.allclose(by_jvp, by_vjp)
    wrong |= not ok
    line = f"{what}: J by jvp {by_jvp.tolist()}, by vjp {by_vjp.tolist()}"
    if "unique" in what:
        line += f", float64 differences {fd(g, xn).round(6).tolist()}"
    print(line + ":", "adjoint" if ok else "NOT ADJOINT")
# One order up: the Hessian of max(x) ** 2 at [1, 3, 3], forward over reverse (jvp of the
# gradient, column by column) against reverse over reverse (vjp of the gradient, row by row).
sq_max = mx.grad(lambda v: mx.max(v) ** 2)
fwd, rev = jacobians(sq_max, np.array([1.0, 3.0, 3.0]))
ok = np.allclose(fwd, rev)
wrong |= not ok
print(f"Hessian of max(x) ** 2 at [1, 3, 3]: forward over reverse {fwd.tolist()}, reverse over reverse"
      f" {rev.tolist()}:", "agree" if ok else "DISAGREE")
print(mx.__version__)
sys.exit(1 if wrong else 0)
