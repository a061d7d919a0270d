"""The versioned JSON report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mgradcheck.atomic import write_text
from mgradcheck.run.observation import strict
from mgradcheck.run.results import Report


def dumps(data: Any, indent: int = 2) -> str:
    """Strict JSON (RFC 8259) whatever a child wrote: no NaN, no lone surrogate."""
    return json.dumps(strict(data), indent=indent, allow_nan=False) + "\n"


def render(report: Report) -> str:
    return dumps(report.to_json())


def write(report: Report, path: Path) -> None:
    write_text(path, render(report))


def load(path: Path) -> dict[str, Any]:
    """A report file's JSON object, not yet checked against the schema; ValueError names the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: not an mgradcheck report (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an mgradcheck report")
    return dict(strict(data))


def parse(data: dict[str, Any], path: Path) -> Report:
    """The report in ``data`` (read from ``path``); ValueError names the file."""
    try:
        return Report.from_json(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"{path}: not a valid mgradcheck report ({detail})") from None


def read(path: Path) -> Report:
    """Read a report file; raise ValueError with the file named on anything wrong."""
    return parse(load(path), path)


def check_schema(data: Mapping[str, Any], name: str, schema: str, version: int, what: str) -> None:
    """Raise ValueError naming ``name`` unless ``data`` is a ``what`` of this schema and version."""
    if data.get("schema") != schema:
        raise ValueError(f"{name}: not an mgradcheck {what} (no 'schema: {schema}')")
    if data.get("schema_version") != version:
        raise ValueError(
            f"{name}: {what} schema version {data.get('schema_version')} is not "
            f"{version}, the version this mgradcheck reads"
        )
