# A g++ on PATH that answers --version but builds nothing (and an empty kernel cache): the
# CPU kernel of a compiled function cannot be built, so the eval that needs it raises.
# Then read an array that the same eval computed first, a 512 x 512 matrix product,
# against NumPy; the same after async_eval. A read that hangs ends the script after 10 s
# (faulthandler prints "Timeout" and where it hung).
import faulthandler, os, tempfile
import mlx.core as mx, numpy as np
os.environ["TMPDIR"] = tempfile.mkdtemp()     # no kernels built before
bin_dir = tempfile.mkdtemp()
with open(os.path.join(bin_dir, "g++"), "w") as script:
    script.write('#!/bin/sh\n[ "$1" = --version ] && exit 0\necho "no builds here" >&2; exit 1\n')
os.chmod(os.path.join(bin_dir, "g++"), 0o755)
os.environ["PATH"] = bin_dir + os.pathsep + os.environ["PATH"]
rng = np.random.default_rng(0)
an = rng.standard_normal((512, 512)).astype(np.float32)
a = mx.array(an); mx.eval(a)
f = mx.compile(lambda m: mx.tanh(m) * 0.5)
for how in ("eval", "async_eval"):
    prod = (a @ a) * 0.5
    try:
        getattr(mx, how)(f(prod)); mx.eval(f(prod))
        print(how, "did not raise")
    except Exception as e:
        print(how, "raised:", str(e).splitlines()[0][:90])
    faulthandler.dump_traceback_later(10, exit=True)
    got = np.array(prod)
    faulthandler.cancel_dump_traceback_later()
    want = (an.astype(np.float64) @ an) * 0.5
    print(f"  product read after the failed {how}: max error {np.abs(got - want).max():.3g}",
          "(right)" if np.allclose(got, want, atol=1e-3) else "(WRONG)")
print(mx.__version__)
