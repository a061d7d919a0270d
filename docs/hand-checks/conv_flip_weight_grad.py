# Weight gradient of conv_general(x, w, padding=(lo, hi), flip=True) against NumPy in
# float64: tap k of the kernel meets the dilated, padded input at k + stride * p for
# output position p, and flip hands that sum to tap K - 1 - k.
import mlx.core as mx, numpy as np
rng = np.random.default_rng(0)
x = rng.standard_normal((1, 6, 2)).astype(np.float32)
w = rng.standard_normal((3, 3, 2)).astype(np.float32)
def by_hand(ct, stride, lo, hi, idil, flip):
    dil = 1 + idil * (x.shape[1] - 1)
    xp = np.zeros((1, dil + lo + hi, 2)); xp[:, lo:lo + dil:idil] = x
    g = np.zeros((ct.shape[2], 3, 2))
    for k in range(3):
        seen = xp[:, k: k + stride * (ct.shape[1] - 1) + 1: stride]
        g[:, 2 - k if flip else k] = np.einsum("npo,npc->oc", ct, seen)
    return g
for stride, lo, hi, idil, flip in [(1, 2, 3, 1, True), (1, 0, 2, 1, True), (1, 6, 15, 4, True),
                                   (1, 1, 1, 1, True), (1, 2, 3, 1, False)]:
    conv = lambda w: mx.conv_general(mx.array(x), w, stride=stride, padding=([lo], [hi]),
                                     input_dilation=idil, flip=flip)
    ct = rng.standard_normal(conv(mx.array(w)).shape).astype(np.float32)
    g = mx.grad(lambda w: (conv(w) * mx.array(ct)).sum())(mx.array(w))
    want = by_hand(ct.astype(np.float64), stride, lo, hi, idil, flip)
    ok = g.shape == want.shape and np.allclose(np.array(g), want, atol=1e-4)
    print(f"stride {stride} padding ({lo}, {hi}) input_dilation {idil} flip {flip!s:5}:",
          "right" if ok else f"wrong, shape {g.shape} (kernel {w.shape})")
print(mx.__version__)
