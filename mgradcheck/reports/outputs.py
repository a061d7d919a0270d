"""The report files one command writes, checked before anything runs and written atomically."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mgradcheck.atomic import STDOUT, check_writable, written_through
from mgradcheck.corpus.files import CORPUS_SUFFIXES
from mgradcheck.errors import UsageError, WriteError
from mgradcheck.run.results import Report


@dataclass(frozen=True)
class Outputs:
    """Report files to write after a run; all checked for writability before it starts."""

    json: Path | None = None
    extra: tuple[Path, ...] = field(default_factory=tuple)
    junit: Path | None = None
    summary: Path | None = None
    summary_prefix: str = ""  # what an appended-to summary (GitHub's) held before this run
    badge: Path | None = None  # the SVG
    endpoint: Path | None = None  # the badge as a shields.io endpoint JSON

    def paths(self) -> list[Path]:
        named = (self.json, *self.extra, self.junit, self.summary, self.badge, self.endpoint)
        return [p for p in named if p is not None]

    @property
    def to_stdout(self) -> bool:
        """Whether one report goes to standard output (``-``): then the table goes to stderr."""
        return STDOUT in self.paths()

    def files(self) -> Outputs:
        """These outputs less those written through (standard output, a device, a FIFO): what
        may be rewritten as a run goes. A reader of a pipe would take each rewrite as a report."""

        def kept(path: Path | None) -> Path | None:
            return None if path is None or written_through(path) else path

        return replace(
            self,
            json=kept(self.json),
            extra=tuple(p for p in self.extra if not written_through(p)),
            junit=kept(self.junit),
            summary=kept(self.summary),
            badge=kept(self.badge),
            endpoint=kept(self.endpoint),
        )

    def check(self, inputs: Sequence[Path] = ()) -> None:
        """Fail now, before anything runs, on a report that cannot be written or would replace an input.

        ``inputs`` are what the command reads (corpus files and directories,
        report files, test modules and their directories): no report may be one
        of them, or a YAML or Python file inside an input directory, which the
        next run would read. Nor may it replace an existing file that is not a
        report of ours (a module, a config: someone's work); standard output
        must be open for writing.
        """
        from mgradcheck.reports.github import step_summary

        seen: set[Path] = set()
        if self.paths().count(STDOUT) > 1:
            raise UsageError("only one report can go to standard output ('-')")
        for path in self.paths():
            if path == STDOUT:
                check_writable(path)  # closed, or open for reading only
                continue
            if path.resolve() in seen:
                raise UsageError(f"{path} is named for two different reports")
            seen.add(path.resolve())
            refuse_input(path, inputs)
            check_writable(path)
            if path != step_summary():  # GitHub's, appended to: other steps wrote it
                refuse_foreign(path)


# What a file that a directory input holds is read as (corpus files; test modules and the
# modules they import): no report may be one, new or not.
READ_SUFFIXES = {**dict.fromkeys(CORPUS_SUFFIXES, "a corpus file"), ".py": "a Python module"}


def refuse_input(path: Path, inputs: Sequence[Path]) -> None:
    """Refuse ``path`` if it is one of ``inputs`` or a file that an input directory would read."""
    target = path.resolve()
    for given in inputs:
        source = given.resolve()
        if source.is_dir():
            inside = source == target or source in target.parents
            if inside and target.suffix in READ_SUFFIXES:
                raise UsageError(
                    f"cannot write {path}: it would be {READ_SUFFIXES[target.suffix]} in "
                    f"{given}, which this command reads"
                )
        elif target == source or (target.exists() and _same_file(target, source)):
            raise UsageError(f"cannot write {path}: it is {given}, which this command reads")


# How each of our writers begins its file: the JSON reports (run, tests, merge, bisect, matrix,
# sweep) and the shields.io endpoint, JUnit (another tool's too), the badge, the Markdown
# summary, a matrix's Markdown and HTML page, report upstream's issue, list's corpus table. A
# file that begins otherwise is someone's work (a module, a config, notes), never replaced by a
# report.
_OURS = (  # compiled by re on first use: only a file already there is sniffed
    r'\s*(?:\{\s*"(?:schema"\s*:\s*"mgradcheck-|schemaVersion"\s*:)'
    r"|<\?xml[^>]*>\s*<testsuites?[\s>]"
    r'|<svg xmlns="http://www\.w3\.org/2000/svg" width="\d+" height="20" role="img"'
    r"|## mgradcheck: |### MLX releases against |<!DOCTYPE html>\n<!-- mgradcheck matrix -->"
    r"|## .*\n(?:.*\n)*?### Reproducer\n"
    r"|\| id \| bug \| on Linux )"
)
_SNIFF_BYTES = 64 * 1024


def refuse_foreign(path: Path) -> None:
    """Refuse to replace an existing file that is not a report of ours (an earlier one is rewritten)."""
    if not path.is_file():
        return
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise WriteError(f"cannot write {path}: cannot read it: {exc.strerror or exc}") from None
    if head.strip() and not re.match(_OURS, head):
        raise UsageError(
            f"cannot write {path}: it exists and is not an mgradcheck report; "
            "move it away or choose another path"
        )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)  # a hard link to the input is the input
    except OSError:
        return False


def check_directory(directory: Path) -> None:
    """Fail now, before a long command, if files cannot be written in ``directory`` (made with
    its parents when missing): an entry ``new`` writes, the entries ``sweep --emit`` writes."""
    absolute = directory.absolute()
    existing = next(p for p in (absolute, *absolute.parents) if p.exists())
    if not existing.is_dir():
        raise WriteError(f"cannot write in {directory}: {existing} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mgradcheck.", suffix=".probe", dir=existing)
    except OSError as exc:
        what = "write in" if existing == absolute else "make"
        raise WriteError(f"cannot {what} {directory}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def check_writable_paths(*paths: Path | None, inputs: Sequence[Path] = ()) -> None:
    """Fail now, before a long command, if a file it will write later cannot be written."""
    Outputs(extra=tuple(p for p in paths if p is not None)).check(inputs)


def report_outputs(
    json: Path | None = None,
    junit: Path | None = None,
    summary: Path | None = None,
    badge: Path | None = None,
) -> Outputs:
    """The files of ``--json/--junit/--summary/--badge``.

    Without ``--summary``, a run inside GitHub Actions appends its summary to
    the job's (``$GITHUB_STEP_SUMMARY``), keeping what earlier steps wrote.
    ``--badge FILE`` writes ``FILE`` (``.svg`` added if missing) and its
    shields.io endpoint beside it: ``badge.svg`` -> ``badge.shields.json``.
    Any of them may be ``-``, standard output (the badge then without its endpoint).
    """
    from mgradcheck.reports.github import step_summary

    prefix = ""
    if summary is None and (summary := step_summary()) is not None:
        try:
            prefix = summary.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            prefix = ""
        except OSError as exc:
            raise UsageError(f"cannot read {summary}: {exc.strerror or exc}") from None
    svg, endpoint = None, None
    if badge is not None:
        from mgradcheck.reports import badge as badges  # XML: only for a badge

        svg, endpoint = badges.files(badge)
    return Outputs(
        json=json,
        junit=junit,
        summary=summary,
        summary_prefix=prefix,
        badge=svg,
        endpoint=endpoint,
    )


def write(report: Report, outputs: Outputs) -> None:
    """Write the report to every file asked for, each atomically (each writer imported only then)."""
    if outputs.json is not None:
        from mgradcheck.reports import json_report

        json_report.write(report, outputs.json)
    if outputs.junit is not None:
        from mgradcheck.reports import junit

        junit.write(report, outputs.junit)
    if outputs.summary is not None:
        from mgradcheck.reports import markdown

        markdown.write(report, outputs.summary, outputs.summary_prefix)
    if outputs.badge is not None or outputs.endpoint is not None:
        from mgradcheck.reports import badge

        badge.write(report, outputs.badge, outputs.endpoint)


__all__ = [
    "Outputs",
    "WriteError",
    "check_directory",
    "check_writable_paths",
    "refuse_foreign",
    "refuse_input",
    "report_outputs",
    "write",
]
