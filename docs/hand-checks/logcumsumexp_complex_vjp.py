# The vjp of mx.logcumsumexp at complex64 z, against the Jacobian written out by hand:
# q_k = log(exp(z_0) + ... + exp(z_k)), so dq_k/dz_j = exp(z_j - q_k) for j <= k, and MLX's
# complex vjp is w^T conj(J) (as mx.exp's is). Its jvp refuses complex input; its vjp
# returns a value that is neither w^T conj(J) nor w^T J. Exits 1 when MLX is wrong.
import sys
import mlx.core as mx, numpy as np

z = np.array([0.7 + 0.4j, -1.1 + 0.3j, 0.5 - 0.9j])
w = np.array([1.0 - 0.5j, 0.3 + 0.2j, -0.7 + 1.1j])
q = np.log(np.cumsum(np.exp(z)))
J = np.array([[np.exp(z[j] - q[k]) if j <= k else 0 for j in range(3)] for k in range(3)])
Z, W = mx.array(z.astype(np.complex64)), mx.array(w.astype(np.complex64))
print("value  mlx", np.round(np.array(mx.logcumsumexp(Z)), 4), "numpy", np.round(q, 4))
got = np.array(mx.vjp(mx.logcumsumexp, [Z], [W])[1][0])
want = w @ J.conj()
ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
print("vjp    mlx", np.round(got, 4), "by hand", np.round(want, 4), "right" if ok else "WRONG")
try:
    mx.jvp(mx.logcumsumexp, [Z], [W])
    print("jvp    accepted complex input")
except ValueError as e:
    print("jvp    refuses:", e)
x = np.array([0.7, -1.1, 0.5])
Jr = np.array([[np.exp(x[j] - np.log(np.cumsum(np.exp(x)))[k]) if j <= k else 0 for j in range(3)] for k in range(3)])
g = np.array(mx.vjp(mx.logcumsumexp, [mx.array(x.astype(np.float32))], [mx.ones(3)])[1][0])
print("float32 vjp mlx", np.round(g, 4), "by hand", np.round(np.ones(3) @ Jr, 4), "(control)")
print(mx.__version__)
sys.exit(0 if ok else 1)
