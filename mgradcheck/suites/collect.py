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
What the source cannot say is how many parameter sets a pytest-style test has:
``expand`` (:mod:`mgradcheck.suites.pytest_items`) asks pytest, and each set
becomes a test of its own (``test_x.py::test_f[float32]``).

A test's id is pytest's node id relative to the directory given (for a file
given, its root; for several paths, the directory they all lie in, so that
``a/test_x.py`` and ``b/test_x.py`` keep their ids apart):
``test_autograd.py::TestAutograd::test_jvp``. Its root is the first directory
up from the file without an ``__init__.py``: the directory unittest and pytest
put first on ``sys.path``, so that ``import mlx_tests`` works beside the tests.
Files are read as the import system reads them (a BOM, a coding cookie); a file
whose path cannot be a node id (``::`` in it, or ``[`` for pytest's tests) is
refused, naming it.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mgradcheck.errors import UsageError
from mgradcheck.suites import keywords
from mgradcheck.suites.source import Hashes, Source, closure_digest, import_root, shown

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
    params: str = ""  # one parameter set of a parametrised test, as pytest names it: "[float32]"

    @property
    def content_hash(self) -> str:
        """What the results store keys this test's runs by (with release, backend and platform)."""
        return self.source_hash

    @property
    def title(self) -> str:
        return (f"{self.cls}.{self.name}" if self.cls else self.name) + self.params

    @property
    def node_id(self) -> str:
        """pytest's node id with the root as its rootdir: what the child's pytest calls it."""
        relative = self.file.relative_to(self.root).as_posix()
        return "::".join([relative, *([self.cls] if self.cls else []), self.name]) + self.params

    def with_params(self, params: str) -> SuiteTest:
        """This test for one parameter set that pytest collected (``[float32-axis0]``): a test
        of its own, with its own id and its own runs in the results store."""
        digest = hashlib.sha256(f"{self.source_hash}\n{params}".encode()).hexdigest()[:16]
        return replace(self, id=self.id + params, params=params, source_hash=digest)

    def child_spec(self) -> dict[str, object]:
        return {
            "id": self.node_id,
            "module": self.module,
            "cls": self.cls,
            "name": self.name,
            "kind": self.kind,
        }


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class Collector:
    """Parses each file once; answers which classes are TestCases, across modules."""

    def __init__(self) -> None:
        self._sources: dict[Path, Source] = {}
        self._closures: dict[tuple[Path, str], bytes] = {}

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
        if found:
            _check_name(source.path, relative, {kind for _, kind in found.values()}, root)
        hashes = Hashes(source, [node for node, _ in found.values()])
        tests = []
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
                    source_hash=hashes.of(
                        f"{module}::{cls}::{name}", node, kind, self._closure(source, kind)
                    ),
                )
            )
        return sorted(tests, key=lambda t: t.line)

    def _closure(self, source: Source, kind: str) -> bytes:
        """The digest of the sibling modules imported, transitively, and (for pytest) of the
        conftest.py files above: once per module and kind, not once per test."""
        key = (source.path, kind)
        if key not in self._closures:
            self._closures[key] = closure_digest(source, kind, self.source)
        return self._closures[key]


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


def _check_name(path: Path, relative: str, kinds: set[str], root: Path) -> None:
    """Refuse, naming the file, a path that cannot be a test id: ``::`` separates an id's
    parts; pytest reads ``[`` in an argument as the start of a test's parameters."""
    node = path.relative_to(root).as_posix()
    if "::" in relative or "::" in node:
        raise UsageError(
            f"{shown(path)}: '::' in a test file's path cannot be told apart from the '::' "
            "between a test id's parts; rename it"
        )
    if "pytest" in kinds and "[" in node:
        raise UsageError(
            f"{shown(path)}: pytest reads '[' in a test's path as the start of its parameters, "
            "so its pytest-style tests cannot be run one by one; rename it"
        )


