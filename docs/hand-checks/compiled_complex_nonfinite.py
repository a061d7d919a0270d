"""A compiled elementwise function with a complex64 constant that is NaN: MLX writes the
constant into the generated kernel's source as complex64_t(nan, 0) (or (1, nan)), where `nan`
is no number (g++ takes it for the function nan(const char*)), so the kernel does not build.
MLX's pull request 3648 fixed this for real floating constants (NAN, INFINITY since 0.32.0:
the float32 control), not for complex ones; an infinite complex constant builds (`inf` is
declared in the kernel's preamble). mx.median of a complex array holds a NaN constant. Each
case runs in a child of its own, as a failed build aborts the process in some releases, in
an empty TMPDIR (no kernel built before); each result is compared with NumPy's. Exits 1
while a complex NaN constant fails."""

import os
import subprocess
import sys
import tempfile

CASES = {
    "control: complex64, finite constant 2+1j": (2 + 1j, "complex64"),
    "control: float32, NaN constant": (float("nan"), "float32"),
    "complex64, constant inf+0j": (complex(float("inf"), 0), "complex64"),
    "complex64, constant nan+0j": (complex(float("nan"), 0), "complex64"),
    "complex64, constant 1+nanj": (complex(1, float("nan")), "complex64"),
    "complex64: mx.median, compiled": (None, "complex64"),
}


def run(name: str) -> None:
    import mlx.core as mx
    import numpy as np

    k, dtype = CASES[name]
    x = np.array([0.5 + 1.0j, -2.0 + 0.5j, 1.5 - 0.2j, 3 + 0j], dtype=np.complex64)
    xs = x if dtype == "complex64" else x.real.copy()
    if k is None:
        got, want = mx.compile(mx.median)(mx.array(xs)), mx.median(mx.array(xs))
    else:
        const = mx.array(k, dtype=getattr(mx, dtype))
        got = mx.compile(lambda v: mx.where(mx.abs(v) > 1, v, const))(mx.array(xs))
        want = np.where(np.abs(xs) > 1, xs, np.array(k, dtype=dtype))
    ok = np.allclose(np.array(got), np.array(want), equal_nan=True)
    print(f"{name}: {'right' if ok else 'WRONG'}: {np.array(got)}")
    sys.exit(0 if ok else 1)


if len(sys.argv) > 1:
    run(sys.argv[1])
import mlx.core as mx  # noqa: E402

print("mlx", mx.__version__)
wrong = False
for name in CASES:
    env = {**os.environ, "TMPDIR": tempfile.mkdtemp()}
    done = subprocess.run([sys.executable, __file__, name], env=env, capture_output=True, text=True)
    if done.returncode == 0 or "WRONG" in done.stdout:
        print(done.stdout.strip())
    else:
        said = [line for line in done.stderr.splitlines() if "error:" in line or "Failed" in line]
        how = "aborts" if done.returncode < 0 else "raises"
        print(f"{name}: {how} (exit {done.returncode}): {(said or ['?'])[-1].strip()[:150]}")
    wrong |= done.returncode != 0 and "nan" in name.lower() and "control" not in name
sys.exit(1 if wrong else 0)
