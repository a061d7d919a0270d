"""The report files one command writes, checked before anything runs and written atomically."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.atomic import STDOUT, check_writable, written_through
from mgradcheck.corpus.files import CORPUS_SUFFIXES
from mgradcheck.errors import UsageError, WriteError
from mgradcheck.reports.formats import FORMATS, OTHER_FILES, Output, step_summary
from mgradcheck.run.results import Report


@dataclass(frozen=True)
class Outputs:
    """Report files to write after a run; all checked for writability before it starts."""

    chosen: tuple[Output, ...] = ()  # the reports asked for, in FORMATS' order
    extra: tuple[Path, ...] = ()  # files the command writes itself, checked alike

    def paths(self) -> list[Path]:
        return [p for output in self.chosen for p in output.paths()] + list(self.extra)

    def get(self, name: str) -> Output | None:
        """The report of the format named ``name``, if asked for."""
        return next((o for o in self.chosen if o.format.name == name), None)

    @property
    def to_stdout(self) -> bool:
        """Whether one report goes to standard output (``-``): then the table goes to stderr."""
        return STDOUT in self.paths()

    def files(self) -> Outputs:
        """These outputs less those written through (standard output, a device, a FIFO): what
        may be rewritten as a run goes. A reader of a pipe would take each rewrite as a report."""
        return Outputs(
            tuple(o for o in self.chosen if not written_through(o.path)),
            tuple(p for p in self.extra if not written_through(p)),
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


# How a file of ours begins (compiled by re on first use: only a file already there is sniffed).
_OURS = r"\s*(?:" + "|".join([*(f.begins for f in FORMATS), *OTHER_FILES]) + ")"
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


def report_outputs(**given: Path | None) -> Outputs:
    """The reports of a run's options, by format name (``json=Path("r.json")``).

    A format with a default file (GitHub's step summary for ``--summary``, in
    Actions) writes it when its option is not given, after what earlier steps
    wrote there. Any file may be ``-``, standard output.
    """
    chosen = []
    for form in FORMATS:
        path, prefix = given.get(form.name), ""
        if path is None and form.default is not None and (path := form.default()) is not None:
            prefix = _held(path)
        if path is not None:
            chosen.append(Output(form, path, prefix))
    return Outputs(tuple(chosen))


def _held(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def write(report: Report, outputs: Outputs) -> None:
    """Write the report to every file asked for, each atomically."""
    for output in outputs.chosen:
        output.format.write(report, output)


__all__ = [
    "Output",
    "Outputs",
    "WriteError",
    "check_directory",
    "check_writable_paths",
    "refuse_foreign",
    "refuse_input",
    "report_outputs",
    "write",
]
