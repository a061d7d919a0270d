# Gradient of sum(conv_general(x, w, padding=(low, high))) with respect to x, for a length-7
# input of ones and a width-3 kernel of ones. By hand: input position i feeds the outputs
# whose window covers it; the padded input has 7 + low + high positions and 5 + low + high
# outputs, and d sum / d x[i] counts the windows covering position low + i.
import mlx.core as mx, numpy as np
x = mx.ones((1, 7, 1)); w = mx.ones((1, 3, 1))
for low, high in [(1, 1), (2, 0), (0, 2)]:
    n_out = 7 + low + high - 3 + 1
    by_hand = np.array([sum(1 for o in range(n_out) if o <= low + i < o + 3) for i in range(7)], float)
    g = mx.grad(lambda x: mx.conv_general(x, w, padding=([low], [high])).sum())(x)
    got = np.array(g).reshape(-1)
    same = got.shape == by_hand.shape and np.allclose(got, by_hand)
    print(f"padding ({low}, {high}): d/dx", got.tolist(), "by hand", by_hand.tolist(), "right" if same else "WRONG")
print(mx.__version__)
