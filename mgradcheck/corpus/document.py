"""A corpus file as read: its plain values and the line of each, and the problems named by line.

What :mod:`~mgradcheck.corpus.yamlsource` makes of a file; this module imports no YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BYTES = 1 << 20

Key = tuple[str | int, ...]


@dataclass(frozen=True)
class SourceError(Exception):
    """One problem in one file, printed as ``file:line: field: message``."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


@dataclass(frozen=True)
class Document:
    """A parsed YAML file: its data and the line of every value in it."""

    path: str
    data: Any
    lines: dict[Key, int]
    block_scalars: frozenset[Key]
    # What was read past (an unquoted date, a repeated key): the file is invalid, but
    # its other problems are checked and said in the same run, not one run each.
    problems: tuple[SourceError, ...] = ()

    def line(self, key: Key) -> int:
        """The line of ``key``, or of its nearest ancestor that has one."""
        while key and key not in self.lines:
            key = key[:-1]
        return self.lines.get(key, 1)


_PLAIN_KEY = r"[A-Za-z0-9_-]+"  # compiled by re on first use: an error message


def dotted(key: Key) -> str:
    out = ""
    for part in key:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not re.fullmatch(_PLAIN_KEY, part):
            out += f"[{part!r}]"  # a key with odd characters must not break the one-line error
        else:
            out += f".{part}" if out else part
    return out


def source_bytes(path: Path, name: str) -> bytes:
    """The bytes of one corpus file; :class:`SourceError` if it cannot be read or is too large."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(name, 0, "", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise SourceError(name, 0, "", f"file is {len(raw)} bytes, over the {MAX_BYTES} limit")
    return raw


__all__ = ["MAX_BYTES", "Document", "Key", "SourceError", "dotted", "source_bytes"]
