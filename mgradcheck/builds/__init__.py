"""MLX built here from source: its git history, what a build needs, and the wheels of single commits."""
