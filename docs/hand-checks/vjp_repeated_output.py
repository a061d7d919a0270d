# mx.vjp of a function that returns one array in two output places: the vjp of (y, y) with
# cotangents (c1, c2) is the vjp of y with c1 + c2, since the function is y -> (y, y) composed
# with y(x). The expected values come from float64 central differences of NumPy's sin, weighted
# by c1 + c2, and from mx.grad of the weighted sum (one scalar output, no repeated output).
# Two equal arrays computed apart, (sin(a), sin(a)), are the control. Exits 1 when MLX differs.
import sys
import mlx.core as mx, numpy as np

x = np.array([0.3, -1.2, 0.7])
c1, c2 = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])
h = 1e-6
fd = np.array([(np.dot(c1 + c2, np.sin(x + h * e)) - np.dot(c1 + c2, np.sin(x - h * e))) / (2 * h)
               for e in np.eye(3)])
xs, cs = [mx.array(x.astype(np.float32))], [mx.array(c1.astype(np.float32)), mx.array(c2.astype(np.float32))]

def once(a):
    y = mx.sin(a)
    return y, y

cases = {
    "(sin(a), sin(a)) computed apart (control)": lambda a: (mx.sin(a), mx.sin(a)),
    "y = sin(a); (y, y)": once,
    "(a, a)": lambda a: (a, a),
    "y = sin(a); (y, y, 2 * y)": lambda a: (lambda y: (y, y, 2 * y))(mx.sin(a)),
}
expected = {
    "(sin(a), sin(a)) computed apart (control)": fd,
    "y = sin(a); (y, y)": fd,
    "(a, a)": c1 + c2,
    "y = sin(a); (y, y, 2 * y)": fd + np.cos(x) * 2 * 5.0,
}
wrong = False
for what, f in cases.items():
    cots = cs if not what.endswith("2 * y)") else cs + [mx.array(np.full(3, 5.0, np.float32))]
    got = np.array(mx.vjp(f, xs, cots)[1][0])
    ok = np.allclose(got, expected[what], rtol=1e-4, atol=1e-5)
    wrong |= not ok
    print(f"{what}: vjp {np.round(got, 4)}, expected {np.round(expected[what], 4)}", "" if ok else "WRONG")
by_grad = np.array(mx.grad(lambda a: (once(a)[0] * cs[0]).sum() + (once(a)[1] * cs[1]).sum())(xs[0]))
print("mx.grad of <c1, y> + <c2, y>:", np.round(by_grad, 4), "(agrees with the differences)" if np.allclose(by_grad, fd, rtol=1e-4) else "WRONG")
print("mlx", mx.__version__)
sys.exit(1 if wrong else 0)
