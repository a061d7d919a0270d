# mx.floor_divide with complex64 operands. NumPy refuses floor division of complex numbers,
# and so does mx.floor; MLX's floor_divide returns the plain quotient a / b instead, and
# differentiates as if it were floored: derivative 0. A function whose values are a / b has
# derivative 1 / b (checked here by central differences of MLX's own values, in complex128
# arithmetic on the values it returns). Exits 1 when the value and the derivative disagree;
# releases before 0.32.4 refuse complex input, as mx.floor does, and pass.
import sys
import mlx.core as mx, numpy as np

a, b = 0.7 - 1.1j, 0.9 + 0.2j
B = mx.array(b, dtype=mx.complex64)
f = lambda u: mx.floor_divide(u, B)
try:
    value = complex(f(mx.array(a, dtype=mx.complex64)).item())
except ValueError as e:  # as NumPy and mx.floor do: nothing to differentiate
    print("mx.floor_divide refuses complex input:", e, "\n" + mx.__version__)
    sys.exit(0)
print(f"floor_divide({a}, {b}) = {value:.5f}; a / b = {a / b:.5f}; 7.5 // 2 as complex:",
      mx.floor_divide(mx.array(7.5 + 0j), mx.array(2.0 + 0j)).item())
try:
    mx.floor(mx.array(a, dtype=mx.complex64))
except ValueError as e:
    print("mx.floor refuses:", e)
h = 1e-2  # the function is linear in a: any step gives its slope, up to complex64 rounding
slope = (complex(f(mx.array(a + h, dtype=mx.complex64)).item())
         - complex(f(mx.array(a - h, dtype=mx.complex64)).item())) / (2 * h)
_, (t,) = mx.jvp(f, [mx.array(a, dtype=mx.complex64)], [mx.array(1.0 + 0j, dtype=mx.complex64)])
g = mx.vjp(f, [mx.array(a, dtype=mx.complex64)], [mx.array(1.0 + 0j, dtype=mx.complex64)])[1][0]
print(f"slope of MLX's own values {slope:.5f}, 1 / b = {1 / b:.5f}")
print(f"jvp {complex(t.item()):.5f}, vjp {complex(g.item()):.5f}")
ok = np.isclose(complex(t.item()), slope, rtol=1e-3)
print("derivative agrees with the values" if ok else "WRONG: the derivative is not the slope of the values")
print(mx.__version__)
sys.exit(0 if ok else 1)
