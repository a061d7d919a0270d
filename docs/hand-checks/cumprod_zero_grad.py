# The gradient of sum(w * cumprod(y)) at inputs with zeros, against float64 central
# differences (the function is a polynomial in y, so the differences are exact to rounding).
import mlx.core as mx, numpy as np
w = np.array([1.0, -0.5, 2.0, 1.5, 0.25])

def np_cumprod(y, reverse, inclusive):
    y = y[::-1] if reverse else y
    c = np.cumprod(y) if inclusive else np.concatenate([[1.0], np.cumprod(y)[:-1]])
    return c[::-1] if reverse else c

for yv in ([2.0, 1.0, 2.0, 2.0, 3.0], [2.0, 0.0, 2.0, 2.0, 3.0], [2.0, 0.0, 2.0, 0.0, 3.0]):
    y = np.array(yv)
    for reverse in (False, True):
        for inclusive in (True, False):
            f = lambda v: (w * np_cumprod(v, reverse, inclusive)).sum()
            h = 1e-4
            fd = np.array([(f(y + h * e) - f(y - h * e)) / (2 * h) for e in np.eye(len(y))])
            g = np.array(mx.grad(lambda v: (mx.cumprod(v, reverse=reverse, inclusive=inclusive)
                                            * mx.array(w.astype(np.float32))).sum())(mx.array(y.astype(np.float32))))
            verdict = "right" if np.allclose(g, fd, atol=1e-3) else f"wrong {g.tolist()} vs {fd.round(4).tolist()}"
            print(f"y={yv} reverse={reverse!s:5} inclusive={inclusive!s:5} {verdict}")
print(mx.__version__)
