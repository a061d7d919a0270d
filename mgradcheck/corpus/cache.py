"""Keep what corpus files parse to, so that a command whose files have not changed parses no YAML.

Parsing is most of what loading a file costs (and importing PyYAML a tenth of a short
run's start), while corpus files rarely change between two runs. ``<cache root>/corpus/``
holds one JSON file per directory of corpus files (named by a CRC-32 of its path), which
keeps, for each file there that loaded without a problem: its identity when it was read
(size, ``mtime_ns``, ``ctime_ns``, inode, and the mode and owner that say who may read it),
when it was read, a CRC-32 of its bytes, and what it parsed to (the values and the line of
each). A record is used only by the same mgradcheck version and cache format, for the same
directory, while the file's identity is unchanged. A corrupt, foreign or unreadable cache
file is ignored (and replaced), a write that fails is ignored: it is only a cache.

The mtime alone cannot be trusted: ``cp -p``, ``rsync --inplace -t`` and ``touch -d`` put
back an edited file's old mtime, and an edit may keep its size. No user tool can set the
ctime, and every write moves it, so it is in the identity too.

A file system's clock may count in coarse steps (up to two seconds): a file written again
within one step keeps its mtime and ctime. So, as git does with "racily clean" entries, a
record taken less than :data:`SETTLE_NS` after the later of the two is used only once the
file's bytes are read again and their CRC-32 matches.

What comes from here is checked exactly as a freshly parsed file is
(:func:`mgradcheck.corpus.loader.check_document`): the same problems, warnings and entry.
A file that fails to load is never kept, so its errors are found anew each time.

A record also says what checking the file found: its id and the id's line, whether
warnings were looked for and found, and which checker found it clean (the loader's
fingerprint of its own code). A command that wants only some entries
(``run ID...``) takes the ids of the others from their records, unchecked, while the
file and the checker are those of the record (:meth:`DocumentCache.checked`). What a
file parsed to is kept as JSON text within the record, decoded only when it is used.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from mgradcheck import __version__
from mgradcheck.corpus.document import Document, Key, source_bytes

FORMAT = 3
SETTLE_NS = 2_000_000_000


class _Directory:
    """The records of one directory's files, as read from its cache file."""

    def __init__(self, file: Path, records: dict[str, dict[str, Any]]) -> None:
        self.file = file
        self.records = records
        self.seen: set[str] = set()  # the files read in this load
        self.changed = False


