# Two separately compiled "to unit range" functions with the same body, fed pixels stored
# as uint8, then float16, then bfloat16 (a new function for the last); each against NumPy.
import mlx.core as mx, numpy as np
pixels = np.array([0, 51, 102, 255, 204, 17], dtype=np.float32)
to_unit = mx.compile(lambda img: 2.0 * (img.astype(mx.float32) / 255.0) - 1.0)
other = mx.compile(lambda img: 2.0 * (img.astype(mx.float32) / 255.0) - 1.0)
want = 2.0 * pixels / 255.0 - 1.0
for fn_name, fn, dtype in [("to_unit", to_unit, mx.uint8), ("to_unit", to_unit, mx.float16),
                           ("other", other, mx.bfloat16)]:
    got = np.array(fn(mx.array(pixels).astype(dtype)))
    print(f"{fn_name} on {dtype}:", np.round(got.astype(np.float64), 4).tolist(), "right" if np.allclose(got, want, atol=1e-3) else f"WRONG (NumPy {np.round(want.astype(np.float64), 4).tolist()})")
print(mx.__version__)
