"""The versioned JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mgradcheck.atomic import write_text
from mgradcheck.run.results import Report


def render(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False) + "\n"


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
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an mgradcheck report")
    return data


def parse(data: dict[str, Any], path: Path) -> Report:
    """The report in ``data`` (read from ``path``); ValueError names the file."""
    try:
        return Report.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def read(path: Path) -> Report:
    """Read a report file; raise ValueError with the file named on anything wrong."""
    return parse(load(path), path)
