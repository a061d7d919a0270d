# mx.vmap of sort and argsort along axis -1 (their default), mapped over the columns of a
# (4, 3) array (in_axes=1): each column is a lane, sorted on its own, as NumPy does per column.
import mlx.core as mx, numpy as np
a = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0], [2.5, -3.0, 1.5], [1.0, 0.0, 9.0]], np.float32)
for name, op, ref in [("sort", mx.sort, np.sort), ("argsort", mx.argsort, np.argsort)]:
    got = np.array(mx.vmap(lambda col: op(col, axis=-1), in_axes=1, out_axes=1)(mx.array(a)))
    want = ref(a, axis=0)  # column by column
    print(f"vmap {name:7} in_axes=1:", "right" if np.array_equal(got, want) else f"wrong {got.T.tolist()}, per column {want.T.tolist()}")
    got0 = np.array(mx.vmap(lambda row: op(row, axis=-1), in_axes=0)(mx.array(a)))
    print(f"vmap {name:7} in_axes=0:", "right" if np.array_equal(got0, ref(a, axis=1)) else "wrong")
# three 1-element slices: argsort of one element is 0
print("argsort of [3], [1], [2] under vmap(in_axes=-1):", np.array(mx.vmap(mx.argsort, in_axes=-1, out_axes=-1)(mx.array([[3.0, 1.0, 2.0]]))).tolist(), "(by hand [[0, 0, 0]])")
print(mx.__version__)
