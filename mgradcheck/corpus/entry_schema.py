"""The corpus entry's JSON Schema, generated from the format's table (:mod:`.entry_format`).

It ships as mgradcheck/schemas/corpus-entry.schema.json, for editors and
``mgradcheck schema entry``; a test holds that file to what this writes.
After a change to the table, write it again: ``make schema``
(``python -m mgradcheck.corpus.entry_schema``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mgradcheck import schemas
from mgradcheck.corpus.entry_format import ENTRY, Kind, Named, Schema

PATH = Path(schemas.__file__).with_name(schemas.FILES["entry"])
_HEAD: Schema = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "mgradcheck corpus entry",
    "description": "One known MLX autodiff or mx.compile bug: its reproducer and what the corpus"
    " expects of each release. 'mgradcheck validate' is the authority; this schema is for editors"
    " (yaml-language-server) and checks all it can express.",
}


def entry_schema() -> Schema:
    definitions: dict[str, Schema] = {}
    head: Schema = _resolved(ENTRY, definitions)
    body = {k: head.pop(k) for k in ("properties", *ENTRY.rules)}  # read after the definitions
    return _HEAD | head | {"definitions": dict(sorted(definitions.items()))} | body


def _resolved(node: Any, definitions: dict[str, Schema]) -> Any:
    """``node`` in JSON Schema's words alone; each shared kind goes once into ``definitions``."""
    if isinstance(node, Named) and node.name not in definitions:
        definitions[node.name] = _resolved(node.kind, definitions)
    if isinstance(node, Kind):
        return _resolved(node.schema(), definitions)
    if isinstance(node, dict):
        return {key: _resolved(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolved(value, definitions) for value in node]
    return node


def text() -> str:
    """The schema file's text, as shipped."""
    return json.dumps(entry_schema(), indent=2) + "\n"


if __name__ == "__main__":
    PATH.write_text(text(), encoding="utf-8")
    print(f"wrote {PATH}")
