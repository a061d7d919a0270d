# mx.vmap of indexed updates x.at[i].op(y), each slice with its own indices (repeated, so the
# reductions combine), against NumPy's unbuffered ufunc.at on each slice; and the vjp of x[2]
# vmapped with its cotangent on axis 1, whose value by hand is zeros with row 2 = the cotangent.
import mlx.core as mx, numpy as np
x = np.array([[[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.0, -3.0], [-0.5, 1.5, 2.5]]] * 3, np.float32)
x *= np.array([1.0, -1.0, 2.0], np.float32)[:, None, None]           # 3 slices of (4, 3)
y = np.array([[[5.0, -5.0, 0.25], [-4.0, 6.0, 1.0], [3.0, 3.0, -6.0]]] * 3, np.float32)
y += np.array([0.0, 1.0, -2.0], np.float32)[:, None, None]          # 3 slices of (3, 3)
i = np.array([[2, 0, 2], [1, 3, 1], [0, 0, 3]], np.int32)            # per-slice rows, repeated
for name, ufunc in [("add", np.add), ("multiply", np.multiply), ("minimum", np.minimum), ("maximum", np.maximum)]:
    want = x.copy()
    for b in range(3):
        ufunc.at(want[b], i[b], y[b])
    f = lambda xs, ix, ys: getattr(xs.at[ix], name)(ys)
    for ax in (0, 2):  # the mapped axis of x and y (i is mapped on its own axis 0 or 1)
        got = mx.vmap(f, in_axes=(ax, min(ax, 1), ax), out_axes=0)(
            mx.array(np.moveaxis(x, 0, ax)), mx.array(np.moveaxis(i, 0, min(ax, 1))), mx.array(np.moveaxis(y, 0, ax)))
        got = np.array(got)
        note = "" if np.allclose(got, want) else f" slice 1 {got[1].tolist()}, by hand {want[1].tolist()}"
        print(f"vmap x.at[i].{name:8} in_axes={ax}: {'right' if not note else 'wrong'}{note}")
c = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]], np.float32)  # 3 cotangents of x[2]
want = np.zeros((3, 4, 3), np.float32); want[:, 2] = c
g = lambda xs, cs: mx.vjp(lambda a: a[2], [xs], [cs])[1][0]
for cax in (0, 1):
    got = np.array(mx.vmap(g, in_axes=(0, cax))(mx.array(x), mx.array(np.moveaxis(c, 0, cax))))
    print(f"vmap of the vjp of x[2], cotangent on axis {cax}:", "right" if np.allclose(got, want) else f"wrong, rows 2 {got[:, 2].tolist()}")
print(mx.__version__)
