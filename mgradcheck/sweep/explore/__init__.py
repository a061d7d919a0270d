"""Calls drawn from the target MLX's own signatures and a table of domains (docs/sweep-explore.md)."""
