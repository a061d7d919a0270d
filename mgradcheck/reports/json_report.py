"""The versioned JSON report."""

from __future__ import annotations

import json
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.results import Report


def render(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False) + "\n"


def write(report: Report, path: Path) -> None:
    write_text(path, render(report))


def read(path: Path) -> Report:
    """Read a report file; raise ValueError with the file named on anything wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an mgradcheck report")
    try:
        return Report.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
