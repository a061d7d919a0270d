"""Report formats, one row each: its option, how a file of it begins, and its writer.

``run``, ``tests`` and ``report merge`` take each format's option and write the run's report in
every format asked for (:mod:`mgradcheck.reports.outputs`). A new format is its writer and one
row here; a writer is imported only when its format is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mgradcheck.run.results import Report


@dataclass(frozen=True)
class Output:
    """One report to write: its format, the file its option names, and what that file held
    before this run where the report is appended to it (GitHub's step summary)."""

    format: ReportFormat
    path: Path
    prefix: str = ""

    def paths(self) -> tuple[Path, ...]:
        return self.format.files(self.path)


def _alone(path: Path) -> tuple[Path, ...]:
    return (path,)


@dataclass(frozen=True)
class ReportFormat:
    name: str  # its option is --NAME FILE
    help: str  # the option's; {what} is the command's word for its report
    begins: str  # a regex: how a file of this format begins
    write: Callable[[Report, Output], None]
    files: Callable[[Path], tuple[Path, ...]] = _alone  # what --NAME FILE writes
    default: Callable[[], Path | None] | None = None  # appended to when the option is not given


def _json(report: Report, output: Output) -> None:
    from mgradcheck.reports import json_report

    json_report.write(report, output.path)


def _junit(report: Report, output: Output) -> None:
    from mgradcheck.reports import junit

    junit.write(report, output.path)


def _summary(report: Report, output: Output) -> None:
    from mgradcheck.reports import markdown

    markdown.write(report, output.path, output.prefix)


def step_summary() -> Path | None:
    """GitHub Actions' job summary file, when running there."""
    value = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None


def _badge(report: Report, output: Output) -> None:
    from mgradcheck.reports import badge

    badge.write(report, *badge.files(output.path))


def _badge_files(path: Path) -> tuple[Path, ...]:
    from mgradcheck.reports import badge  # XML: only for a badge

    return tuple(p for p in badge.files(path) if p is not None)


_STDOUT = " ('-': standard output"
FORMATS = (
    ReportFormat("json", "Write {what} here" + _STDOUT + ", the table then to stderr).",
                 r'\{\s*"schema"\s*:\s*"mgradcheck-', _json),
    ReportFormat("junit", "Write a JUnit XML report here" + _STDOUT + ").",
                 r"<\?xml[^>]*>\s*<testsuites?[\s>]", _junit),  # another tool's JUnit too
    ReportFormat("summary", "Write a Markdown summary here" + _STDOUT + "). Default in GitHub "
                 "Actions: append to $GITHUB_STEP_SUMMARY.", r"## mgradcheck: ", _summary,
                 default=step_summary),
    ReportFormat("badge", "Write a status badge: FILE (.svg added if missing) and FILE's stem + "
                 ".shields.json beside it ('-': the SVG to standard output).",
                 r'<svg xmlns="http://www\.w3\.org/2000/svg" width="\d+" height="20" role="img"'
                 r'|\{\s*"schemaVersion"\s*:', _badge, _badge_files),  # the SVG, the endpoint JSON
)  # fmt: skip
BY_NAME = {f.name: f for f in FORMATS}
# How the files that other commands write begin: a matrix's --markdown and --html, report
# upstream's issue, list --markdown's corpus table. A file that begins as none of these nor
# as a report is someone's work (a module, a config, notes), never replaced by a report.
OTHER_FILES = (
    r"### MLX releases against ",
    r"<!DOCTYPE html>\n<!-- mgradcheck matrix -->",
    r"## .*\n(?:.*\n)*?### Reproducer\n",
    r"\| id \| bug \| on Linux ",
)

__all__ = ["BY_NAME", "FORMATS", "OTHER_FILES", "Output", "ReportFormat", "step_summary"]
