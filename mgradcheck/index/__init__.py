"""The package index: which MLX releases can be installed here, for which backend, from where."""
