"""Collect the tests of a suite by reading its source: nothing is imported or run.

unittest's loader and pytest collect by importing each module; here the module
is only parsed, so the parent never imports MLX (or anything the tests import)
and collection costs no interpreter. What is collected is what unittest's
loader and pytest find: ``test*`` methods of classes that derive from
``unittest.TestCase`` (through base classes in the same file or in modules
beside it, like MLX's ``mlx_tests.MLXTestCase``), with those inherited from
base classes in the file; ``test*`` methods of other ``Test*`` classes and
module-level ``test*`` functions (pytest's style). A name defined twice counts
once, as its last definition: that is the one that exists when the module runs.

A test's id is pytest's node id relative to the directory given (for a file
given, its root): ``test_autograd.py::TestAutograd::test_jvp``. Its root is the
first directory up from the file without an ``__init__.py``: the directory
unittest and pytest put first on ``sys.path``, so that ``import mlx_tests``
works beside the tests.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.errors import UsageError

UNITTEST_BASES = frozenset(
    {"TestCase", "IsolatedAsyncioTestCase", "unittest.TestCase", "unittest.IsolatedAsyncioTestCase"}
)
FILE_PATTERNS = ("test*.py", "*_test.py")


@dataclass(frozen=True)
class SuiteTest:
    """One test of a suite: where it lives, how the child runs it, and a hash of its source."""

    id: str  # "test_autograd.py::TestAutograd::test_jvp"
    root: Path  # first on sys.path in the child
    file: Path
    module: str  # dotted, relative to root
    cls: str | None
    name: str
    line: int
    kind: str  # "unittest" or "pytest"
    source_hash: str

    @property
    def content_hash(self) -> str:
        """What the results store keys this test's runs by (with release, backend and platform)."""
        return self.source_hash

    @property
    def title(self) -> str:
        return f"{self.cls}.{self.name}" if self.cls else self.name

    @property
    def node_id(self) -> str:
        """pytest's node id with the root as its rootdir: what the child's pytest calls it."""
        relative = self.file.relative_to(self.root).as_posix()
        return "::".join([relative, *([self.cls] if self.cls else []), self.name])

    def child_spec(self) -> dict[str, object]:
        return {
            "id": self.node_id,
            "module": self.module,
            "cls": self.cls,
            "name": self.name,
            "kind": self.kind,
            "node": "::".join([str(self.file), *([self.cls] if self.cls else []), self.name]),
        }


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


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

    @classmethod
    def parse(cls, path: Path) -> Source:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"
            ) from None
        try:
            tree = ast.parse(text, str(path))
        except SyntaxError as exc:
            raise UsageError(f"{path}:{exc.lineno or 0}: cannot parse: {exc.msg}") from None
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
        return found


