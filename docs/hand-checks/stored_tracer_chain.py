# A loss that keeps its first argument (as a parameter container would) and is
# next called with what it kept: does memory grow with the number of grad calls?
# Measures the peak resident memory over two rounds of 100,000 calls, and the time of
# the first evaluation of the kept array afterwards.
import resource, time
import mlx.core as mx
kept = [mx.array(1.0)]
x = mx.ones((8,))
def loss(w, v):
    kept[0] = w
    return (v * v).sum()
step = mx.grad(loss, argnums=1)
def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
for round_ in (1, 2):
    before = peak_mib()
    for _ in range(100_000):
        mx.eval(step(kept[0], x))
    print(f"round {round_}: peak memory grew by {peak_mib() - before:.1f} MiB over 100,000 calls")
t = time.perf_counter()
mx.eval(kept[0])
print(f"first eval of the kept array: {1e3 * (time.perf_counter() - t):.1f} ms, value {kept[0].item()}")
print(mx.__version__)
