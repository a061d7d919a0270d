# mx.vmap of a grouped convolution over a batch of weights, against a Python loop over the
# weights (each slice an eager conv2d), the loop itself checked against a direct NumPy grouped
# convolution. groups=1 is the control. Exits 1 when the vmap differs from the loop.
import sys
import mlx.core as mx, numpy as np

rng = np.random.default_rng(0)
x = rng.uniform(-2, 2, (1, 4, 4, 2)).astype(np.float32)
W = rng.uniform(-2, 2, (2, 2, 2, 1, 3)).astype(np.float32)  # three weights on the last axis

def conv_np(x, w, groups):
    N, H, Wd, C = x.shape; O, KH, KW, Cg = w.shape; og = O // groups
    out = np.zeros((N, H - KH + 1, Wd - KW + 1, O))
    for o in range(O):
        g = o // og
        for i in range(H - KH + 1):
            for j in range(Wd - KW + 1):
                out[:, i, j, o] = (x[:, i:i+KH, j:j+KW, g*Cg:(g+1)*Cg] * w[o]).sum(axis=(1, 2, 3))
    return out

wrong = False
for groups, xs in ((1, x[..., :1]), (2, x)):
    f = lambda w: mx.conv2d(mx.array(np.ascontiguousarray(xs)), w, groups=groups)
    loop = np.stack([np.array(f(mx.array(np.ascontiguousarray(W[..., k])))) for k in range(3)])
    ref = np.stack([conv_np(xs, W[..., k], groups) for k in range(3)])
    for in_axes, Wv in ((-1, W), (0, np.ascontiguousarray(np.moveaxis(W, -1, 0)))):
        got = np.array(mx.vmap(f, in_axes=in_axes)(mx.array(Wv)))
        ok = np.allclose(got, loop, atol=1e-5)
        wrong |= not ok
        print(f"groups={groups} in_axes={in_axes}: vmap {'agrees with' if ok else 'DIFFERS from'} "
              f"the loop (max |diff| {np.abs(got - loop).max():.3f}); loop vs NumPy "
              f"{np.abs(loop - ref).max():.1e}")
print("mlx", mx.__version__)
sys.exit(1 if wrong else 0)
