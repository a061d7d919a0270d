"""A suite's source as read and hashed: parsed modules, the imports beside them, test hashes.

Files are read as the import system reads them (a BOM, a coding cookie) and parsed,
never imported. A test's hash covers its own lines, its module without any test, and
the sibling modules (and, for pytest, the conftest.py files) it can see, so that an
edit anywhere it could be affected by changes it, and adding another test does not.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from mgradcheck.errors import UsageError
from mgradcheck.pysource import decoded
from mgradcheck.run.display import printable


def shown(text: object) -> str:
    """A path or a name as one line a terminal shows and never obeys: control characters,
    newlines and tabs included, written as escapes."""
    return printable(str(text)).replace("\n", "\\x0a").replace("\t", "\\x09")


def import_root(path: Path) -> tuple[Path, str]:
    """The directory unittest and pytest put on sys.path for ``path``, and its module name there."""
    parts = [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    return directory, ".".join(parts)


class Source:
    """One parsed module: its classes, and the modules beside it that it imports."""

    def __init__(self, path: Path, text: str, tree: ast.Module) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self._siblings: list[Path] | None = None

    @classmethod
    def parse(cls, path: Path) -> Source:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"{shown(path)}: cannot read: {exc.strerror or exc}") from None
        try:
            text = decoded(data)  # as the import system reads it
        except ValueError as exc:
            raise UsageError(f"{shown(path)}: cannot read: {shown(str(exc))}") from None
        try:
            tree = ast.parse(text, str(path))
        except SyntaxError as exc:
            raise UsageError(
                f"{shown(path)}:{exc.lineno or 0}: cannot parse: {shown(exc.msg)}"
            ) from None
        return cls(path, text, tree)

    def sibling(self, dotted: str) -> Path | None:
        """The module file ``import dotted`` finds beside this one (its root, or its package)."""
        root, _ = import_root(self.path)
        for base in (root, self.path.parent):
            stem = base / dotted.replace(".", "/")
            for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
                if candidate.is_file():
                    return candidate
        return None

    def imported_siblings(self) -> list[Path]:
        if self._siblings is not None:
            return self._siblings
        found = []
        for node in ast.walk(self.tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                names = [base] if base else []
                names += [f"{base}.{a.name}" if base else a.name for a in node.names]
            for name in names:
                path = self.sibling(name)
                if path is not None and path != self.path:
                    found.append(path)
        self._siblings = found  # asked once per test of the module: walked once
        return found


def closure_digest(source: Source, kind: str, parsed: Callable[[Path], Source]) -> bytes:
    """The digest of the sibling modules imported, transitively, and (for pytest) of the
    conftest.py files above; ``parsed`` gives each module's Source (the collector's cache)."""
    seen: dict[Path, None] = {}
    todo = list(source.imported_siblings())
    while todo:
        path = todo.pop(0).resolve()
        if path in seen or path == source.path:
            continue
        seen[path] = None
        todo.extend(parsed(path).imported_siblings())
    if kind == "pytest":
        root, _ = import_root(source.path)
        directory = source.path.parent
        while True:
            conftest = directory / "conftest.py"
            if conftest.is_file():
                seen[conftest.resolve()] = None
            if directory == root or directory.parent == directory:
                break
            directory = directory.parent
    digest = hashlib.sha256()
    for path in sorted(seen):
        digest.update(f"\n--- {path.name}\n".encode())
        digest.update(parsed(path).text.encode())
    return digest.digest()


class Hashes:
    """A test's hash: its own source, its module without any test, and the modules it imports.

    The module without its tests is hashed once, and each test's own lines once, so a
    file of N tests costs O(N), not N copies of the whole file (the module with only
    this test in it, hashed per test, made collection quadratic: minutes for 4,000 tests).
    """

    def __init__(self, source: Source, nodes: Sequence[ast.stmt]) -> None:
        self.lines = source.text.splitlines()
        spans = sorted({(first_line(n), n.end_lineno or n.lineno) for n in nodes})
        rest = hashlib.sha256()
        kept = 1  # the first line not yet hashed
        for start, end in [*spans, (len(self.lines) + 1, len(self.lines))]:
            # Each line kept whole, with its newline: adding or growing another test changes
            # nothing here, editing a line outside the tests changes every test's hash.
            rest.update("".join(f"{line}\n" for line in self.lines[kept - 1 : start - 1]).encode())
            kept = max(kept, end + 1)
        self.module = rest.digest()

    def of(self, name: str, node: ast.stmt, kind: str, closure: bytes) -> str:
        digest = hashlib.sha256(f"{name}\n{kind}\n".encode())
        digest.update(self.module)
        own = self.lines[first_line(node) - 1 : node.end_lineno or node.lineno]
        digest.update("\n".join(own).encode())
        digest.update(closure)
        return digest.hexdigest()[:16]


def first_line(node: ast.stmt) -> int:
    """Where a statement starts: a decorated function's or class's first decorator (its
    ``lineno`` is the ``def`` line)."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])
