"""JSON Schemas shipped with mgradcheck: a corpus entry (for editors), and what commands write
as JSON for consumers: the report, ``list --json`` and ``show --json``.

Plain files in the package, read here and by ``mgradcheck schema``; the tests
hold each to what the code accepts and writes. The entry's is generated from the
loader's table (mgradcheck/corpus/entry_format.py) by ``make schema``.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

FILES = {
    "entry": "corpus-entry.schema.json",
    "report": "report.schema.json",
    "list": "list.schema.json",
    "show": "show.schema.json",
}


def schema_text(which: str) -> str:
    """The schema file's text: ``entry``, ``report``, ``list`` or ``show``."""
    return resources.files(__name__).joinpath(FILES[which]).read_text(encoding="utf-8")


def load(which: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_text(which))
    return data
