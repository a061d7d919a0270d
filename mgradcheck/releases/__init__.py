"""Real MLX releases: the package index, cached environments, stored results, bisect and matrix."""
