"""The stages of ``mgradcheck run``, each importable and testable without Click.

load -> select -> prepare (probe the interpreter) -> execute -> exit code; the command
(:mod:`mgradcheck.cli.run`) calls them in that order and writes the reports between the
last two. A running run hands its partial reports to ``execute``'s ``snapshots``
(:class:`mgradcheck.reports.incremental.SnapshotWriter`), which rewrites the report files.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mgradcheck import __version__
from mgradcheck.clock import now
from mgradcheck.corpus import loader
from mgradcheck.corpus.document import SourceError
from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.fields import closest
from mgradcheck.corpus.files import (
    bundled_corpus,
    default_corpus,
    held_ids,
    is_bundled,
    local_corpus,
)
from mgradcheck.errors import EnvironmentFailure, Interrupted, UsageError
from mgradcheck.exitcodes import ExitCode, for_verdicts
from mgradcheck.paths import cache_root, kernel_dir, run_scratch
from mgradcheck.run import probe_cache
from mgradcheck.run.child_process import ChildCommand, LiveChild
from mgradcheck.run.display import Progress
from mgradcheck.run.mlx_build import identity
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.run.runner import Runner, RunOptions, probe
from mgradcheck.wording import count


def display_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it."""
    return displayer()(path)


def displayer() -> Callable[[Path], str]:
    """:func:`display_path` for the files of one load: the working directory and each file's
    directory are resolved once, not once a file (bench/README.md has what that saves)."""
    cwd = str(Path.cwd().resolve())
    below = cwd if cwd.endswith(os.sep) else cwd + os.sep
    folders: dict[str, str] = {}

    def display(path: Path) -> str:
        text = os.fspath(path)
        folder, name = os.path.split(text)
        if name in ("", ".", "..") or os.path.islink(text):
            resolved = str(path.resolve())  # a link leads wherever it leads
        else:
            if folder not in folders:
                folders[folder] = str(Path(folder or ".").resolve())
            resolved = os.path.join(folders[folder], name)
        if resolved == cwd:
            return "."
        return resolved[len(below) :] if resolved.startswith(below) else str(path)

    return display


def corpus_inputs(paths: Sequence[Path]) -> list[Path]:
    """The corpus files and directories a command reads: those given, else the project's own
    corpus (:func:`mgradcheck.corpus.files.local_corpus`), else the bundled one."""
    return list(paths) or [default_corpus(Path.cwd())]


def _as_typed(directory: Path) -> str:
    """A directory as the user types it after ``--corpus``: relative ones begin ``./``."""
    shown = display_path(directory)
    return shown if os.path.isabs(shown) else f".{os.sep}{shown}"


def load_corpus(
    paths: Sequence[Path],
    warnings: list[Exception] | None = None,
    only: Collection[str] | None = None,
    ids: list[str] | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Entry]:
    """Load the corpus (:func:`corpus_inputs`); ``warnings`` receives risky values; ``only``
    and ``ids`` are :func:`mgradcheck.corpus.loader.load`'s. ``say`` is told which corpus was
    read when it was found rather than named (a project's own), once, before any run."""
    found: list[SourceError] | None = [] if warnings is not None else None
    every: list[str] = [] if ids is None else ids
    inputs = corpus_inputs(paths)
    entries = loader.load(inputs, displayer(), found, only=only, ids=every)
    if say is not None and not paths and not is_bundled(inputs[0]):
        say(f"corpus: {_as_typed(inputs[0])} ({count(len(every), 'entry')})")
    if warnings is not None and found:
        warnings.extend(found)
    return entries


def _elsewhere(paths: Sequence[Path], missing: Sequence[str]) -> str:
    """For ids no corpus read holds: the corpus not read (this project's, the bundled one)
    that holds them, else this project's corpus when it was not read."""
    read = {p.resolve() for p in corpus_inputs(paths)}
    local = local_corpus(Path.cwd())
    unread = [d for d in (local, bundled_corpus()) if d is not None and d.resolve() not in read]
    for directory in unread:
        if set(missing) <= held_ids(directory).keys():
            typed = _as_typed(directory)
            return f" ({typed} holds it but was not read: --corpus {typed})"
    if local is not None and local in unread:
        typed = _as_typed(local)
        return f" ({typed}, this project's corpus, was not read: --corpus {typed})"
    return ""


def load_selected(
    paths: Sequence[Path],
    ids: Sequence[str] = (),
    tags: Sequence[str] = (),
    say: Callable[[str], None] | None = None,
) -> list[Entry]:
    """:func:`select` of :func:`load_corpus`: every file is still validated when ids are named."""
    known: list[str] = []
    entries = load_corpus(paths, only=set(ids) if ids else None, ids=known, say=say)
    missing = [i for i in ids if i not in set(known)]
    return select(entries, ids, tags, known, _elsewhere(paths, missing) if missing else "")


def select(
    entries: Sequence[Entry],
    ids: Sequence[str] = (),
    tags: Sequence[str] = (),
    known: Sequence[str] | None = None,
    hint: str = "",
) -> list[Entry]:
    """The entries named by id (all when none) that carry every tag given; ``known``, when
    given, is every id of the corpus that ``entries`` were taken from; ``hint`` ends the
    error for an id it lacks."""
    every = set(known) if known is not None else {e.id for e in entries}
    unknown = [i for i in ids if i not in every]
    if unknown:
        hints = [(i, closest(i, every)) for i in unknown]
        named = ", ".join(f"{i!r}" + (f" (did you mean {h!r}?)" if h else "") for i, h in hints)
        raise UsageError(f"no corpus entry with id {named}; see 'mgradcheck list'{hint}")
    chosen = [e for e in entries if (not ids or e.id in ids) and all(t in e.tags for t in tags)]
    if not chosen:
        raise UsageError("no corpus entry matches the ids and tags given")
    return chosen


