"""The stages of ``mgradcheck run``, each importable and testable without Click.

load -> select -> prepare (probe the interpreter) -> execute -> write -> exit code.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck import __version__, loader
from mgradcheck.atomic import WriteError, check_writable
from mgradcheck.child_process import ChildCommand
from mgradcheck.entry import Entry
from mgradcheck.exitcodes import ExitCode, for_verdicts
from mgradcheck.observation import Environment
from mgradcheck.results import EntryResult, Report
from mgradcheck.runner import Display, Interrupted, Runner, RunOptions, probe


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def display_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_corpus(paths: Sequence[Path]) -> list[Entry]:
    """Load the corpus (the bundled one when no path is given)."""
    return loader.load(list(paths) or [loader.bundled_corpus()], display=display_path)


def select(
    entries: Sequence[Entry], ids: Sequence[str] = (), tags: Sequence[str] = ()
) -> list[Entry]:
    """The entries named by id (all when none) that carry every tag given."""
    known = {e.id for e in entries}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"no corpus entry with id {', '.join(map(repr, unknown))}; see 'mgradcheck list'"
        )
    chosen = [e for e in entries if (not ids or e.id in ids) and all(t in e.tags for t in tags)]
    if not chosen:
        raise UsageError("no corpus entry matches the ids and tags given")
    return chosen


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

    def check(self) -> None:
        seen: set[Path] = set()
        for path in self.paths():
            if path.resolve() in seen:
                raise UsageError(f"{path} is named for two different reports")
            seen.add(path.resolve())
            try:
                check_writable(path)
            except WriteError as exc:
                raise UsageError(str(exc)) from None


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
    svg = badges.svg_path(badge) if badge is not None else None
    return Outputs(
        json=json,
        junit=junit,
        summary=summary,
        summary_prefix=prefix,
        badge=svg,
        endpoint=badges.endpoint_beside(svg) if svg is not None else None,
    )


def prepare(
    python: str,
    scratch: Path | None = None,
    extra_env: dict[str, str] | None = None,
    kernels: Path | None = None,
) -> tuple[ChildCommand, Environment]:
    """Probe the interpreter and return the command that runs entries in it, kernels cached per release.

    ``kernels`` is the children's TMPDIR (where MLX caches compiled CPU kernels);
    by default one directory per release under the cache root. A release
    environment passes its own, kept with it.
    """
    from mgradcheck.paths import cache_root, kernel_dir
    from mgradcheck.runner import ProbeError

    base = ChildCommand(python, extra_env)
    try:
        env = probe(base, scratch or cache_root())
    except ProbeError as exc:
        raise UsageError(str(exc)) from None
    if env.mlx is None:
        raise UsageError(
            f"MLX is not importable by {python}; install it (pip install 'mgradcheck[cpu]' on Linux) "
            "or point --python at an environment that has it"
        )
    tmp = {"TMPDIR": str(kernels or kernel_dir(env.mlx, env.backend, env.python))}
    return ChildCommand(python, {**(extra_env or {}), **tmp}), env


def choose_interpreter(python: Path | None, mlx_version: str | None) -> Version | None:
    """Check ``--python``/``--mlx`` before anything starts; the release asked for, if any."""
    if mlx_version is None:
        return None
    from mgradcheck.index import parse_version

    release = parse_version(mlx_version)
    if python is not None:
        raise UsageError("--mlx and --python cannot be used together")
    return release


def open_interpreter(
    python: Path | None, release: Version | None, quiet: bool
) -> tuple[ChildCommand, Environment]:
    """The command and environment of the children: a release's cached environment
    (built if needed), ``--python``, or this interpreter."""
    if release is not None:
        from mgradcheck.cli_releases import release_command

        return release_command(release, quiet)
    return prepare(str(python) if python else sys.executable)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def execute(
    entries: Sequence[Entry],
    command: ChildCommand,
    env: Environment,
    options: RunOptions,
    display: Display,
    outputs: Outputs | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Report, Interrupted | None]:
    """Run the entries; return the report (complete or partial) and any interrupt.

    With ``outputs``, the report files are rewritten as each entry finishes
    (see :mod:`mgradcheck.reports.incremental`); the caller writes the final one.
    """
    started = now()
    memory = replace(command, memory_limit=options.memory_limit)
    from mgradcheck.paths import cache_root

    scratch = cache_root() / "runs"
    scratch.mkdir(exist_ok=True)
    info = {"argv": sys.argv[1:], "cwd": os.getcwd(), **(meta or {})}

    def report(results: Sequence[EntryResult], interrupted: bool, **extra: Any) -> Report:
        return Report(
            results=tuple(results),
            environments=(env,),
            started=started,
            finished=now(),
            interrupted=interrupted,
            mgradcheck=__version__,
            meta={**info, **extra},
        )

    if outputs is not None and outputs.paths():
        from mgradcheck.reports.incremental import IncrementalWriter

        display = IncrementalWriter(
            display,
            lambda done, planned: report(
                done, True, partial={"finished": len(done), "planned": planned}
            ),
            lambda partial: write(partial, outputs),
            lambda message: print(f"mgradcheck: warning: {message}", file=sys.stderr),
        )
    outcome = Runner(memory, env, options, display, scratch).run(entries)
    return report(outcome.results, outcome.interrupted is not None), outcome.interrupted


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


def exit_code(report: Report, interrupted: Interrupted | None = None) -> ExitCode:
    if interrupted is not None:
        return ExitCode(128 + interrupted.signum)
    return for_verdicts(r.verdict for r in report.results)
