# A strided slice that keeps one element of a span of two or more: its forward value,
# its gradient and its vmap, each against NumPy. The gradient of sum(w * z[s]) is w
# added at the entries z[s] selects (np.add.at); vmap of r[s] is r[s] for each row.
import mlx.core as mx, numpy as np

print("mlx", mx.__version__)
z = np.zeros(6)
for s in (slice(0, 3, 3), slice(4, 1, -3), slice(2, 4, 5), slice(0, 4, 2)):  # last: two elements
    sel = np.arange(6)[s]
    fwd = np.array(mx.array(np.arange(6.0))[s]).tolist()
    w = np.linspace(1.0, 2.0, sel.size)
    g = np.array(mx.grad(lambda v: (v[s] * mx.array(w.astype(np.float32))).sum())(mx.zeros(6)))
    want = np.zeros(6)
    np.add.at(want, sel, w)
    v = np.array(mx.vmap(lambda r: r[s])(mx.array(np.arange(12.0).reshape(2, 6))))
    vwant = np.arange(12.0).reshape(2, 6)[:, s]
    print(f"{str(s):22} forward {fwd} (numpy {np.arange(6.0)[s].tolist()}); "
          f"grad {'right' if np.allclose(g, want) else f'wrong {g.tolist()} for {want.tolist()}'}; "
          f"vmap {'right' if v.shape == vwant.shape and np.allclose(v, vwant) else f'wrong shape {v.shape} for {vwant.shape}'}")
