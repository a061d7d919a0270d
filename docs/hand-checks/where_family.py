# jvp of tril, triu, nan_to_num and vjp of median against derivatives worked out by hand:
# tril/triu/nan_to_num are linear masks on finite inputs (tangent = the same mask of t);
# d median(x)/dx is 1 at the median element (odd length), 0 elsewhere.
import mlx.core as mx, numpy as np
x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]], np.float32)
t = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], np.float32)
def jvp(f):
    try:
        out = mx.jvp(f, [mx.array(x)], [mx.array(t)])[1][0]
        return np.array(out.astype(mx.float32)), str(out.dtype)
    except Exception as e:
        return None, type(e).__name__
import sys
only = sys.argv[1] if len(sys.argv) > 1 else None
for name, f, want in [
    ("tril", lambda a: mx.tril(a), np.tril(t)),
    ("triu", lambda a: mx.triu(a), np.triu(t)),
    ("nan_to_num", lambda a: mx.nan_to_num(a), t),
]:
    if only not in (None, name):
        continue
    got, dtype = jvp(f)
    ok = got is not None and np.allclose(got, want)
    print(f"jvp {name:11} {'right' if ok else 'wrong'} ({dtype})")
if only not in (None, "median"):
    raise SystemExit
v = np.array([0.3, -1.2, 2.5, 0.9, 1.7], np.float32)  # median 0.9, at index 3
g = np.array(mx.grad(lambda a: mx.median(a))(mx.array(v)))
print("vjp median  ", "right" if np.allclose(g, [0, 0, 0, 1, 0]) else f"wrong {g.tolist()}")
print(mx.__version__)
