"""Tell a regex that can backtrack catastrophically, for ``mgradcheck validate`` to warn about.

A warning, not a refusal: the shapes below are the classic exponential ones
(``(x+x+)+y``, ``(a*)*``, ``(a|ab)+``), but some patterns of those shapes are
harmless, and a pattern this misses is still bounded when it runs (see
:func:`mgradcheck.run.verdict.search`).
"""

from __future__ import annotations

from typing import Any

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

# Possessive repeats and atomic groups never backtrack, so they are left out.
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
_EVERYTHING = "any"


def danger(pattern: str) -> str | None:
    """Why ``pattern`` may take exponential time on some input, or None when no such shape is seen."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - the loader reports invalid patterns itself
        return None
    return _walk(list(parsed), inside_repeat=False)


def _unbounded(av: Any) -> bool:
    return bool(av[1] == sre_constants.MAXREPEAT or av[1] > 1)


def _items(av: Any) -> list[Any]:
    """The sub-pattern items of a node's argument, whatever its shape."""
    out: list[Any] = []
    for part in av if isinstance(av, (list, tuple)) else [av]:
        if isinstance(part, sre_parse.SubPattern):
            out += list(part)
        elif isinstance(part, (list, tuple)):
            out += _items(part)
    return out


def _walk(items: list[Any], inside_repeat: bool) -> str | None:
    for op, av in items:
        if op in _REPEATS and _unbounded(av):
            body = list(av[2])
            if inside_repeat:
                return "a quantifier inside a repeated group (nested quantifiers, like (x+)+)"
            while len(body) == 1 and body[0][0] == sre_constants.SUBPATTERN:
                body = list(body[0][1][-1])  # the group's own items
            branch = next((a for o, a in body if o == sre_constants.BRANCH), None)
            if branch is not None and _overlap([list(b) for b in branch[1]]):
                return "a repeated alternation whose branches can match the same text, like (a|ab)+"
            found = _walk(list(av[2]), inside_repeat=True)
        else:
            found = _walk(_items(av), inside_repeat) if op != sre_constants.IN else None
        if found:
            return found
    return None


def _first(items: list[Any]) -> set[Any] | str:
    """The characters a branch can start with, or "any" when that is not a short list."""
    if not items:
        return _EVERYTHING
    op, av = items[0]
    if op == sre_constants.LITERAL:
        return {av}
    if op == sre_constants.IN and all(o == sre_constants.LITERAL for o, _ in av):
        return {a for _, a in av}
    if op == sre_constants.SUBPATTERN:
        return _first(list(av[-1]))
    return _EVERYTHING


def _overlap(branches: list[list[Any]]) -> bool:
    """Two branches that start with the same character, or two that may start with anything."""
    seen: set[Any] = set()
    open_ended = 0
    for branch in branches:
        first = _first(branch)
        if isinstance(first, set):
            if first & seen:
                return True
            seen |= first
        else:
            open_ended += 1
    return open_ended > 1
