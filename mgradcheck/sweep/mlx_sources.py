"""An index of MLX's C++ sources at one ref: which primitives each operation builds, and where
each primitive's transforms are defined. ``report upstream`` reads it to say where to look.

Regenerate the copy shipped in the package (any clone of MLX, bare or not, with the tag)::

    python -m mgradcheck.sweep.mlx_sources --mlx-repo PATH --ref v0.32.1 \\
        -o mgradcheck/sweep/data/mlx-primitives.json

Files are read with ``git show REF:path``, never checked out. What it records:

- ``functions``: per Python name (``addmm``, ``fft.irfft``, ``fast.layer_norm``), the primitive
  classes built by the C++ function its binding calls (``python/src/*.cpp``; the C++ name
  where there is no binding), then those of the functions that calls, then one call further:
  a list per level, nearest first, so ``trace`` reaches the primitives of ``diagonal`` and ``sum``.
- ``primitives``: per class, where it is declared, its bases, and ``file:line`` of each of
  ``jvp``, ``vjp``, ``vmap``, ``output_shapes`` and ``is_equivalent`` it defines itself.
- ``compile``: the functions of the files behind ``mx.compile`` and where each starts.

No source text is kept; keys are sorted, so the same ref gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mgradcheck.sweep.cpp_source import (
    Definition,
    blank,
    definitions,
    depth_zero,
    line_of,
    macros_defining,
    qualify,
    resolve,
)

FORMAT = 1
METHODS = ("jvp", "vjp", "vmap", "output_shapes", "is_equivalent")
# C++ sources of the Python modules mlx.core, .fft, .linalg, .fast and .random.
MODULES = ("ops", "fft", "linalg", "fast", "random")
COMPILE_FILES = (
    "mlx/compile.cpp",
    "mlx/backend/common/compiled.cpp",
    "mlx/backend/cpu/compiled.cpp",
    "mlx/backend/cpu/compiled_preamble.h",
)
LEVELS = 3  # the function's own primitives, then one and two calls down
_MAKE = re.compile(r"make_shared\s*<\s*([\w:]+)\s*>")
_CALL = re.compile(r"(?<![\w.:>])((?:\w+::)*\w+)\s*\(")
_BOUND = re.compile(r"(?<![\w:])mx::((?:\w+::)*\w+)")
_DEF = re.compile(r"\bm\.def\s*\(")
_PY_NAME = re.compile(r'\s*"(\w+)"')


class Tree:
    """The files of one commit of a git repository, read without a work tree."""

    def __init__(self, repo: Path, ref: str) -> None:
        self.repo = repo
        self.commit = self._git("rev-parse", "--verify", f"{ref}^{{commit}}").strip()

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.repo), *args], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def read(self, path: str) -> str | None:
        done = subprocess.run(
            ["git", "-C", str(self.repo), "show", f"{self.commit}:{path}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return done.stdout if done.returncode == 0 else None

    def grep(self, pattern: str, *pathspecs: str) -> list[str]:
        """The files under ``pathspecs`` with a line matching extended regex ``pattern``."""
        done = subprocess.run(
            ["git", "-C", str(self.repo), "grep", "-l", "-E", pattern, self.commit, "--", *pathspecs],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return sorted(line.split(":", 1)[1] for line in done.stdout.splitlines() if ":" in line)


def _inline_methods(
    text: str, cls: Definition, macros: dict[str, tuple[str, ...]]
) -> Iterable[tuple[str, int]]:
    """The methods a class body defines itself, written out or through a macro, and their lines."""
    begin, end = cls.body
    used = "|".join(map(re.escape, macros)) or r"(?!)"
    for low, high in depth_zero(text, begin, end):
        last = text[low:high]
        for macro in re.finditer(rf"\b({used})\s*\(\s*\)", last):
            for name in macros[macro.group(1)]:
                yield name, line_of(text, low + macro.start())
        statement = re.split(r"[;:]\s", last)[-1]  # after the last declaration or `public:`
        method = re.search(rf"\b({'|'.join(METHODS)})\s*\(", statement)
        if method is not None and high < end:  # its body opens where this span stops
            yield method.group(1), line_of(text, high - len(statement) + method.start())


def primitives(tree: Tree) -> dict[str, dict[str, Any]]:
    """Every class that derives from ``Primitive``: declaration, bases, and its own methods."""
    files = tree.grep(f"({'|'.join(METHODS)})[[:space:]]*\\(", "mlx/*.h", "mlx/*.cpp")
    classes: dict[str, dict[str, Any]] = {}
    bases: dict[str, tuple[str, tuple[str, ...]]] = {}
    methods: list[tuple[str, str, str, int]] = []  # class, method, file, line
    for path in files:
        raw = tree.read(path) or ""
        text, macros = blank(raw), macros_defining(raw, METHODS)
        for found in definitions(text):
            if found.kind == "class":
                classes[found.name] = {"declared": f"{path}:{found.line}"}
                bases[found.name] = (found.namespace, found.bases)
                for method, line in _inline_methods(text, found, macros):
                    methods.append((found.name, method, path, line))
            elif found.local.rsplit("::", 1)[-1] in METHODS and "::" in found.local:
                owner, method = found.name.rsplit("::", 1)
                methods.append((owner, method, path, found.line))
    for name, (namespace, written) in bases.items():
        resolved = (resolve(b, namespace, classes) for b in written)
        classes[name]["bases"] = sorted(b for b in resolved if b is not None)

    def derives(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == "Primitive":
            return True
        return any(derives(b, seen | {name}) for b in classes[name]["bases"] if b not in seen)

    for owner, method, path, line in sorted(methods):
        if owner in classes:
            classes[owner].setdefault(method, f"{path}:{line}")  # a second definition: the first
    return {name: data for name, data in classes.items() if derives(name)}


def operations(tree: Tree, classes: Iterable[str]) -> dict[str, list[list[str]]]:
    """Per Python name, the primitive classes its C++ function builds, level by level."""
    classes = set(classes)
    made: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    public: set[str] = set()
    bodies: list[tuple[str, str, str]] = []  # name, namespace, body text
    for module in MODULES:
        for path in (f"mlx/{module}.cpp", f"mlx/{module}.h"):
            text = blank(tree.read(path) or "")
            for found in definitions(text):
                if found.kind != "function" or "::" in found.local:
                    continue
                made.setdefault(found.name, set())
                if not found.internal and found.namespace.split("::")[0] != "detail":
                    public.add(found.name)
                bodies.append((found.name, found.namespace, text[slice(*found.body)]))
    for name, namespace, body in bodies:
        for cls in _MAKE.findall(body):
            if (resolved := resolve(cls, namespace, classes)) is not None:
                made[name].add(resolved)
        called = (resolve(c, namespace, made) for c in _CALL.findall(body))
        calls.setdefault(name, set()).update(c for c in called if c is not None and c != name)

    def levels(names: set[str]) -> list[list[str]]:
        out: list[list[str]] = []
        seen_fns: set[str] = set()
        seen: set[str] = set()
        for _ in range(LEVELS):
            level = set().union(*(made[n] for n in names)) - seen
            out.append(sorted(level))
            seen |= level
            seen_fns |= names
            names = set().union(*(calls.get(n, set()) for n in names)) - seen_fns
        while out and not out[-1]:
            out.pop()
        return out

    bound = bindings(tree, made)
    result = {py: levels(cpp) for py, cpp in bound.items()}
    for name in sorted(public):
        result.setdefault(name.replace("::", "."), levels({name}))
    return {name: found for name, found in result.items() if found}


def bindings(tree: Tree, functions: dict[str, Any]) -> dict[str, set[str]]:
    """Per Python name, the C++ functions its ``m.def`` calls: those of its own name if any."""
    found: dict[str, set[str]] = {}
    for module in MODULES:
        raw = tree.read(f"python/src/{module}.cpp") or ""
        text, prefix = blank(raw), "" if module == "ops" else f"{module}."
        for define in _DEF.finditer(text):
            name = _PY_NAME.match(raw, define.end())
            if name is None:
                continue
            depth, at = 1, define.end()
            while depth and at < len(text):
                depth += {"(": 1, ")": -1}.get(text[at], 0)
                at += 1
            called = {qualify("", c) for c in _BOUND.findall(text, define.end(), at)}
            called &= set(functions)
            same = {c for c in called if c.rsplit("::", 1)[-1] == name.group(1)}
            if same or called:
                found.setdefault(prefix + name.group(1), set()).update(same or called)
    return found


def compile_places(tree: Tree) -> dict[str, dict[str, int]]:
    """The functions of the files behind ``mx.compile`` and their first lines (a file present, none)."""
    places: dict[str, dict[str, int]] = {}
    for path in COMPILE_FILES:
        raw = tree.read(path)
        if raw is None:
            continue
        places[path] = {}
        if path.endswith(".cpp"):
            for found in definitions(blank(raw)):
                if found.kind == "function":
                    places[path].setdefault(found.name, found.line)
    return places


def build(repo: Path, ref: str) -> dict[str, Any]:
    tree = Tree(repo, ref)
    classes = primitives(tree)
    return {
        "format": FORMAT,
        "ref": ref,
        "commit": tree.commit,
        "functions": operations(tree, classes),
        "primitives": classes,
        "compile": compile_places(tree),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mgradcheck.sweep.mlx_sources", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--mlx-repo", type=Path, required=True, help="a clone of MLX, bare or not")
    parser.add_argument("--ref", required=True, help="the tag or commit to index, e.g. v0.32.1")
    parser.add_argument("-o", "--output", type=Path, help="write here (default: standard output)")
    args = parser.parse_args(argv)
    text = json.dumps(build(args.mlx_repo, args.ref), indent=1, sort_keys=True) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
