# mx.vmap of mx.flatten(t, 0, 1) over each axis of a (2, 3, 4) array: each lane is a
# 2-D slice flattened to one row, so mapping over axis k must give shape (size_k, 24 / size_k)
# and rows equal to the slices reshaped one at a time.
import mlx.core as mx, numpy as np
a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
for k in range(3):
    got = mx.vmap(lambda t: mx.flatten(t, 0, 1), in_axes=k)(mx.array(a))
    rows = np.stack([np.take(a, i, axis=k).reshape(-1) for i in range(a.shape[k])])
    same = got.shape == rows.shape and np.array_equal(np.array(got), rows)
    print(f"in_axes={k}: shape {got.shape}, by hand {rows.shape}:", "right" if same else "WRONG")
print(mx.__version__)
