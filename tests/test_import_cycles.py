"""No two modules of mgradcheck import each other, however indirectly.

import-linter sees only module-level imports, so a cycle closed by an import
inside a function passes its contracts yet still ties the modules together: one
cannot be loaded, tested or moved without the other. This graph takes every
import statement, at any depth of any module (`ast.walk`), imports under
`if TYPE_CHECKING:` included, and fails naming each strongly connected
component of more than one module.

An edge goes to the module named, not to its parent packages: `import a.b.c`
runs `a/__init__.py` too, but counting that would put every package's
`__init__` in a cycle with the submodules it re-exports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import mgradcheck

PACKAGE = Path(mgradcheck.__file__).resolve().parent


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name; a package is named by its `__init__`."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ours that `name`'s import statements name, wherever they stand."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                # A package's `from . import x` is relative to itself, a module's to its parent.
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:
                    yield submodule
                elif source in known:
                    yield source


def graph() -> dict[str, set[str]]:
    """Each module of ours and the other modules of ours it imports."""
    known = modules()
    return {
        name: {target for target in imported(name, path, known) if target != name}
        for name, path in known.items()
    }


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively: the package is deep enough to matter to recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def cycle_through(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """One loop inside a component, for the message: a → b → … → a."""
    members = set(component)
    path = [component[0]]
    seen = {component[0]: 0}
    while True:
        step = sorted(edges[path[-1]] & members)[0]
        if step in seen:
            return [*path[seen[step] :], step]
        seen[step] = len(path)
        path.append(step)


def test_the_graph_is_read() -> None:
    """Sanity: resolution finds function-local and relative imports, or the check below is empty."""
    edges = graph()
    assert "mgradcheck.child.gradcheck.api" in edges["mgradcheck.child.gradcheck"]
    assert "mgradcheck.child.checks" in edges["mgradcheck.child.bootstrap"]  # inside a function
    assert "mgradcheck.outcomes" in edges["mgradcheck.exitcodes"]


def test_no_import_cycles() -> None:
    """Every strongly connected component of the import graph is one module."""
    edges = graph()
    cycles = [
        " → ".join(cycle_through(component, edges)) + f"  (component: {', '.join(component)})"
        for component in strongly_connected(edges)
        if len(component) > 1
    ]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_child_imports_nothing_above_itself() -> None:
    """The child runs under any MLX release's Python: import-linter's contract keeps it off our
    other packages, but cannot name the root, which is every module's ancestor; this can."""
    edges = graph()
    above = sorted(
        f"{name} → {target}"
        for name, targets in edges.items()
        if name.startswith("mgradcheck.child")
        for target in targets
        if not target.startswith("mgradcheck.child")
    )
    assert not above, "the child imports:\n" + "\n".join(above)