class DocumentCache:
    """What the files one load reads parsed to: :meth:`read` each, :meth:`keep` those that
    loaded, then :meth:`save`."""

    def __init__(self, root: Path, checker: str | None = None) -> None:
        self.root = root
        self.checker = checker  # what checks the files: records it found clean may be trusted
        self._directories: dict[str, _Directory] = {}
        self._fresh: dict[str, dict[str, Any]] = {}  # parsed now, recorded once they load
        self._absolute: dict[str, str] = {}  # each folder named, made absolute

    def checked(self, path: str, warnings: bool) -> tuple[str, int] | None:
        """The id and its line of an unchanged file this cache's checker found clean (and,
        when ``warnings``, without warnings); None when the file must be read and checked."""
        if self.checker is None:
            return None
        folder, base = os.path.split(path)
        if folder not in self._absolute:  # a directory's files come one after another
            self._absolute[folder] = os.path.abspath(folder or os.curdir)
        directory = self._directory(self._absolute[folder])
        record = directory.records.get(base)
        if record is None or record.get("checked") != self.checker:
            return None
        if warnings and record.get("warned") is not False:
            return None
        entry_id, line = record.get("id"), record.get("line")
        if not isinstance(entry_id, str) or type(line) is not int:
            return None
        try:
            info = os.stat(path)
        except OSError:
            return None
        identity = _identity(info)
        if record.get("identity") != identity or not _settled(record.get("read"), identity):
            return None
        directory.seen.add(base)
        return entry_id, line

    def read(self, path: Path, name: str) -> Document:
        """The file's document, from the cache when it is unchanged; else parsed (and
        :class:`~mgradcheck.corpus.document.SourceError` raised as a parse would)."""
        read_at = time.time_ns()  # before the file is looked at: see SETTLE_NS
        full = os.path.abspath(path)
        folder, base = os.path.split(full)
        directory = self._directory(folder)
        directory.seen.add(base)
        try:
            info = os.stat(full)
            identity: list[int] | None = _identity(info)
        except OSError:
            identity = None
        record = directory.records.get(base)
        raw = None
        if record is not None and identity is not None and record.get("identity") == identity:
            settled = _settled(record.get("read"), identity)
            if not settled:
                raw = source_bytes(path, name)
            if settled or zlib.crc32(raw or b"") == record.get("crc"):
                document = _decode(record, name)
                if document is not None:
                    if not settled and _settled(read_at, identity):
                        record["read"] = read_at  # checked again now: settled from here on
                        directory.changed = True
                    return document
        if record is not None:  # changed, or not to be trusted: replaced once it loads
            del directory.records[base]
            directory.changed = True
        if raw is None:
            raw = source_bytes(path, name)
        from mgradcheck.corpus import yamlsource  # only now: a run of cached files loads no PyYAML

        document = yamlsource.parse_bytes(raw, name)
        if identity is not None and not document.problems:
            self._fresh[full] = {
                "identity": identity, "read": read_at, "crc": zlib.crc32(raw), **_encode(document)
            }  # fmt: skip
        return document

    def keep(self, path: Path, entry_id: str, line: int, warned: bool | None) -> None:
        """Record the file :meth:`read` gave: it loaded without a problem, as the entry
        ``entry_id`` at ``line``; ``warned`` says if it had warnings (None: not looked for)."""
        full = os.path.abspath(path)
        folder, base = os.path.split(full)
        directory = self._directory(folder)
        record = self._fresh.pop(full, None) or directory.records.get(base)
        if record is None:
            return
        marks = {"id": entry_id, "line": line, "checked": self.checker, "warned": warned}
        if directory.records.get(base) is not record or any(
            record.get(key) != value for key, value in marks.items()
        ):
            record.update(marks)
            directory.records[base] = record
            directory.changed = True

    def save(self) -> None:
        """Write the cache files of the directories whose records changed."""
        for folder, directory in self._directories.items():
            if not directory.changed:
                continue
            records = {
                base: record
                for base, record in directory.records.items()
                if base in directory.seen or os.path.exists(os.path.join(folder, base))
            }
            _write(directory.file, {"format": FORMAT, "mgradcheck": __version__,
                                    "directory": folder, "files": records})  # fmt: skip

    def _directory(self, folder: str) -> _Directory:
        directory = self._directories.get(folder)
        if directory is None:
            name = f"{zlib.crc32(os.fsencode(folder)):08x}.json"
            directory = _Directory(self.root / name, _records(self.root / name, folder))
            self._directories[folder] = directory
        return directory


def _identity(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode,
            info.st_uid, info.st_gid]  # fmt: skip


def _settled(read_at: Any, identity: list[int]) -> bool:
    # The later of mtime and ctime: a restored mtime is old, the edit that kept it is not.
    return isinstance(read_at, int) and read_at - max(identity[1], identity[2]) >= SETTLE_NS


def _records(file: Path, folder: str) -> dict[str, dict[str, Any]]:
    """The records a cache file holds for ``folder``: none if it is missing, corrupt or another's."""
    try:
        stored = json.loads(file.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if (
        not isinstance(stored, dict)
        or stored.get("format") != FORMAT
        or stored.get("mgradcheck") != __version__
        or stored.get("directory") != folder
        or not isinstance(stored.get("files"), dict)
    ):
        return {}
    return {k: v for k, v in stored["files"].items() if isinstance(v, dict)}


def _encode(document: Document) -> dict[str, Any]:
    held = {
        "data": document.data,
        "lines": [[list(key), line] for key, line in document.lines.items()],
        "block": [list(key) for key in document.block_scalars],
    }
    return {"document": json.dumps(held, separators=(",", ":"))}


def _decode(record: dict[str, Any], name: str) -> Document | None:
    """The document a record holds, named ``name``; None if the record is malformed."""
    try:
        held = json.loads(record["document"])
        if not isinstance(held["data"], dict):  # every file kept held a mapping
            return None
        lines: dict[Key, int] = {tuple(key): line for key, line in held["lines"]}
        block = frozenset(tuple(key) for key in held["block"])
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
    if not all(type(line) is int for line in lines.values()):  # an int, not a bool
        return None
    return Document(name, held["data"], lines, block)


def _write(file: Path, content: dict[str, Any]) -> None:
    from mgradcheck.atomic import write_text
    from mgradcheck.errors import WriteError

    with contextlib.suppress(OSError, WriteError, ValueError):
        text = json.dumps(content, separators=(",", ":"))
        file.parent.mkdir(parents=True, exist_ok=True)
        write_text(file, text)


__all__ = ["FORMAT", "SETTLE_NS", "DocumentCache"]
