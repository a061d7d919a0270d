"""The stages of ``mgradcheck run``, each importable and testable without Click.

load -> select -> prepare (probe the interpreter) -> execute -> exit code. Writing
the reports is the reports layer's (:func:`mgradcheck.reports.stage.run_and_report`,
the stage ``run`` and ``tests`` share); it receives the partial reports of a running
run through ``execute``'s ``snapshots`` callback.
"""

from __future__ import annotations

import os
import sys
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
from mgradcheck.run.child_process import ChildCommand, LiveChild
from mgradcheck.run.display import Progress
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.run.runner import Runner, RunOptions, probe
from mgradcheck.wording import count


def display_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it."""
    return displayer()(path)


def displayer() -> Callable[[Path], str]:
    """:func:`display_path` for the files of one load: the working directory and each file's
    directory are resolved once, not once a file (14 ms of a run over 600 files)."""
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


def _shown(directory: Path) -> str:
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
        say(f"corpus: {_shown(inputs[0])} ({count(len(every), 'entry')})")
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
            return f" ({_shown(directory)} holds it but was not read: --corpus {_shown(directory)})"
    if local is not None and local in unread:
        return f" ({_shown(local)}, this project's corpus, was not read: --corpus {_shown(local)})"
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
    from mgradcheck.paths import cache_root, kernel_dir
    from mgradcheck.run.mlx_build import identity

    base = ChildCommand(python, extra_env)
    env = _probe(base)
    if env.mlx is None:  # the interpreter runs, its environment lacks MLX: that is where it goes
        import shlex

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
    import zlib

    return f"unidentified-{zlib.crc32(os.path.abspath(python).encode()):08x}"


def _probe(command: ChildCommand) -> Environment:
    """What the interpreter runs: from the probe cache when its files say nothing changed."""
    from mgradcheck.paths import cache_root, run_scratch
    from mgradcheck.run import probe_cache

    root = cache_root() / "probes"
    key = probe_cache.key(command.python, command.env())
    answer = probe_cache.get(root, key) if key is not None else None
    if answer is not None:
        return Environment.from_json(
            {**answer, "interpreter": command.python, "mgradcheck": __version__}
        )
    with run_scratch() as scratch:  # private: other runs may be probing other interpreters
        env = probe(command, scratch)
    # Kept only if nothing changed while it ran (an install into the environment, say).
    if key is not None and probe_cache.key(command.python, command.env()) == key:
        probe_cache.put(root, key, env.to_json())
    return env


Snapshots = Callable[[Report], None]
# Runs something, telling ``on_result`` of each result as it finishes; returns them all
# (those that did not finish marked not run) and the interrupt that stopped it, if any.
Produce = Callable[
    [Callable[[EntryResult], None]], tuple[Sequence[EntryResult], Interrupted | None]
]


def reported(
    planned: int,
    env: Environment,
    produce: Produce,
    meta: Mapping[str, Any] | None = None,
    snapshots: Snapshots | None = None,
) -> tuple[Report, Interrupted | None]:
    """The report of ``produce``'s results (complete or partial), and any interrupt.

    With ``snapshots``, a partial report is handed over before the first
    result and each time one finishes, marked ``interrupted`` with
    ``meta.partial``: read as the final word only if the run dies, and then
    that is what it was. The caller writes the final report.
    """
    started = now()
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

    finished: list[EntryResult] = []

    def on_result(result: EntryResult) -> None:
        finished.append(result)
        if snapshots is not None:
            partial = {"finished": len(finished), "planned": planned}
            snapshots(report(finished, True, partial=partial))

    if snapshots is not None:
        snapshots(report([], True, partial={"finished": 0, "planned": planned}))
    results, interrupted = produce(on_result)
    return report(results, interrupted is not None), interrupted


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
    """Run the entries; return the report (complete or partial) and any interrupt (see
    :func:`reported`). ``on_start`` is told of each child as it starts (``run --verbose``)."""
    memory = replace(command, memory_limit=options.memory_limit)

    def produce(
        on_result: Callable[[EntryResult], None],
    ) -> tuple[Sequence[EntryResult], Interrupted | None]:
        runner = Runner(memory, env, options, progress, on_result=on_result, on_start=on_start)
        outcome = runner.run(entries)
        return outcome.results, outcome.interrupted

    return reported(len(entries), env, produce, meta, snapshots)


def exit_code(report: Report, interrupted: Interrupted | None = None) -> int:
    if interrupted is not None:
        return interrupted.exit_code
    return for_verdicts(r.standing for r in report.results)


__all__ = ["ExitCode", "execute", "exit_code", "load_corpus", "load_selected", "prepare", "select"]
