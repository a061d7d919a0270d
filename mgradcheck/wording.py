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


def wrap(text: str, width: int | None, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` columns, broken only between words, each starting
    with ``indent`` (the first with ``first``, a bullet, when given); ``width`` None (a pipe, no
    width known) keeps each line whole.

    Prose only: a word longer than the width (a path, a URL) stands whole on a line of its own,
    longer than the width, rather than being cut where a terminal would break it. Lines of the
    text stay lines (a traceback keeps its shape).
    """
    import textwrap  # only here: a run that wraps no prose never loads it

    lines: list[str] = []
    for n, line in enumerate(text.splitlines() or [""]):
        start = first if first is not None and n == 0 else indent
        if width is None or len(start) + len(line) <= width or not line.strip():
            lines.append(start + line if line.strip() else "")
            continue
        # A line's own leading spaces (a traceback's) are kept on each piece of it.
        own = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(
            line.strip(), max(width, len(start + own) + 1), initial_indent=start + own,
            subsequent_indent=indent + own, break_long_words=False, break_on_hyphens=False,
        )  # fmt: skip
    return lines
