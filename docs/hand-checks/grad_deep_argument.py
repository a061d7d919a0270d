# d/dw (w * w * c) where c, not differentiated, is an unevaluated chain of 40000
# additions. Each step gets a fresh chain, on a thread with a 1 MiB stack: evaluating
# the result and mx.vjp with c among the primals never walk the chain recursively;
# mx.grad(f)(w, c) did before 0.22.1, and the process dies in it (SIGSEGV).
import threading
import mlx.core as mx
def chain(n=40000):
    c = mx.array(0.0)
    for _ in range(n):
        c = c + 1.0
    return c
def f(w, c):
    return w * w * c
def work():
    w = mx.array(3.0)
    print("eval 2 w c:          ", (2 * w * chain()).item(), "(240000 by hand)", flush=True)
    print("vjp, c a primal:     ", mx.vjp(f, [w, chain()], [mx.array(1.0)])[1][0].item(), flush=True)
    print("grad, c positional:  ", mx.grad(f)(w, chain()).item(), flush=True)
    print("grad, c by keyword:  ", mx.grad(f)(w, c=chain()).item(), flush=True)
print(mx.__version__, flush=True)
threading.stack_size(1 << 20)
t = threading.Thread(target=work)
t.start()
t.join()
