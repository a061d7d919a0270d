"""Code that runs inside the child interpreter: standard library, NumPy and MLX only."""
