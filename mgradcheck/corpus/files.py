"""Where corpus files are: the files under the directories given, a project's own corpus,
and the bundled corpus."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mgradcheck.corpus.document import SourceError

CORPUS_SUFFIXES = (".yaml", ".yml")


def corpus_files(paths: Sequence[Path]) -> list[Path]:
    """Expand directories into their ``*.yaml``/``*.yml`` files, sorted; keep files as given.

    A directory is walked as ``Path.rglob`` walks it, into subdirectories but not through
    links to them, and its files come sorted by their path's parts.
    """
    return [Path(name) for name in corpus_names(paths)]


def corpus_names(paths: Sequence[Path]) -> list[str]:
    """:func:`corpus_files` as the strings a loader of many files wants (a ``Path`` made and
    turned back into a string costs more than the ``stat`` that checks the file)."""
    files: list[str] = []
    for path in paths:
        if path.is_dir():
            files.extend(_walk(os.fspath(path)))
        else:
            files.append(os.fspath(path))
    return files


def _walk(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as found:
            items = sorted(found, key=lambda item: item.name)
    except OSError:
        return []
    files: list[str] = []
    for item in items:
        name = item.name
        try:
            if item.is_dir():
                if not item.is_symlink():
                    files.extend(_walk(os.path.join(folder, name)))
                continue
            dot = name.rfind(".")  # Path.suffix: the last dot, neither first nor last
            if 0 < dot < len(name) - 1 and name[dot:] in CORPUS_SUFFIXES and item.is_file():
                files.append(os.path.join(folder, name))
        except OSError:
            continue
    return files


def held_ids(directory: Path) -> dict[str, Path]:
    """The id of each corpus file under ``directory`` that names one, with the first file
    holding it: what an entry written there must not take. A file that does not parse
    holds none (it fails validation whatever is written beside it)."""
    from mgradcheck.corpus import yamlsource  # PyYAML: only where entries are written

    held: dict[str, Path] = {}
    if not directory.is_dir():
        return held
    for path in corpus_files([directory]):
        try:
            data = yamlsource.read(path).data
        except SourceError:
            continue
        entry_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(entry_id, str):
            held.setdefault(entry_id, path)
    return held


def bundled_corpus() -> Path:
    """The corpus shipped with mgradcheck: the repo's ``corpus/`` or the wheel's copy."""
    here = Path(__file__).resolve().parent.parent  # the package
    for candidate in (here / "bundled_corpus", here.parent / "corpus"):
        if candidate.is_dir():
            return candidate
    return here / "bundled_corpus"


def local_corpus(start: Path) -> Path | None:
    """A project's own corpus, found as pytest finds a project's tests: ``corpus/`` in ``start``
    or the nearest parent that has one, holding at least one corpus file.

    The search stops at a repository's root (a directory with ``.git``) or the filesystem's,
    so a checkout never reads the corpus of a project it happens to sit inside. An empty
    ``corpus/`` (or one of other files, as a text corpus) is passed over.
    """
    for directory in (start, *start.parents):
        candidate = directory / "corpus"
        if candidate.is_dir() and _walk(os.fspath(candidate)):
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def default_corpus(start: Path) -> Path:
    """The corpus read when none is named: :func:`local_corpus`, else the bundled one."""
    return local_corpus(start) or bundled_corpus()


def is_bundled(path: Path) -> bool:
    """Whether ``path`` is the bundled corpus (in mgradcheck's own repository, its ``corpus/``)."""
    return path.resolve() == bundled_corpus().resolve()


__all__ = [
    "CORPUS_SUFFIXES",
    "bundled_corpus",
    "corpus_files",
    "corpus_names",
    "default_corpus",
    "held_ids",
    "is_bundled",
    "local_corpus",
]
