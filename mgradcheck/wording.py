"""How counts read in every message: ``1 entry``, ``2 entries``; never ``1 entries``."""

from __future__ import annotations

_IRREGULAR = {"was": "were", "is": "are"}


def plural(n: int, word: str) -> str:
    """``word`` as it goes with ``n``: ``plural(1, 'entry') == 'entry'``, ``plural(2, 'entry') == 'entries'``.

    The last word of a phrase takes the ending: ``emitted entry`` -> ``emitted entries``.
    """
    if n == 1:
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def count(n: int, word: str) -> str:
    """``1 entry``, ``0 entries``, ``3 reports``."""
    return f"{n} {plural(n, word)}"
