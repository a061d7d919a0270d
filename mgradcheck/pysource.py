"""A Python source file's text, decoded as the import system decodes it."""

from __future__ import annotations

import importlib.util


def decoded(data: bytes) -> str:
    """``data`` as Python reads a module: a UTF-8 BOM, a coding cookie (``# coding: latin-1``),
    universal newlines. A file Python could not read raises ValueError, saying why."""
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise ValueError(exc.msg if isinstance(exc, SyntaxError) else str(exc)) from None