def prepare(
    python: str,
    extra_env: dict[str, str] | None = None,
    kernels: Path | None = None,
) -> tuple[ChildCommand, Environment]:
    """Probe the interpreter and return the command that runs entries in it, kernels cached per build.

    ``kernels`` is where MLX's compiled CPU kernels are kept, by default under the
    cache root (a release environment passes its own, kept with it), in one
    directory per build of MLX (:mod:`mgradcheck.run.mlx_build`); each child gets a
    TMPDIR of its own seeded from it (:mod:`mgradcheck.run.kernels`).
    """
    base = ChildCommand(python, extra_env)
    env = _probe(base)
    if env.mlx is None:  # the interpreter runs, its environment lacks MLX: that is where it goes
        import shlex  # only here: a run that finds MLX never loads it

        package = "mlx" if sys.platform == "darwin" else "mlx[cpu]"
        raise EnvironmentFailure(
            f"MLX is not importable by {python}; install it into that interpreter "
            f"({shlex.quote(python)} -m pip install '{package}'), or point --python at one that has it"
        )
    build = identity(python, base.env()) or _unidentified(python)
    kernels = kernel_dir(
        kernels or cache_root() / "kernels", env.mlx, env.backend, env.python, build
    )
    return ChildCommand(python, extra_env, kernels=kernels), env


def _unidentified(python: str) -> str:
    """A build its files cannot name (an editable MLX, ``PYTHONPATH``) is known by its
    interpreter alone: its kernels are kept apart from every other interpreter's."""
    return f"unidentified-{zlib.crc32(os.path.abspath(python).encode()):08x}"


def _probe(command: ChildCommand) -> Environment:
    """What the interpreter runs: from the probe cache when its files say nothing changed."""
    root = cache_root() / "probes"
    key = probe_cache.key(command.python, command.env())
    answer = probe_cache.get(root, key) if key is not None else None
    if answer is not None:
        env = Environment.from_json(answer)
    else:
        with run_scratch() as scratch:  # private: other runs may be probing other interpreters
            env = probe(command, scratch)
        # Kept only if nothing changed while it ran (an install into the environment, say).
        if key is not None and probe_cache.key(command.python, command.env()) == key:
            probe_cache.put(root, key, env.to_json())
    # Stamped here, fresh or cached: the cache outlives an upgrade of mgradcheck.
    return replace(env, interpreter=command.python, mgradcheck=__version__)


Snapshots = Callable[[Report], None]


class Reporter:
    """The report of a run as its results come: partial ones handed to ``snapshots`` (before
    the first result and as each one finishes), and the final one.

    A partial report is marked ``interrupted`` with ``meta.partial``: read as the final
    word only if the run dies, and then that is what it was.
    """

    def __init__(
        self,
        planned: int,
        env: Environment,
        meta: Mapping[str, Any] | None = None,
        snapshots: Snapshots | None = None,
    ) -> None:
        self.planned = planned
        self.env = env
        self.started = now()
        self.meta = {"argv": sys.argv[1:], "cwd": os.getcwd(), **(meta or {})}
        self.snapshots = snapshots
        self.finished: list[EntryResult] = []
        if snapshots is not None:
            snapshots(self._report([], True, partial={"finished": 0, "planned": planned}))

    def _report(self, results: Sequence[EntryResult], interrupted: bool, **extra: Any) -> Report:
        return Report(
            results=tuple(results),
            environments=(self.env,),
            started=self.started,
            finished=now(),
            interrupted=interrupted,
            mgradcheck=__version__,
            meta={**self.meta, **extra},
        )

    def add(self, result: EntryResult) -> None:
        """One more result finished (the runner's ``on_result``)."""
        self.finished.append(result)
        if self.snapshots is not None:
            partial = {"finished": len(self.finished), "planned": self.planned}
            self.snapshots(self._report(self.finished, True, partial=partial))

    def final(self, results: Sequence[EntryResult], interrupted: Interrupted | None) -> Report:
        """The report of every result, those an interrupt kept from running marked not run."""
        return self._report(results, interrupted is not None)


def execute(
    entries: Sequence[Entry],
    command: ChildCommand,
    env: Environment,
    options: RunOptions,
    progress: Progress,
    meta: Mapping[str, Any] | None = None,
    snapshots: Snapshots | None = None,
    on_start: Callable[[str, LiveChild], None] | None = None,
) -> tuple[Report, Interrupted | None]:
    """Run the entries; return the report (complete or partial: see :class:`Reporter`) and any
    interrupt. ``on_start`` is told of each child as it starts (``run --verbose``)."""
    reporter = Reporter(len(entries), env, meta, snapshots)
    runner = Runner(command, env, options, progress, on_result=reporter.add, on_start=on_start)
    outcome = runner.run(entries)
    return reporter.final(outcome.results, outcome.interrupted), outcome.interrupted


def exit_code(report: Report, interrupted: Interrupted | None = None) -> int:
    if interrupted is not None:
        return interrupted.exit_code
    return for_verdicts(r.standing for r in report.results)


__all__ = [
    "ExitCode",
    "Reporter",
    "Snapshots",
    "execute",
    "exit_code",
    "load_corpus",
    "load_selected",
    "prepare",
    "select",
]
