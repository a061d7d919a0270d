# The jvp of a linear map is the map of the tangent: mx.fft.ifft2 over the last two axes of a
# (3, 4, 5) complex array, against NumPy's ifft2 of the tangent.
import mlx.core as mx, numpy as np
rng = np.random.default_rng(0)
z = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
t = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
for axes in [(-2, -1), (0, 2)]:
    f = lambda a: mx.fft.ifft2(a, axes=axes)
    got = np.array(mx.jvp(f, [mx.array(z.astype(np.complex64))], [mx.array(t.astype(np.complex64))])[1][0])
    print(mx.__version__, axes, "right" if np.allclose(got, np.fft.ifft2(t, axes=axes), atol=1e-4) else "wrong")
