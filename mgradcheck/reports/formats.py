"""The report formats, one row each: its option, how a file of it begins, and its writer.

``run``, ``tests`` and ``report merge`` take an option for each format with a writer and write
the run's report in each one asked for (:mod:`mgradcheck.reports.outputs`). The formats
without one are written by their own commands (``--markdown`` and ``--html`` of ``matrix`` and
``list``, ``report upstream``'s issue): they are here for how their files begin, since a file
that begins as none of these is someone's work, never replaced by a report. A new format is
its writer and one row; each writer is imported only when its format is asked for.
"""

from __future__ import annotations

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

    def write(self, report: Report) -> None:
        if self.format.write is not None:
            self.format.write(report, self)


def _alone(path: Path) -> tuple[Path, ...]:
    return (path,)


@dataclass(frozen=True)
class ReportFormat:
    name: str  # its option is --NAME FILE
    begins: str  # a regex: how a file of this format begins
    help: str = ""  # the option's; {what} is the command's word for its JSON
    write: Callable[[Report, Output], None] | None = None  # None: written by its own command
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


def _step_summary() -> Path | None:
    from mgradcheck.reports.github import step_summary

    return step_summary()


def _badge(report: Report, output: Output) -> None:
    from mgradcheck.reports import badge

    badge.write(report, *badge.files(output.path))


def _badge_files(path: Path) -> tuple[Path, ...]:
    from mgradcheck.reports import badge  # XML: only for a badge

    return tuple(p for p in badge.files(path) if p is not None)


_STDOUT = " ('-': standard output"
FORMATS = (
    ReportFormat(
        "json",
        r'\{\s*"schema"\s*:\s*"mgradcheck-',
        "Write {what} here" + _STDOUT + ", the table then to stderr).",
        _json,
    ),
    ReportFormat(
        "junit",
        r"<\?xml[^>]*>\s*<testsuites?[\s>]",  # another tool's JUnit too
        "Write a JUnit XML report here" + _STDOUT + ").",
        _junit,
    ),
    ReportFormat(
        "summary",
        r"## mgradcheck: ",
        "Write a Markdown summary here" + _STDOUT + "). Default in GitHub Actions: append to "
        "$GITHUB_STEP_SUMMARY.",
        _summary,
        default=_step_summary,
    ),
    ReportFormat(
        "badge",
        # the SVG, and the same badge as a shields.io endpoint JSON beside it
        r'<svg xmlns="http://www\.w3\.org/2000/svg" width="\d+" height="20" role="img"'
        r'|\{\s*"schemaVersion"\s*:',
        "Write a status badge: FILE (.svg added if missing) and FILE's stem + .shields.json "
        "beside it ('-': the SVG to standard output).",
        _badge,
        _badge_files,
    ),
    ReportFormat("matrix markdown", r"### MLX releases against "),
    ReportFormat("matrix html", r"<!DOCTYPE html>\n<!-- mgradcheck matrix -->"),
    ReportFormat("upstream issue", r"## .*\n(?:.*\n)*?### Reproducer\n"),
    ReportFormat("corpus table", r"\| id \| bug \| on Linux "),
)
# The formats a run's report is written in, each an option of the commands that write one.
RUN_FORMATS = tuple(f for f in FORMATS if f.write is not None)
BY_NAME = {f.name: f for f in FORMATS}

__all__ = ["BY_NAME", "FORMATS", "RUN_FORMATS", "Output", "ReportFormat"]
