# hadamard_transform(x, scale=0.25) compiled shapeless: traced at n > 1 and called at one element,
# against the same call compiled fresh at one element (and 0.25 * x by hand).
import mlx.core as mx, numpy as np
x1 = mx.array([0.8])
print("fresh shapeless first at (1,):", mx.compile(lambda x: mx.hadamard_transform(x, scale=0.25), shapeless=True)(x1).tolist())
g = mx.compile(lambda x: mx.hadamard_transform(x, scale=0.25), shapeless=True)
g(mx.ones((8,)))
print("traced at (8,), called at (1,):", g(x1).tolist(), "expected", 0.25 * 0.8)
g2 = mx.compile(lambda x: mx.hadamard_transform(x, scale=0.25), shapeless=True)
g2(mx.ones((3, 8)))
print("traced at (3, 8), called at (3, 1):", g2(mx.full((3, 1), 0.8)).tolist())
