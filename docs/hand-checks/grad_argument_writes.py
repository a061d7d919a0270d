# mx.grad of functions that write into the list they are given. After the transform the
# caller's list should look as it does after a plain call. Each case runs in its own
# interpreter, as one of them ends the process with SIGSEGV on the releases that have it.
import subprocess, sys
CASES = {
    "replace an entry": "p[1] = mx.array(2.0)",
    "append an entry": "p.append(p[0] * 2.0)",
}
BODY = """
import mlx.core as mx
def f(p):
    {stmt}
    return (p[0] ** 2).sum()
plain = [mx.array(0.5), mx.array(1.0)]
f(plain)
traced = [mx.array(0.5), mx.array(1.0)]
g = mx.grad(f)(traced)
print("plain call leaves", [x.item() for x in plain], "| after mx.grad", [x.item() for x in traced],
      "| grad[0]", g[0].item(), "(by hand 1.0)")
"""
for name, stmt in CASES.items():
    r = subprocess.run([sys.executable, "-c", BODY.format(stmt=stmt)], capture_output=True, text=True)
    if r.returncode < 0:
        print(f"{name}: killed by signal {-r.returncode}")
    else:
        print(f"{name}:", r.stdout.strip() or r.stderr.strip()[-200:])
import mlx.core as mx
print(mx.__version__)
