# mx.vmap of the FFTs against NumPy's FFT of each slice. Shapes are read before anything is
# evaluated: a wrongly shaped real FFT writes past its buffer, so it is evaluated only if right.
import mlx.core as mx, numpy as np
rng = np.random.default_rng(1)
r = rng.standard_normal((3, 4, 6)).astype(np.float32)              # 3 real slices of (4, 6)
z = (rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))).astype(np.complex64)
for name, x in [("rfft2", r), ("rfftn", r), ("irfft2", z), ("irfftn", z), ("fft2", z), ("rfft", r)]:
    out = mx.vmap(getattr(mx.fft, name))(mx.array(x))
    want = np.stack([getattr(np.fft, name)(s) for s in x])
    ok = out.shape == want.shape and np.allclose(np.array(out), want, atol=1e-4)
    print(f"vmap {name:6}: shape {out.shape}, NumPy per slice {want.shape}: {'right' if ok else 'wrong'}")
# jvp of vmap: an FFT is linear, so the tangent is the FFT of the tangent, row by row.
a = rng.standard_normal((3, 8)).astype(np.float32); t = rng.standard_normal((3, 8)).astype(np.float32)
for name, arg, tan in [("fft", a, t), ("rfft", a, t), ("ifft", a.astype(np.complex64), t.astype(np.complex64))]:
    got = np.array(mx.jvp(lambda v: mx.vmap(getattr(mx.fft, name))(v), [mx.array(arg)], [mx.array(tan)])[1][0])
    rows = getattr(np.fft, name)(tan, axis=1)
    both = getattr(np.fft, name + "n")(tan)  # fftn, rfftn, ifftn: over the batch axis too
    what = "right" if np.allclose(got, rows, atol=1e-4) else "wrong" + (" (= the transform over both axes)" if got.shape == both.shape and np.allclose(got, both, atol=1e-4) else "")
    print(f"jvp of vmap {name:4}: {what}")
print(mx.__version__)
