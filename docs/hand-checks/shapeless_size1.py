# Each function compiled shapeless, traced at (2, 3), then called at (2, 1): eager is the
# oracle (a reduction over a size-1 axis is that axis squeezed away). One child per function.
import subprocess, sys
FUNCS = {
    "sum": "lambda x: mx.sum(x, axis=-1)",
    "softmax": "lambda x: mx.softmax(x, axis=-1)",
    "layer_norm": "lambda x: mx.fast.layer_norm(x, None, None, 1e-5)",
    "rms_norm": "lambda x: mx.fast.rms_norm(x, None, 1e-5)",
    "var": "lambda x: mx.var(x, axis=-1)",
    "logsumexp": "lambda x: mx.logsumexp(x, axis=-1)",
    "vjp of a * b, b broadcast": "lambda x: mx.vjp(lambda b: mx.ones((2, 3)) * b, [x], [mx.ones((2, 3))])[1][0]",
    "matmul vjp": "lambda x: mx.vjp(lambda a: a @ mx.ones((x.shape[-1], 2)), [x], [mx.ones((2, 2))])[1][0]",
}
CHILD = """
import mlx.core as mx, numpy as np
f = {fn}
g = mx.compile(f, shapeless=True)
mx.eval(g(mx.array(np.arange(6.0, dtype=np.float32).reshape(2, 3))))
x = mx.array(np.array([[1.5], [-2.0]], dtype=np.float32))
got, want = np.array(g(x)), np.array(f(x))
print("right" if got.shape == want.shape and np.allclose(got, want, atol=1e-5) else f"wrong {{got}} vs {{want}}")
"""
for name, fn in FUNCS.items():
    r = subprocess.run([sys.executable, "-c", CHILD.format(fn=fn)], capture_output=True, text=True)
    out = r.stdout.strip() or (f"killed by signal {-r.returncode}" if r.returncode < 0 else r.stderr.strip().splitlines()[-1])
    print(f"{name:28} {out}")
