# Operations on a reversed view (negative strides), eager, against NumPy on the same values.
import mlx.core as mx, numpy as np
x = np.arange(1.0, 13.0, dtype=np.float32).reshape(2, 6)
v = mx.array(x)[::-1]  # rows swapped, a view with a negative stride
ref = x[::-1]
checks = {
    "split(v, [1, 4], axis=1)[0]": (mx.split(v, [1, 4], axis=1)[0], np.split(ref, [1, 4], axis=1)[0]),
    "unstack(v, axis=1)[0]": (mx.unstack(v, axis=1)[0] if hasattr(mx, "unstack") else None, ref[:, 0]),
    "v[:, 0:1]": (v[:, 0:1], ref[:, 0:1]),
    "linalg.cross(v[:, :3], v[:, 3:])": (mx.linalg.cross(v[:, :3], v[:, 3:]), np.cross(ref[:, :3], ref[:, 3:])),
}
for name, (got, want) in checks.items():
    if got is None:
        print(f"{name:34} (not in this release)"); continue
    print(f"{name:34} {'right' if np.allclose(np.array(got), want) else 'wrong: ' + str(np.array(got).tolist())}")
print(mx.__version__)