def _split(text: str) -> tuple[Path, str]:
    """``PATH`` or ``FILE::Class::test``: a path that exists is a path, '::' in it or not."""
    if Path(text).exists():
        return Path(text), ""
    start = text.find("::")
    while start != -1:
        if Path(text[:start]).is_file():
            return Path(text[:start]), text[start + 2 :]
        start = text.find("::", start + 1)
    path_text, _, selector = text.partition("::")
    return Path(path_text), selector


def _base(paths: Sequence[Path]) -> Path:
    """What ids are relative to: the directory given, or a file's root; for several paths, the
    directory they all lie in (as pytest's rootdir is), so that no two files share an id."""
    bases = {p.resolve() if p.is_dir() else import_root(p.resolve())[0] for p in paths}
    return Path(os.path.commonpath(sorted(bases)))


# Makes the tests read from the source into those pytest collects: see mgradcheck.suites.pytest_items.
Expand = Callable[[list[SuiteTest]], list[SuiteTest]]


def collect(paths: Iterable[Path | str], expand: Expand | None = None) -> list[SuiteTest]:
    """Every test in these files and directories (a ``FILE::Class::test`` path names some);
    with ``expand``, a pytest-style test is one test per parameter set that pytest collects,
    which ``FILE::test[params]`` names one of."""
    collector = Collector()
    given = [(str(p), *_split(str(p))) for p in paths]
    for text, path, selector in given:
        if not path.exists():
            raise UsageError(f"{shown(path)}: no such file or directory")
        if selector and not path.is_file():
            raise UsageError(
                f"{shown(text)}: '::' selects tests of a file, and {shown(path)} is a directory"
            )
    base = _base([path for _, path, _ in given]) if given else None
    tests: dict[tuple[Path, str | None, str], SuiteTest] = {}
    chosen_by: dict[tuple[Path, str | None, str], set[str]] = {}  # "": its whole file
    by_id: dict[str, SuiteTest] = {}
    for text, path, selector in given:
        for file in _files(path):
            for test in collector.collect_file(file, base):
                key = (test.file, test.cls, test.name)
                if selector and not _selected(test, selector):
                    continue
                chosen_by.setdefault(key, set()).add(selector)
                if key in tests:
                    continue  # given twice (a file and its directory)
                other = by_id.setdefault(test.id, test)
                if other is not test:
                    raise UsageError(
                        f"{shown(test.file)} and {shown(other.file)} both give the test id "
                        f"{shown(test.id)}: run them apart, or rename one"
                    )
                tests[key] = test
        if selector and not any(
            _selected(t, selector) for t in tests.values() if t.file == path.resolve()
        ):
            raise UsageError(f"{shown(text)}: no such test in {shown(path)}")
    if expand is None:
        return list(tests.values())
    found = [
        test
        for test in expand(list(tests.values()))
        if any(not s or _selected(test, s) for s in chosen_by[(test.file, test.cls, test.name)])
    ]
    for text, path, selector in given:
        if "[" in selector and not any(
            _selected(t, selector) for t in found if t.file == path.resolve()
        ):
            raise UsageError(f"{shown(text)}: pytest collects no such test in {shown(path)}")
    return found


def _selected(test: SuiteTest, selector: str) -> bool:
    """Whether ``Class::test`` names the test; ``test[params]`` one parameter set of it (a test
    read from the source holds them all)."""
    own = [*([test.cls] if test.cls else []), test.name]
    head, bracket, params = selector.partition("[")
    wanted = head.split("::")
    if bracket and (len(wanted) != len(own) or test.params not in ("", f"[{params}")):
        return False
    return own[: len(wanted)] == wanted


def select(tests: Sequence[SuiteTest], keyword: str | None) -> list[SuiteTest]:
    """The tests ``-k`` keeps (all without it); UsageError when none is left."""
    if not tests:
        raise UsageError("no tests collected (files named test*.py or *_test.py)")
    if keyword is None:
        return list(tests)
    expression = keywords.parse(keyword)
    chosen = [t for t in tests if expression.matches(keywords.names(t.id))]
    if not chosen:
        raise UsageError(
            f"-k {keywords.quoted(keyword)} matches none of the {len(tests)} tests collected"
        )
    return chosen
