"""How counts read in every message: ``1 entry``, ``2 entries``; never ``1 entries``."""

from __future__ import annotations

_IRREGULAR = {"entry": "entries", "was": "were", "is": "are"}


def plural(n: int, word: str) -> str:
    """``word`` as it goes with ``n``: ``plural(1, 'entry') == 'entry'``, ``plural(2, 'entry') == 'entries'``."""
    if n == 1:
        return word
    return _IRREGULAR.get(word, word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s"))


def count(n: int, word: str) -> str:
    """``1 entry``, ``0 entries``, ``3 reports``."""
    return f"{n} {plural(n, word)}"
