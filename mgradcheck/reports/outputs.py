"""The report files one command writes, checked before anything runs and written atomically."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mgradcheck.atomic import STDOUT, check_writable
from mgradcheck.corpus.loader import CORPUS_SUFFIXES
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
        """These outputs less the one on standard output: what may be rewritten as a run goes."""

        def kept(path: Path | None) -> Path | None:
            return None if path == STDOUT else path

        return replace(
            self,
            json=kept(self.json),
            extra=tuple(p for p in self.extra if p != STDOUT),
            junit=kept(self.junit),
            summary=kept(self.summary),
            badge=kept(self.badge),
            endpoint=kept(self.endpoint),
        )

    def check(self, inputs: Sequence[Path] = ()) -> None:
        """Fail now, before anything runs, on a report that cannot be written or would replace an input.

        ``inputs`` are what the command reads (corpus files and directories,
        report files): no report may be one of them, or a YAML file inside an
        input directory, which the next run would read as a corpus file.
        """
        seen: set[Path] = set()
        if self.paths().count(STDOUT) > 1:
            raise UsageError("only one report can go to standard output ('-')")
        for path in self.paths():
            if path == STDOUT:
                continue
            if path.resolve() in seen:
                raise UsageError(f"{path} is named for two different reports")
            seen.add(path.resolve())
            _refuse_input(path, inputs)
            check_writable(path)


def _refuse_input(path: Path, inputs: Sequence[Path]) -> None:
    target = path.resolve()
    for given in inputs:
        source = given.resolve()
        if source.is_dir():
            inside = source == target or source in target.parents
            if inside and target.suffix in CORPUS_SUFFIXES:
                raise UsageError(
                    f"cannot write {path}: it would be a corpus file in {given}, which this command reads"
                )
        elif target == source or (target.exists() and _same_file(target, source)):
            raise UsageError(f"cannot write {path}: it is {given}, which this command reads")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)  # a hard link to the input is the input
    except OSError:
        return False


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
    from mgradcheck.reports import badge as badges
    from mgradcheck.reports.markdown import step_summary

    prefix = ""
    if summary is None and (summary := step_summary()) is not None:
        try:
            prefix = summary.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            prefix = ""
        except OSError as exc:
            raise UsageError(f"cannot read {summary}: {exc.strerror or exc}") from None
    svg, endpoint = badges.files(badge) if badge is not None else (None, None)
    return Outputs(
        json=json,
        junit=junit,
        summary=summary,
        summary_prefix=prefix,
        badge=svg,
        endpoint=endpoint,
    )


def write(report: Report, outputs: Outputs) -> None:
    """Write the report to every file asked for, each atomically."""
    from mgradcheck.reports import badge, json_report, junit, markdown

    if outputs.json is not None:
        json_report.write(report, outputs.json)
    if outputs.junit is not None:
        junit.write(report, outputs.junit)
    if outputs.summary is not None:
        markdown.write(report, outputs.summary, outputs.summary_prefix)
    if outputs.badge is not None or outputs.endpoint is not None:
        badge.write(report, outputs.badge, outputs.endpoint)


__all__ = ["Outputs", "WriteError", "check_writable_paths", "report_outputs", "write"]
