"""A crash of the default sweep (0.32.4) in compile(shapeless)(vmap(grad)) of
expm1(min(a, axis=0)) at lanes of shape (1,), against eager MLX, each call in a child of
its own. If the crash is the size-1 reduction of shapeless-reduction-to-size1-crash, the
vmap of min over axis 0 of (1,) lanes (a reduction over a size-1 axis of (3, 1)) dies
without expm1 or grad, and so does min(a, axis=1) of (3, 1) with no vmap, while a
reduction over an axis longer than 1 and the eager calls are right. Exits 1 while any
compiled call dies or differs."""

import subprocess
import sys

LANES = "[[0.3], [-0.7], [1.1]]"  # three lanes of shape (1,)
WIDE = "[[0.3, 1.0], [-0.7, 1.0], [1.1, 1.0]]"  # three lanes of shape (2,)
CASES = [
    ("vmap(grad(expm1(min(a, 0)))), the sweep's", "mx.vmap(mx.grad(lambda a: mx.expm1(mx.min(a, axis=0)).sum()))", LANES),
    ("vmap(grad(min(a, 0)))", "mx.vmap(mx.grad(lambda a: mx.min(a, axis=0).sum()))", LANES),
    ("vmap(expm1(min(a, 0))), no grad", "mx.vmap(lambda a: mx.expm1(mx.min(a, axis=0)))", LANES),
    ("min(a, axis=1) at (3, 1), no vmap", "lambda a: mx.min(a, axis=1)", LANES),
    ("sum(a, axis=1) at (3, 1), no vmap", "lambda a: mx.sum(a, axis=1)", LANES),
    ("control: sum(a, axis=1) at (3, 2)", "lambda a: mx.sum(a, axis=1)", WIDE),
    ("control: vmap(sum(a, 0)) at (3, 2)", "mx.vmap(lambda a: mx.sum(a, axis=0))", WIDE),
]
CHILD = """
import mlx.core as mx, numpy as np
x = mx.array(np.array({x}, np.float32))
f = {fn}
eager = np.array(f(x))
compiled = np.array(mx.compile(f, shapeless=True)(x))
same = eager.shape == compiled.shape and np.allclose(eager, compiled)
print("right" if same else f"differs: {{compiled.tolist()}} for {{eager.tolist()}}")
"""

bad = False
for name, fn, x in CASES:
    done = subprocess.run([sys.executable, "-c", CHILD.format(fn=fn, x=x)], capture_output=True,
                          text=True, timeout=120)
    if done.returncode < 0:
        said = f"killed by signal {-done.returncode}"
    else:
        said = done.stdout.strip() or done.stderr.strip()[-200:]
    bad |= said != "right" and not name.startswith("control")
    print(f"{name:45} compiled shapeless, first call: {said}")
import mlx.core as mx  # noqa: E402

print(f"mlx {mx.__version__}")
sys.exit(1 if bad else 0)
