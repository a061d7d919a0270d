# Differentiating by an integer or bool argument. A function of an integer has no derivative:
# JAX gives a zero of dtype float0, PyTorch refuses. MLX differentiates the integer as if it
# were a float and casts the vjp back to the integer dtype, so the vjp disagrees with the jvp
# of the same function (<J^T c, t> must equal <c, J t>) and an infinite derivative becomes
# INT_MIN. Expected values are worked out by hand. Exits 1 when a vjp that is not refused
# disagrees with the jvp.
import sys
import mlx.core as mx, numpy as np

wrong = False
cases = (
    ("x * 2.5 at int32 [1, 2]", lambda v: v * mx.array([2.5, 3.5]), mx.array([1, 2], dtype=mx.int32)),
    ("arcsin at int32 [1]", mx.arcsin, mx.array([1], dtype=mx.int32)),
    ("exp at int64 [2]", mx.exp, mx.array([2], dtype=mx.int64)),
    ("sigmoid at uint8 [4]", mx.sigmoid, mx.array([4], dtype=mx.uint8)),
    ("sum at bool [True, False]", mx.sum, mx.array([True, False])),
)
for what, f, x in cases:
    ones = mx.ones(f(x).shape)
    try:
        _, (vjp,) = mx.vjp(f, [x], [ones])
    except ValueError as e:
        print(f"{what}: vjp refused ({e})")
        continue
    _, (jvp,) = mx.jvp(f, [x], [mx.ones(x.shape)])
    back, forward = float(np.sum(np.array(vjp, dtype=np.float64))), float(np.sum(np.array(jvp, dtype=np.float64)))
    fine = np.isclose(back, forward, rtol=1e-5) or np.isinf(back) and back == forward
    wrong |= not fine
    print(f"{what}: vjp {np.array(vjp).tolist()} ({vjp.dtype}), jvp {np.array(jvp).tolist()} ({jvp.dtype}):",
          "consistent" if fine else f"WRONG: <J^T c, t> = {back:g} but <c, J t> = {forward:g}")
print("by hand: d(2.5 x)/dx = 2.5 and d(3.5 x)/dx = 3.5; d arcsin/dx at 1 is infinite;",
      f"d exp/dx at 2 = {np.exp(2):.4f}; d sigmoid/dx at 4 = {np.exp(-4) / (1 + np.exp(-4)) ** 2:.4f}")
print(mx.__version__)
sys.exit(1 if wrong else 0)
