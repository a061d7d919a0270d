# split, unstack and a slice of a reversed bfloat16 view (negative strides), eager, against
# the same operation on a contiguous copy (and NumPy on the float32 values).
import mlx.core as mx, numpy as np
x = np.arange(1.0, 13.0, dtype=np.float32).reshape(2, 6)
for dt in (mx.bfloat16, mx.float16, mx.float32):
    v = mx.array(x).astype(dt)[::-1]
    got = {
        "split": mx.split(v, [1, 4], axis=1)[0],
        "unstack": mx.unstack(v, axis=1)[0],
        "slice": v[:, 0:1],
    }
    want = {"split": x[::-1][:, 0:1], "unstack": x[::-1][:, 0], "slice": x[::-1][:, 0:1]}
    print(dt, {k: ("right" if np.allclose(np.array(g.astype(mx.float32)), want[k]) else np.array(g.astype(mx.float32)).ravel().tolist()) for k, g in got.items()})
print(mx.__version__)
