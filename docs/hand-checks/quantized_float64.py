# quantized_matmul with a float64 x (the sweep's float64 reference evaluates it so), in a child.
import subprocess, sys
CHILD = """
import mlx.core as mx
w = mx.linspace(-1.0, 1.0, 512).reshape(8, 64)
q, s, b = mx.quantize(w, group_size=32, bits=4)
x = mx.ones((2, 64), dtype=mx.{dt})
try:
    y = mx.quantized_matmul(x, q, s, b, transpose=True, group_size=32, bits=4, stream=mx.cpu)
    mx.eval(y); print("returns", y.dtype)
except Exception as e:
    print("raises", type(e).__name__, str(e)[:80])
"""
for dt in ("float32", "float64"):
    r = subprocess.run([sys.executable, "-c", CHILD.format(dt=dt)], capture_output=True, text=True)
    print(dt, r.stdout.strip() or f"killed by signal {-r.returncode}: {r.stderr.strip().splitlines()[-1][:100] if r.stderr.strip() else ''}")
