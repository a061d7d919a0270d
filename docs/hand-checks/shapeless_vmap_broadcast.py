# mx.compile(mx.vmap(F), shapeless=True) on its first call, against the per-example results
# worked out by hand (broadcast_arrays(2.0, v)[0] is 2 everywhere; the gradient of sum(v) is
# ones, of sum(v ** 2) 2 v, of sum(2 v) 2; ones_like is ones) and against a Python loop over the
# rows without vmap. The first call traces at the call's own shapes, so the documented limit of
# shapeless compilation (graphs that depend on their input shapes follow the traced shapes)
# cannot apply. Exits 1 when MLX differs.
import sys
import mlx.core as mx, numpy as np

xn = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
cases = (
    ("broadcast_arrays(2.0, v)[0]", lambda v: mx.broadcast_arrays(mx.array(2.0), v)[0], np.full_like(xn, 2)),
    ("grad of sum(v)", lambda v: mx.grad(lambda u: u.sum())(v), np.ones_like(xn)),
    ("grad of sum(square(v))", lambda v: mx.grad(lambda u: mx.square(u).sum())(v), 2 * xn),
    ("grad of sum(v ** 2)", lambda v: mx.grad(lambda u: (u**2).sum())(v), 2 * xn),
    ("grad of sum(v * 2)", lambda v: mx.grad(lambda u: (u * 2).sum())(v), np.full_like(xn, 2)),
    ("grad of sum(v * v) (control)", lambda v: mx.grad(lambda u: (u * u).sum())(v), 2 * xn),
    ("ones_like(v)", mx.ones_like, np.ones_like(xn)),
)
wrong = False
for what, per_row, want in cases:
    loop = np.stack([np.array(per_row(mx.array(r))) for r in xn])  # no vmap, no compile
    assert np.allclose(loop, want), what
    eager = np.array(mx.vmap(per_row)(mx.array(xn)))
    plain = np.array(mx.compile(mx.vmap(per_row))(mx.array(xn)))
    try:
        got = np.array(mx.compile(mx.vmap(per_row), shapeless=True)(mx.array(xn)))
        seen = f"shape {got.shape} {got.ravel().tolist()}"
        ok = got.shape == want.shape and np.allclose(got, want)
    except ValueError as e:
        seen, ok = f"raised {e}", False
    wrong |= not ok
    print(f"{what}: by hand {want.shape}; eager vmap {'right' if np.allclose(eager, want) else 'WRONG'},"
          f" compiled {'right' if np.allclose(plain, want) else 'WRONG'}, shapeless first call {seen}:",
          "right" if ok else "WRONG")
print(mx.__version__)
sys.exit(1 if wrong else 0)
