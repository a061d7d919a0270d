"""Wrong values (not only wrong shapes) of mx.compile(mx.vmap(mx.grad(F)), shapeless=True)
at its first call, from the default sweep of 0.32.4 (check compose), each F in a child of
its own against a Python loop of mx.grad over the lanes, with eager vmap and plain compile
as controls. Every F broadcasts one array against another inside the vmap; the two last,
which broadcast but multiply, are right. Exits 1 while a shapeless result differs from the
loop or raises."""

import subprocess
import sys

CHILD = r"""
import mlx.core as mx, numpy as np
rng = np.random.default_rng(0)
a = mx.array(rng.standard_normal(({a})).astype(np.float32))
b = mx.array(rng.standard_normal(({b})).astype(np.float32))
g = mx.grad({f}, argnums=(0, 1))
loop = [g(a[i], b[i]) for i in range(3)]
want = [np.stack([np.array(lane[k]) for lane in loop]) for k in range(2)]
for name, fn in [("eager vmap", mx.vmap(g)), ("compile", mx.compile(mx.vmap(g))),
                 ("compile shapeless", mx.compile(mx.vmap(g), shapeless=True))]:
    got = [np.array(x) for x in fn(a, b)]
    bad = [k for k in range(2)
           if got[k].shape != want[k].shape or not np.allclose(got[k], want[k], atol=1e-5)]
    said = "right" if not bad else (
        f"wrong d/d{{'ab'[bad[0]]}}: {{got[bad[0]].ravel()[:4].tolist()}} "
        f"(shape {{got[bad[0]].shape}}) for {{want[bad[0]].ravel()[:4].tolist()}}")
    print(f"  {{name:18}} {{said}}", flush=True)
"""
CASES = [
    # (F, lanes of a, lanes of b): three lanes each
    ("lambda a, b: mx.divide(a, b).sum()", "3, 2", "3"),
    ("lambda a, b: mx.mean(mx.subtract(b, a), axis=0)", "3, 3", "3"),
    ("lambda a, b: mx.logaddexp(mx.broadcast_to(a, (2, 4)), b).sum()", "3, 4", "3, 4"),
    ("lambda a, b: mx.sigmoid(mx.broadcast_to(a, (2, 4)) - b).sum()", "3, 4", "3, 4"),
    ("lambda a, b: mx.multiply(a, b).sum()", "3, 2", "3"),  # control
    ("lambda a, b: (mx.broadcast_to(a, (2, 4)) * b).sum()", "3, 4", "3, 4"),  # control
]
bad = False
for f, a, b in CASES:
    print(f)
    done = subprocess.run([sys.executable, "-c", CHILD.format(f=f, a=a, b=b)],
                          capture_output=True, text=True, timeout=120)
    print(done.stdout.rstrip())
    if done.returncode:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        print(f"  compile shapeless  {'raised ' + last if done.returncode > 0 else 'died'}")
    bad |= "compile shapeless  wrong" in done.stdout or done.returncode != 0
import mlx.core as mx  # noqa: E402

print(f"mlx {mx.__version__}")
sys.exit(1 if bad else 0)
