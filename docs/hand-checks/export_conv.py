# Export a small convolutional model (a stride-2 downsampling layer between two
# stride-1 layers, as in an image encoder), import it and compare the imported
# result with the eager call of the same model on the same input.
import os, tempfile
import mlx.core as mx, mlx.nn as nn, numpy as np
mx.random.seed(0)
layers = [nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1),
          nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1),
          nn.Conv2d(8, 4, kernel_size=3, stride=1, padding=2)]
for layer in layers:
    mx.eval(layer.parameters())
def encoder(x):
    for layer in layers:
        x = nn.relu(layer(x))
    return x
x = mx.random.normal((2, 16, 16, 3))
path = os.path.join(tempfile.mkdtemp(), "encoder.mlxfn")
mx.export_function(path, encoder, x)
eager = np.array(encoder(x))
imported = np.array(mx.import_function(path)(x)[0])
print("eager shape", eager.shape, "imported shape", imported.shape)
print("max |imported - eager|:", float(np.abs(imported - eager).max()),
      "right" if np.allclose(imported, eager, atol=1e-5) else "WRONG")
print(mx.__version__)
