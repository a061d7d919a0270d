# The sweep's jvp crashes of tri_inv, solve_triangular and scaled_dot_product_attention on
# 0.31.2, one child each: with and without the where (mx.tril, a boolean or causal mask) in
# the function. Inverse has no jvp at all, so without a where MLX refuses it.
import subprocess, sys
SETUP = """
import mlx.core as mx, numpy as np
rng = np.random.default_rng(0)
x = mx.array(rng.standard_normal((3, 3)).astype(np.float32)); t = mx.array(rng.standard_normal((3, 3)).astype(np.float32))
L = mx.array((np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)).astype(np.float32))
q, tq = mx.array(rng.standard_normal((1, 2, 3, 4)).astype(np.float32)), mx.array(rng.standard_normal((1, 2, 3, 4)).astype(np.float32))
k, v = mx.array(rng.standard_normal((1, 2, 5, 4)).astype(np.float32)), mx.array(rng.standard_normal((1, 2, 5, 4)).astype(np.float32))
sdpa = lambda m: mx.jvp(lambda a: mx.fast.scaled_dot_product_attention(a, k, v, scale=0.5, mask=m), [q], [tq])
try:
    out = ({call})[1][0]; mx.eval(out); print("returns", out.shape)
except Exception as e:
    print("raises", type(e).__name__, str(e)[:60])
"""
CASES = {
    "jvp tri_inv(tril(x) + 3 I)": "mx.jvp(lambda a: mx.linalg.tri_inv(mx.tril(a) + 3.0 * mx.eye(3), stream=mx.cpu), [x], [t])",
    "jvp tri_inv(L)": "mx.jvp(lambda a: mx.linalg.tri_inv(a, stream=mx.cpu), [L], [t])",
    "jvp solve_triangular(tril(x) + 3 I, b)": "mx.jvp(lambda a: mx.linalg.solve_triangular(mx.tril(a) + 3.0 * mx.eye(3), a[:, 1], stream=mx.cpu), [x], [t])",
    "jvp solve_triangular(L, b)": "mx.jvp(lambda a: mx.linalg.solve_triangular(a, mx.ones((3,)), stream=mx.cpu), [L], [t])",
    "jvp tril(x)": "mx.jvp(mx.tril, [x], [t])",
    "jvp sdpa, no mask": "sdpa(None)",
    "jvp sdpa, additive mask": "sdpa(mx.zeros((3, 5)))",
    "jvp sdpa, boolean mask": "sdpa(mx.array([[True, False, True, True, True]] * 3))",
    "jvp sdpa, causal": "sdpa('causal')",
}
for name, call in CASES.items():
    r = subprocess.run([sys.executable, "-c", SETUP.format(call=call)], capture_output=True, text=True)
    print(f"{name:40} {r.stdout.strip() or f'killed by signal {-r.returncode}'}")
import mlx.core as mx; print(mx.__version__)
