"""The names a test's code reads, and the module-level statements that bind them."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable

from mgradcheck.suites.source import Source, first_line


def bound_names(stmt: ast.stmt) -> set[str]:
    """The module-level names a statement binds."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    return _stored(ast.walk(stmt))


def _stored(nodes: Iterable[ast.AST]) -> set[str]:
    found = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
    return found


def free_names(roots: Iterable[ast.AST]) -> set[str]:
    """Names read and bound nowhere in ``roots`` (bound anywhere in them counts, generously)."""
    nodes = [n for root in roots for n in ast.walk(root)]
    loaded = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _stored(nodes)


class ParsedModule:
    """A parsed module and its top-level bindings (its ``if __name__ == ...`` block left out)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.lines = source.text.splitlines(keepends=True)
        self.bindings: dict[str, ast.stmt] = {}
        for stmt in source.tree.body:
            if isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test):
                continue
            for name in bound_names(stmt):
                self.bindings[name] = stmt

    def segment(self, node: ast.stmt) -> str:
        """A statement's source, a function's or class's decorators included (a dropped
        ``@mx.compile`` would change the test)."""
        start, end = first_line(node), node.end_lineno or node.lineno
        return textwrap.dedent("".join(self.lines[start - 1 : end]))
