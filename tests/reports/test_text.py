"""The text the report writers share: what XML 1.0 cannot hold, over every code point."""

from __future__ import annotations

from mgradcheck.reports.text import clean, xml_document


def legal(code: int) -> bool:
    """XML 1.0's Char production, as the specification writes it."""
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def test_exactly_the_characters_xml_forbids_are_escaped_or_dropped() -> None:
    every = "".join(map(chr, range(0x110000)))
    kept = "".join(c for c in every if legal(ord(c)))
    assert clean(every.replace("\x1b", "")) == kept
    assert all(legal(ord(c)) for c in xml_document(every))
    assert xml_document("a\x00\tb\ud800\ufffe") == "a\\x00\tb\\ud800\\ufffe"
