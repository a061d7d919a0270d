"""GitHub Actions annotations: each verdict that needs a person, pinned to its corpus entry.

Inside Actions (``GITHUB_ACTIONS=true``) ``mgradcheck run`` prints one
workflow command per REGRESSED, UNEXPECTED, FIXED or not-run entry,
``::error file=corpus/x.yaml,line=1,title=...::reason``, which GitHub shows
on the run's page and beside the line in a pull request's files. The level is
the verdict's tone: red is an error, amber a warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mgradcheck.run.display import printable
from mgradcheck.run.results import EntryResult, Report

LEVELS = {"red": "error", "amber": "warning"}
MESSAGE_CHARS = 1000


def in_actions(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    """A command's message, escaped as the runner unescapes it; control characters shown, not sent
    (a log viewer would act on a child's escape sequences)."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _file(path: str, workspace: Path) -> str | None:
    """The entry's file relative to the checkout, or None when it lies outside (the bundled corpus)."""
    try:
        return Path(path).resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return None


def annotation(result: EntryResult, line: int | None, workspace: Path) -> str | None:
    """The workflow command for one result, or None when its verdict needs no one."""
    standing = result.standing  # a corpus entry's verdict, or a test's outcome
    level = LEVELS.get(standing.tone) if standing.is_failure else None
    if level is None:
        return None
    where = []
    file = _file(result.path, workspace)
    if file is not None:
        where.append(f"file={_property(file)}")
        if line is not None:
            where.append(f"line={line}")
    where.append(f"title={_property(f'mgradcheck: {result.id} {standing.label}')}")
    message = (
        f"{standing.label}: {result.reason} ({result.outcome_text}; {result.environment.label})"
    )
    return f"::{level} {','.join(where)}::{_data(message[:MESSAGE_CHARS])}"


def annotate(
    report: Report, lines: Mapping[str, int], environ: Mapping[str, str] = os.environ
) -> list[str]:
    """One command per result that needs a person; ``lines`` maps entry ids to their line."""
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    found = (annotation(r, lines.get(r.id), workspace) for r in report.results)
    return [command for command in found if command is not None]
