# While a worker thread sits inside the function mx.jvp is tracing, the main thread builds a
# shapeless compiled variance (mx.var) at length 3; once the worker is done, call it at
# length 5 and 8 and compare with NumPy. The same compile with no other thread tracing is
# the control.
import threading
import mlx.core as mx, numpy as np
def variance_after(other_thread_tracing):
    entered, done = threading.Event(), threading.Event()
    def f(v):
        entered.set(); done.wait(30); return mx.sin(v)
    t = threading.Thread(target=lambda: print("  worker's jvp of sin at 0:",
                                              mx.jvp(f, [mx.array([0.0])], [mx.array([1.0])])[1][0].tolist()))
    if other_thread_tracing:
        t.start(); entered.wait(30)
    var = mx.compile(lambda v: mx.var(v), shapeless=True)
    var(mx.array([1.0, 2.0, 6.0]))
    if other_thread_tracing:
        done.set(); t.join()
    for n in (5, 8):
        xs = np.arange(n, dtype=np.float32) ** 1.5
        print(f"  shapeless var at length {n}: {var(mx.array(xs)).item():.4f}, NumPy {xs.var():.4f}")
print("control, no other thread:"); variance_after(False)
print("traced while another thread is inside mx.jvp:"); variance_after(True)
print(mx.__version__)
