"""The package index: which MLX releases can be installed here, for which backend, from where."""

# What --backend installs: mlx[cpu], mlx[cuda] (mlx-cuda, then mlx-cuda-12), mlx[cuda12],
# mlx[cuda13] on Linux, plain mlx on macOS (metal). Here, so the command line's --help
# can offer them without importing the index machinery.
BACKENDS = ("cpu", "cuda", "cuda12", "cuda13", "metal")
