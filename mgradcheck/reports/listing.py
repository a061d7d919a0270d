"""``mgradcheck list``: one entry per row (id, what the corpus expects here, title), as text
within a width and as JSON.

The id is what people copy into ``show`` and ``run``: it is never broken. The title is the
least important column: it wraps beside the others while it has room
(:data:`MIN_TITLE`), and below its row, indented, when it has not.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from mgradcheck.backends import family
from mgradcheck.corpus.entry import Entry
from mgradcheck.run.display import printable

SCHEMA = "mgradcheck-list"
SCHEMA_VERSION = 1
MIN_TITLE = 40  # a title column narrower than this reads worse than the title on lines of its own
INDENT = "    "


def expectation(entry: Entry, backend: str) -> str:
    """``fixed in 0.32.0``, ``open, unreported``: what the corpus expects on ``backend``."""
    unreported = ", unreported" if entry.upstream.report is None and entry.bug.affects else ""
    return entry.bug.expectation(family(backend)) + unreported


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, max(width, 1), break_on_hyphens=False) or [""]


def render(entries: Sequence[Entry], backend: str, width: int) -> str:
    """The entries as aligned columns within ``width`` (an id longer than that stays whole)."""
    rows = [(e.id, expectation(e, backend), printable(e.title)) for e in entries]
    id_width = max(len(entry_id) for entry_id, _, _ in rows)
    status_width = max(len(status) for _, status, _ in rows)
    beside = width - id_width - status_width - 4
    lines: list[str] = []
    for entry_id, status, title in rows:
        if beside >= MIN_TITLE:
            first, *rest = _wrap(title, beside)
            lines.append(f"{entry_id:<{id_width}}  {status:<{status_width}}  {first}".rstrip())
            lines += [" " * (width - beside) + line for line in rest]
            continue
        head = f"{entry_id:<{id_width}}  {status}"
        if len(head) <= width:
            lines.append(head)
        else:
            lines += [entry_id, *(INDENT + line for line in _wrap(status, width - len(INDENT)))]
        lines += [INDENT + line for line in _wrap(title, width - len(INDENT))]
    return "\n".join(lines)


def to_json(entries: Sequence[Entry], backend: str) -> dict[str, Any]:
    """The listing as JSON (``mgradcheck schema list`` holds its keys)."""
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "backend": backend,
        "entries": [
            {
                "id": e.id,
                "title": e.title,
                "expectation": e.bug.expectation(family(backend)),
                "report": e.upstream.report,
                "tags": list(e.tags),
                "path": e.path,
                "line": e.line,
            }
            for e in entries
        ],
    }
