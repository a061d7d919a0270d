"""The environment cache: one virtual environment per MLX release, backend and Python."""
