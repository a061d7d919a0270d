"""Options several commands take alike: the corpus and its selection, -j/--jobs, report files."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click

from mgradcheck.cli.common import F
from mgradcheck.cli.completion import entry_ids, tags
from mgradcheck.errors import UsageError
from mgradcheck.reports.formats import BY_NAME, FORMATS, ReportFormat

CORPUS_OPTION = click.option(
    "--corpus",
    "corpus_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Corpus file or directory (repeatable). Default: ./corpus here or in the nearest "
    "parent (up to the repository's root), else the bundled corpus.",
)
TAG_OPTION = click.option(
    "--tag",
    "tags",
    multiple=True,
    shell_complete=tags,
    help="Only entries with this tag (repeatable: all must match).",
)
IDS_ARGUMENT = click.argument("ids", nargs=-1, shell_complete=entry_ids)
ID_ARGUMENT = click.argument("entry_id", metavar="ID", shell_complete=entry_ids)


JOBS_VARIABLE = "MGRADCHECK_JOBS"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, as a container or taskset limits it)."""
    import os

    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_jobs() -> int:
    """``$MGRADCHECK_JOBS`` when set (CI, the test suite), else the usable cores."""
    import os

    value = os.environ.get(JOBS_VARIABLE, "")
    if value.strip():
        try:
            jobs = int(value)
        except ValueError:
            raise UsageError(f"${JOBS_VARIABLE}={value!r} is not a whole number") from None
        if not 1 <= jobs <= MAX_JOBS:
            raise UsageError(f"${JOBS_VARIABLE}={jobs} is outside 1..{MAX_JOBS}")
        return jobs
    return min(usable_cores(), MAX_JOBS)


MAX_JOBS = 512


def jobs_option(what: str) -> Callable[[F], F]:
    """-j/--jobs: one default for every command; ``what``, its help, says what runs at once."""

    def default() -> int:
        try:
            return default_jobs()
        except UsageError as exc:
            raise click.BadParameter(str(exc), param_hint="-j/--jobs") from None

    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1, MAX_JOBS),
        default=default,
        show_default=f"${JOBS_VARIABLE}, else the usable cores",
        help=what,
    )


def on_stdout(*paths: Path | None) -> bool:
    """Whether one of these report paths is ``-``: then tables and summaries go to stderr."""
    return any(p is not None and p == Path("-") for p in paths)


def _report_option(form: ReportFormat, what: str) -> Callable[[F], F]:
    return click.option(
        f"--{form.name}",
        f"{form.name}_path",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help=form.help.format(what=what),
    )


def json_option(what: str = "the JSON report") -> Callable[[F], F]:
    """--json FILE, named the same by every command that writes JSON."""
    return _report_option(BY_NAME["json"], what)


def report_options(what: str = "the JSON report") -> Callable[[F], F]:
    """An option for each format a run's report is written in (--json, --junit, --summary,
    --badge: reports/formats.py), given to the command as one mapping ``reports``, format name
    -> FILE or None, for :func:`~mgradcheck.reports.outputs.report_outputs`."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            reports = {f.name: kwargs.pop(f"{f.name}_path") for f in FORMATS}
            return func(*args, reports=reports, **kwargs)

        for form in reversed(FORMATS):
            command = _report_option(form, what)(command)
        return cast(F, command)

    return decorate


__all__ = [
    "CORPUS_OPTION",
    "IDS_ARGUMENT",
    "ID_ARGUMENT",
    "JOBS_VARIABLE",
    "MAX_JOBS",
    "TAG_OPTION",
    "default_jobs",
    "jobs_option",
    "json_option",
    "on_stdout",
    "report_options",
    "usable_cores",
]
