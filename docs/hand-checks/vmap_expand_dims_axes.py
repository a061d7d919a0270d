# mx.vmap of mx.expand_dims(v, axes) against a Python loop over the slices, stacked on the
# out axis: each lane is expanded on its own, so the two must agree in shape and values.
# Exits 1 when they differ.
import sys
import mlx.core as mx, numpy as np

x = np.arange(6, dtype=np.float32).reshape(2, 3)
wrong = False
for axes, in_axis, out_axis in (((0, 1), 1, 1), ((0, 1), 0, 0), ((0, 1), 1, 0), (0, 1, 1),
                                ((0, 2), 1, 0), ((1, 2), 0, 1)):
    lanes = [np.take(x, i, axis=in_axis) for i in range(x.shape[in_axis])]
    want = np.stack([np.expand_dims(v, axes) for v in lanes], axis=out_axis)  # NumPy, by slice
    got = mx.vmap(lambda v: mx.expand_dims(v, axes), in_axes=in_axis, out_axes=out_axis)(mx.array(x))
    ok = got.shape == want.shape and np.array_equal(np.array(got), want)
    wrong |= not ok
    print(f"axes={axes} in_axes={in_axis} out_axes={out_axis}: vmap {got.shape}, by slice {want.shape}:",
          "right" if ok else "WRONG")
print(mx.__version__)
sys.exit(1 if wrong else 0)
