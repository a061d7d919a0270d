# mx.vmap of divmod's second output (the remainder), against a Python loop and NumPy's
# divmod. The quotient alone is the control. MLX's DivMod::vmap gives one output axis for two
# outputs, so the remainder's axis is read from past the end: an IndexError naming a garbage
# axis, or memory corruption in a larger program. Exits 1 when the remainder is not NumPy's.
import sys
import mlx.core as mx, numpy as np

b = np.array([1.25, 1.65, 0.43, 0.92], np.float32)  # positive: older releases truncate a negative quotient
c = np.array([1.3, 0.7, 0.4, 0.6], np.float32)
q_np, r_np = np.divmod(b, c)
q = np.array(mx.vmap(lambda b, c: mx.divmod(b, c)[0])(mx.array(b), mx.array(c)))
print("quotient (control):", q, "NumPy", q_np, "agrees" if np.allclose(q, q_np) else "DIFFERS")
loop = np.array([np.array(mx.divmod(mx.array(b[i]), mx.array(c[i]))[1]) for i in range(4)])
print("remainder by a loop of eager divmod:", loop, "NumPy", r_np)
try:
    r = np.array(mx.vmap(lambda b, c: mx.divmod(b, c)[1])(mx.array(b), mx.array(c)))
    wrong = not np.allclose(r, r_np, atol=1e-6)
    print("remainder under vmap:", r, "DIFFERS" if wrong else "agrees")
except (IndexError, ValueError) as e:
    wrong = True
    print("remainder under vmap raised", type(e).__name__, e)
print("mlx", mx.__version__)
sys.exit(1 if wrong else 0)