class Collector:
    """Parses each file once; answers which classes are TestCases, across modules."""

    def __init__(self) -> None:
        self._sources: dict[Path, Source] = {}

    def source(self, path: Path) -> Source:
        path = path.resolve()
        if path not in self._sources:
            self._sources[path] = Source.parse(path)
        return self._sources[path]

    def is_testcase(
        self, source: Source, name: str, seen: frozenset[tuple[Path, str]] = frozenset()
    ) -> bool:
        if name in UNITTEST_BASES:
            return True
        if (source.path, name) in seen:
            return False
        seen = seen | {(source.path, name)}
        if "." in name:
            head, _, attr = name.rpartition(".")
            path = source.sibling(head)
            return path is not None and self.is_testcase(self.source(path), attr, seen)
        node = source.classes.get(name)
        if node is not None:
            return any(
                self.is_testcase(source, base, seen)
                for base in (_dotted(b) for b in node.bases)
                if base is not None
            )
        for stmt in source.tree.body:  # from helpers import BaseCase
            if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
                for alias in stmt.names:
                    if (alias.asname or alias.name) != name:
                        continue
                    if stmt.module == "unittest":
                        return alias.name in UNITTEST_BASES
                    path = source.sibling(stmt.module)
                    return path is not None and self.is_testcase(
                        self.source(path), alias.name, seen
                    )
        return False

    def _methods(
        self, source: Source, node: ast.ClassDef
    ) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for base in node.bases:
            name = _dotted(base)
            if name in source.classes and name != node.name:
                found.update(self._methods(source, source.classes[name]))
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith(
                "test"
            ):
                found.pop(item.name, None)  # a redefinition replaces, and moves to the end
                found[item.name] = item
        return found

    def collect_file(self, path: Path, base: Path | None = None) -> list[SuiteTest]:
        """The tests of one file, their ids relative to ``base`` (default: the file's root)."""
        source = self.source(path)
        root, module = import_root(source.path)
        try:
            relative = source.path.relative_to((base or root).resolve()).as_posix()
        except ValueError:
            relative = source.path.relative_to(root).as_posix()
        found: dict[tuple[str | None, str], tuple[ast.stmt, str]] = {}
        for stmt in source.tree.body:
            if isinstance(stmt, ast.ClassDef):
                if self.is_testcase(source, stmt.name):
                    kind = "unittest"
                elif stmt.name.startswith("Test") and not _has_init(stmt):
                    kind = "pytest"
                else:
                    continue
                for name, method in self._methods(source, stmt).items():
                    found.pop((stmt.name, name), None)
                    found[(stmt.name, name)] = (method, kind)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith(
                "test"
            ):
                found.pop((None, stmt.name), None)
                found[(None, stmt.name)] = (stmt, "pytest")
        tests = []
        nodes = [node for node, _ in found.values()]
        for (cls, name), (node, kind) in found.items():
            test_id = "::".join([relative, *([cls] if cls else []), name])
            tests.append(
                SuiteTest(
                    id=test_id,
                    root=root,
                    file=source.path,
                    module=module,
                    cls=cls,
                    name=name,
                    line=getattr(node, "lineno", 0),
                    kind=kind,
                    source_hash=self._hash(source, f"{module}::{cls}::{name}", node, nodes, kind),
                )
            )
        return sorted(tests, key=lambda t: t.line)

    def _hash(
        self, source: Source, name: str, node: ast.stmt, tests: Sequence[ast.stmt], kind: str
    ) -> str:
        """The module without the other tests, and every module beside it that it imports."""
        lines = source.text.splitlines()
        for other in tests:
            if other is node:
                continue
            start = first_line(other)
            end = other.end_lineno or other.lineno
            lines[start - 1 : end] = [""] * (end - start + 1)
        digest = hashlib.sha256(f"{name}\n{kind}\n".encode())
        digest.update("\n".join(lines).encode())
        for path in self._closure(source, kind):
            digest.update(f"\n--- {path.name}\n".encode())
            digest.update(self.source(path).text.encode())
        return digest.hexdigest()[:16]

    def _closure(self, source: Source, kind: str) -> list[Path]:
        """Sibling modules imported, transitively, and (for pytest) the conftest.py files above."""
        seen: dict[Path, None] = {}
        todo = list(source.imported_siblings())
        while todo:
            path = todo.pop(0).resolve()
            if path in seen or path == source.path:
                continue
            seen[path] = None
            todo.extend(self.source(path).imported_siblings())
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
        return sorted(seen)


def first_line(node: ast.stmt) -> int:
    """Where a statement starts: a decorated function's or class's first decorator (its
    ``lineno`` is the ``def`` line)."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _has_init(node: ast.ClassDef) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body)


def _files(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    found: set[Path] = set()
    for pattern in FILE_PATTERNS:
        found.update(path.rglob(pattern))
    for file in sorted(found):
        relative = file.relative_to(path).parts
        if not any(p.startswith(".") or p == "__pycache__" for p in relative) and file.is_file():
            yield file


def collect(paths: Iterable[Path | str]) -> list[SuiteTest]:
    """Every test in these files and directories (a ``FILE::Class::test`` path names some)."""
    collector = Collector()
    tests: dict[str, SuiteTest] = {}
    for given in paths:
        text = str(given)
        path_text, _, selector = text.partition("::")
        path = Path(path_text)
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        if selector and not path.is_file():
            raise UsageError(f"{text}: '::' selects tests of a file, and {path} is a directory")
        for file in _files(path):
            for test in collector.collect_file(file, path if path.is_dir() else None):
                if not selector or _selected(test, selector):
                    tests.setdefault(test.id, test)
        if selector and not any(
            _selected(t, selector) for t in tests.values() if t.file == path.resolve()
        ):
            raise UsageError(f"{text}: no such test in {path}")
    return list(tests.values())


def _selected(test: SuiteTest, selector: str) -> bool:
    own = test.id.split("::")[1:]
    wanted = selector.split("::")
    return own[: len(wanted)] == wanted


def select(tests: Sequence[SuiteTest], keyword: str | None) -> list[SuiteTest]:
    """The tests ``-k`` keeps (all without it); UsageError when none is left."""
    if not tests:
        raise UsageError("no tests collected (files named test*.py or *_test.py)")
    if keyword is None:
        return list(tests)
    from mgradcheck.suites.keywords import names, parse

    expression = parse(keyword)
    chosen = [t for t in tests if expression.matches(names(t.id))]
    if not chosen:
        raise UsageError(f"-k {keyword!r} matches none of the {len(tests)} tests collected")
    return chosen
