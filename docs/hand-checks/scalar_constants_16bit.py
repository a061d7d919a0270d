# Compiled x * 3 + 5 (and x * 2 + 3) against the same function run eagerly, per dtype.
import mlx.core as mx, numpy as np
x0 = np.array([0.0, 1.0, 2.0, 5.0], dtype=np.float32)
for dt in ["float32", "int8", "float16", "bfloat16", "int16", "uint16"]:
    x = mx.array(x0).astype(getattr(mx, dt)); mx.eval(x)
    for name, fn in [("x * 3 + 5", lambda x: x * 3 + 5), ("x * 2 + 3", lambda x: x * 2 + 3)]:
        c = np.array(mx.compile(fn)(x).astype(mx.float32)).tolist()
        e = np.array(fn(x).astype(mx.float32)).tolist()
        print(f"{dt:8} {name}: compiled {c} eager {e}", "" if c == e else "WRONG")
print(mx.__version__ if hasattr(mx, "__version__") else "")
