"""What is reasoned over real MLX releases: running entries on them, the results store, bisect and matrix."""
