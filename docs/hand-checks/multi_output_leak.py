# Does memory stay held after vjp calls whose function evaluates a multi-output op
# (divmod) inside the trace? Resident memory (Linux) before and after 40 calls each.
import gc, mlx.core as mx, numpy as np
def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
n = 1 << 18                                   # 1 MiB of float32
x = mx.array(np.linspace(1.0, 2.0, n, dtype=np.float32)); ct = mx.ones((n,)); mx.eval(x, ct)
def with_divmod(v):
    q, r = mx.divmod(v * 3.0, v); mx.eval(q); return q * v
def with_floor_divide(v):
    q = mx.floor_divide(v * 3.0, v); mx.eval(q); return q * v
def never_evaluated(v):                       # no transform: divmod of an evaluated
    a = v + 0.0; mx.eval(a)                   # input, its outputs never evaluated
    q, r = mx.divmod(a, a); return None
for name, fn in [("vjp, floor_divide evaluated inside", with_floor_divide),
                 ("vjp, divmod evaluated inside", with_divmod),
                 ("no vjp, divmod never evaluated", never_evaluated)]:
    gc.collect(); before = rss_mib()
    for _ in range(40):
        out = mx.vjp(fn, [x], [ct]) if fn is not never_evaluated else fn(x)
        del out
    gc.collect()
    print(f"{name:36}: {rss_mib() - before:7.1f} MiB kept after 40 calls")
print(mx.__version__ if hasattr(mx, "__version__") else "")
