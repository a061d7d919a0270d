# Export a cross-entropy's forward pass (log-softmax, then the target's entry picked with
# take_along_axis) and a one-hot built with put_along_axis; import both and compare the
# imported results with the same arithmetic done by hand in NumPy.
import os, tempfile
import mlx.core as mx, numpy as np
d = tempfile.mkdtemp()
z = np.array([[2.0, -1.0, 0.5], [0.0, 3.0, 1.0], [1.0, 1.0, 1.0], [-2.0, 0.0, 4.0]], np.float32)
t = np.array([[0], [1], [2], [2]])
def nll(z, t):
    return -mx.take_along_axis(z - mx.logsumexp(z, axis=1, keepdims=True), t, axis=1).mean()
def one_hot(t):
    return mx.put_along_axis(mx.zeros((4, 3)), t, mx.ones((4, 1)), axis=1)
by_hand_nll = -np.mean([z[r, t[r, 0]] - np.log(np.exp(z[r]).sum()) for r in range(4)])
by_hand_one_hot = np.eye(3, dtype=np.float32)[t[:, 0]]
for name, fn, args, want in [("nll", nll, (mx.array(z), mx.array(t)), by_hand_nll),
                             ("one_hot", one_hot, (mx.array(t),), by_hand_one_hot)]:
    path = os.path.join(d, name + ".mlxfn")
    try:
        mx.export_function(path, fn, *args)
    except Exception as e:
        print(f"{name}: export raised {type(e).__name__}: {e}")
        continue
    got = np.array(mx.import_function(path)(*args)[0])
    print(f"{name}: imported", got.round(5).tolist(), "by hand", np.round(want, 5).tolist(),
          "right" if np.allclose(got, want, atol=1e-5) else "WRONG")
print(mx.__version__)
