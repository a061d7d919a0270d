"""mgradcheck: a regression corpus and runner for MLX autodiff and mx.compile bugs.

This module is imported inside the child interpreter too, under whatever Python
and MLX the user points at, so it must import nothing beyond the standard
library at import time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "gradcheck"]


def __getattr__(name: str) -> Any:
    # gradcheck needs NumPy and MLX; load it only when asked for.
    if name == "gradcheck":
        from mgradcheck.child.gradcheck import gradcheck

        return gradcheck
    raise AttributeError(f"module 'mgradcheck' has no attribute {name!r}")
