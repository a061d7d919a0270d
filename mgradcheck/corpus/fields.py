"""Checking the fields of one parsed corpus file: every problem named by file, line and field."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck.corpus.document import Document, Key, SourceError, dotted
from mgradcheck.corpus.entry import BACKENDS

__all__ = ["Checker", "Key"]


@dataclass
class Checker:
    """Collects problems in one document instead of stopping at the first."""

    doc: Document
    problems: list[SourceError]

    def error(self, key: Key, message: str) -> None:
        self.problems.append(SourceError(self.doc.path, self.doc.line(key), dotted(key), message))

    def get(self, key: Key) -> Any:
        node: Any = self.doc.data
        for part in key:
            node = node[part]
        return node

    def mapping(
        self, key: Key, allowed: Collection[str], required: Iterable[str] = ()
    ) -> dict[str, Any]:
        value = self.get(key)
        if not isinstance(value, dict):
            self.error(key, f"expected a mapping, got {_kind(value)}")
            return {}
        for name in value:
            if name not in allowed:
                hint = closest(name, allowed)
                self.error(
                    (*key, name), "unknown key" + (f" (did you mean {hint!r}?)" if hint else "")
                )
        for name in required:
            if name not in value:
                self.error(key, f"missing required key {name!r}")
        return {k: v for k, v in value.items() if k in allowed}

    def typed(self, key: Key, value: Any, kind: type | tuple[type, ...], what: str) -> bool:
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _tuple(kind))
        if not ok:
            self.error(key, f"expected {what}, got {_kind(value)}")
        return ok

    def text(self, key: Key, value: Any, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if self.typed(key, value, str, "a string") and not value.strip():
            self.error(key, "must not be empty")
        return value if isinstance(value, str) else None

    def strings(
        self, key: Key, value: Any, choices: Sequence[str] | None = None
    ) -> tuple[str, ...]:
        if not self.typed(key, value, list, "a list of strings"):
            return ()
        out = []
        for i, item in enumerate(value):
            if not self.typed((*key, i), item, str, "a string"):
                continue
            if choices is None or self.choice((*key, i), item, choices):
                out.append(item)
        return tuple(out)

    def choice(self, key: Key, value: Any, choices: Sequence[str]) -> bool:
        if value not in choices:
            self.error(key, f"{value!r} is not one of {', '.join(choices)}")
        return value in choices

    def one_or_more(self, key: Key, value: Any, choices: Sequence[str]) -> tuple[str, ...]:
        """A string, or a list of them: a string's error names the field, not an item of a list."""
        if isinstance(value, str):
            return (value,) if self.choice(key, value, choices) else ()
        if not self.typed(key, value, list, "a string or a list of strings"):
            return ()
        return self.strings(key, value, choices)

    def version(self, key: Key, value: Any) -> Version | None:
        if value is None:
            return None
        if isinstance(value, float | int) and not isinstance(value, bool):
            self.error(key, f"write versions as quoted strings ({value!r} was read as a number)")
            return None
        if not self.typed(key, value, str, "a version string"):
            return None
        try:
            return Version(value)
        except InvalidVersion:
            self.error(key, f"{value!r} is not a valid PEP 440 version")
            return None

    def per_backend(self, key: Key, value: Any) -> dict[str, Version | None]:
        if isinstance(value, dict):
            out = {}
            for backend, item in value.items():
                if backend not in BACKENDS:
                    self.error((*key, backend), f"unknown backend; use {', '.join(BACKENDS)}")
                    continue
                out[backend] = self.version((*key, backend), item)
            return out
        version = self.version(key, value)
        return dict.fromkeys(BACKENDS, version)


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), f"a {type(value).__name__}")


def closest(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed name ``name`` most likely misspells, if one is close enough."""
    match = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.7)
    return match[0] if match else None
