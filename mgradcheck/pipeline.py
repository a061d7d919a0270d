"""The stages of ``mgradcheck run``, each importable and testable without Click.

load -> select -> prepare (probe the interpreter) -> execute -> write -> exit code.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mgradcheck import __version__, loader
from mgradcheck.atomic import WriteError, check_writable
from mgradcheck.child_process import ChildCommand
from mgradcheck.entry import Entry
from mgradcheck.exitcodes import ExitCode, for_verdicts
from mgradcheck.observation import Environment
from mgradcheck.results import Report
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

    def paths(self) -> list[Path]:
        return [p for p in (self.json, *self.extra) if p is not None]

    def check(self) -> None:
        for path in self.paths():
            try:
                check_writable(path)
            except WriteError as exc:
                raise UsageError(str(exc)) from None


def prepare(
    python: str, scratch: Path | None = None, extra_env: dict[str, str] | None = None
) -> tuple[ChildCommand, Environment]:
    """Probe the interpreter and return the command that runs entries in it, kernels cached per release."""
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
    tmp = {"TMPDIR": str(kernel_dir(env.mlx, env.backend, env.python))}
    return ChildCommand(python, {**(extra_env or {}), **tmp}), env


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def execute(
    entries: Sequence[Entry],
    command: ChildCommand,
    env: Environment,
    options: RunOptions,
    display: Display,
) -> tuple[Report, Interrupted | None]:
    """Run the entries; return the report (complete or partial) and any interrupt."""
    started = now()
    memory = replace(command, memory_limit=options.memory_limit)
    from mgradcheck.paths import cache_root

    scratch = cache_root() / "runs"
    scratch.mkdir(exist_ok=True)
    outcome = Runner(memory, env, options, display, scratch).run(entries)
    report = Report(
        results=tuple(outcome.results),
        environments=(env,),
        started=started,
        finished=now(),
        interrupted=outcome.interrupted is not None,
        mgradcheck=__version__,
        meta={"argv": sys.argv[1:], "cwd": os.getcwd()},
    )
    return report, outcome.interrupted


def exit_code(report: Report, interrupted: Interrupted | None = None) -> ExitCode:
    if interrupted is not None:
        return ExitCode(128 + interrupted.signum)
    return for_verdicts(r.verdict for r in report.results)
