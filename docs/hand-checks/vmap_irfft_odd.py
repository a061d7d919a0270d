# mx.vmap of irfft with an odd n (7), against NumPy per slice; and the vmap of rfft's vjp with
# n = 7 (the vjp of rfft is an irfft back to the input's length), against a loop over slices.
import mlx.core as mx, numpy as np
rng = np.random.default_rng(1)
z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
out = mx.vmap(lambda s: mx.fft.irfft(s, n=7))(mx.array(z))
want = np.fft.irfft(z, n=7, axis=1)
print("vmap irfft(n=7):", out.shape, "vs", want.shape, "right" if out.shape == want.shape and np.allclose(np.array(out), want, atol=1e-4) else "wrong")
x = mx.array(rng.standard_normal((3, 2, 6)).astype(np.float32))
c = mx.array((rng.standard_normal((3, 2, 4)) + 1j * rng.standard_normal((3, 2, 4))).astype(np.complex64))
g = lambda xs, cs: mx.vjp(lambda v: mx.fft.rfft(v, n=7, axis=1), [xs], [cs])[1][0]
loop = np.stack([np.array(g(x[b], c[b])) for b in range(3)])
try:
    got = np.array(mx.vmap(g)(x, c))
    print("vmap of the vjp of rfft(n=7):", "right" if np.allclose(got, loop, atol=1e-4) else "wrong")
except Exception as e:
    print("vmap of the vjp of rfft(n=7): raises", type(e).__name__, e)
print(mx.__version__)
