"""Where to look in MLX for a corpus entry: the primitives its reproducer reaches and the
transform at fault, as ``file:line`` at the ref of the index shipped in the package.

The index (``data/mlx-primitives.json``) is made by :mod:`mgradcheck.sweep.mlx_sources`.
The MLX functions an entry calls are read from its text (``mx.addmm``, ``mx.fft.irfft``,
the names it looks up with ``getattr(mx, name)``, and in a ``gradcheck:`` block's ``fn``,
whose arguments are all MLX arrays, operators too); the transform at fault from its tags,
else from the checks its block asks for.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mgradcheck.corpus.entry import Entry
from mgradcheck.releases.regress import Judged, State

# The transform methods each tag or gradcheck check puts at fault, in the order to show them.
METHODS = {
    "jvp": ("jvp",), "forward-mode": ("jvp",), "vjp": ("vjp",), "grad": ("vjp",),
    "subsets": ("vjp",), "vmap": ("vmap",), "second-order": ("jvp", "vjp"),
    "hessian": ("jvp", "vjp"), "hvp": ("jvp", "vjp"), "shapeless": ("output_shapes",),
    "cse": ("is_equivalent",),
}  # fmt: skip
# The tags and gradcheck checks that go through mx.compile.
COMPILED = frozenset({"compile", "shapeless", "views", "specials"})
# The places behind mx.compile, each with what it does and the tags that point at it first.
COMPILE_PLACES = (
    ("mlx/compile.cpp", "detail::compile_simplify", "merges equivalent nodes", ("cse",)),
    ("mlx/compile.cpp", "detail::compile_fuse", "fuses elementwise chains", ("fusion", "broadcast")),
    ("mlx/compile.cpp", "detail::compile_replace", "replays the traced graph on new inputs", ("shapeless",)),
    ("mlx/compile.cpp", "Compiled::output_shapes", "gives a fused kernel's shape in a shapeless replay", ("shapeless", "broadcasting")),
    ("mlx/backend/common/compiled.cpp", "print_constant", "writes a constant into a kernel's source", ("constants", "codegen")),
    ("mlx/backend/cpu/compiled.cpp", "build_kernel", "writes a fused CPU kernel's source", ("codegen", "cpu-kernel", "constants")),
    ("mlx/backend/cpu/compiled.cpp", "Compiled::eval_cpu", "builds and runs it on the CPU", ("cpu-kernel",)),
)  # fmt: skip
MOST = 8  # places listed from the primitives; the compile places come on top
_OPERATORS = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
    ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "power", ast.MatMult: "matmul",
    ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal",
    ast.Eq: "equal", ast.NotEq: "not_equal", ast.USub: "negative",
    ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
}  # fmt: skip
# Functions that make inputs: their primitives are where a bug is least likely, unless named.
_MAKERS = frozenset(
    {"zeros", "ones", "full", "zeros_like", "ones_like", "arange", "linspace", "eye", "identity"}
)
_MX = re.compile(r"\bmx\.((?:fft|linalg|fast|random)\.)?(\w+)")
_GETATTR = re.compile(r"\bgetattr\(\s*mx\s*,")
_SPELLED = re.compile(r"""["']((?:fft\.|linalg\.|fast\.|random\.)?\w+)["']""")


@dataclass(frozen=True)
class Index:
    ref: str
    functions: Mapping[str, Sequence[Sequence[str]]]  # Python name -> primitives, level by level
    primitives: Mapping[str, Mapping[str, Any]]  # class -> declared, bases, method -> file:line
    compile: Mapping[str, Mapping[str, int]]  # file -> function -> line

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Index:
        return cls(data["ref"], data["functions"], data["primitives"], data["compile"])

    def nearest(self, function: str) -> Sequence[str]:
        """The primitives ``function`` builds itself, else those of the nearest calls that build any."""
        return next((level for level in self.functions.get(function, ()) if level), ())

    def method(self, cls: str, method: str) -> tuple[str, str] | None:
        """The class that defines ``cls``'s ``method`` (``cls`` or a base) and where."""
        todo = [cls]
        while todo:
            name = todo.pop(0)
            data = self.primitives.get(name, {})
            if method in data:
                return name, str(data[method])
            todo.extend(data.get("bases", ()))
        return None


@cache
def shipped() -> Index:
    """The index of MLX's sources shipped in the package."""
    data = resources.files("mgradcheck.sweep").joinpath("data").joinpath("mlx-primitives.json")
    return Index.from_json(json.loads(data.read_text(encoding="utf-8")))


def _operators(fn: str) -> Iterator[str]:
    try:
        tree = ast.parse(fn, mode="eval")
    except SyntaxError:
        return
    for node in ast.walk(tree):
        ops: list[ast.AST] = [node.op] if isinstance(node, (ast.BinOp, ast.UnaryOp)) else []
        ops.extend(node.ops if isinstance(node, ast.Compare) else [])
        yield from (_OPERATORS[type(op)] for op in ops if type(op) in _OPERATORS)


def _calls(text: str) -> list[str]:
    """The MLX functions ``text`` names, in the order written: ``mx.f``, ``mx.fft.f``, and,
    in code that looks them up with ``getattr(mx, name)``, the names it spells as strings
    (``for name in ("bitwise_and", "bitwise_or"): op = getattr(mx, name)``)."""
    found = [(m.start(), f"{m.group(1) or ''}{m.group(2)}") for m in _MX.finditer(text)]
    if _GETATTR.search(text):
        found += [(m.start(), m.group(1)) for m in _SPELLED.finditer(text)]
    return [name for _, name in sorted(found)]


def _known(entry: Entry, index: Index) -> list[str]:
    """The MLX functions ``entry`` calls that ``index`` knows, in the order used."""
    names = _calls(entry.code or "")
    if entry.gradcheck is not None:
        fn = str(entry.gradcheck.get("fn", ""))
        names += _calls(fn)
        names += list(_operators(fn))
    return [n for n in dict.fromkeys(names) if n in index.functions]


def _named(entry: Entry, known: Sequence[str]) -> list[str]:
    tags = {tag.replace("-", "_") for tag in entry.tags}
    words = tags | set(re.findall(r"\w+", entry.title))
    # A tag may name a family of functions: ``bitwise`` is bitwise_and, bitwise_or...
    return [
        n
        for n in known
        if (short := n.rsplit(".", 1)[-1]) in words or any(short.startswith(f"{t}_") for t in tags)
    ]


def named(entry: Entry, index: Index) -> list[str]:
    """The MLX functions ``entry`` calls that its tags or title name: what it is about."""
    return _named(entry, _known(entry, index))


def called(entry: Entry, index: Index) -> list[str]:
    """The MLX functions ``entry`` calls that ``index`` knows: those its tags or title name, when
    it names any (the rest build inputs and compare results), else all but those that make
    inputs, in the order used."""
    known = _known(entry, index)
    return _named(entry, known) or [
        n for n in known if n not in _MAKERS and not n.startswith("random.")
    ]


def methods_at_fault(entry: Entry) -> tuple[str, ...]:
    words = list(entry.tags)
    if not any(w in METHODS for w in words) and entry.gradcheck is not None:
        words = list(entry.gradcheck.get("checks", ()))
    return tuple(dict.fromkeys(m for w in words for m in METHODS.get(w, ())))


def places(entry: Entry, index: Index) -> list[str]:
    """Markdown list items, most specific first: primitive methods, compile places, declarations."""
    wanted = methods_at_fault(entry)
    words = set(entry.tags) | set((entry.gradcheck or {}).get("checks", ()))
    found: dict[str, str] = {}
    declared: dict[str, str] = {}
    for function in called(entry, index):
        for cls in index.nearest(function):
            declared.setdefault(
                cls, f"`{cls}` declared in {index.primitives[cls]['declared']} (`mx.{function}`)"
            )
            for method in wanted:
                at = index.method(cls, method)
                if at is None or f"{cls}::{method}" in found:
                    continue
                owner, place = at
                whose = "" if owner == cls else f", inherited from `{owner}`"
                found[f"{cls}::{method}"] = f"`{cls}::{method}` in {place} (`mx.{function}`{whose})"
    items = list(found.values())
    if not items and not wanted:
        items = list(declared.values())
    shown = items[:MOST]
    if len(items) > MOST:
        shown.append(f"and {len(items) - MOST} more")
    if words & COMPILED:
        ordered = sorted(COMPILE_PLACES, key=lambda p: -len(words & set(p[3])))  # most named first
        shown[:0] = [
            f"`{name}` in {path}:{index.compile[path][name]} ({what})"
            for path, name, what, _ in ordered
            if name in index.compile.get(path, {})
        ]
    return shown


def checked(entry: Entry, releases: Sequence[Judged], backend: str | None) -> str:
    """One line: the releases the script ran on, how each went, and what it compares against."""
    runs = []
    said = {State.BAD: "reproduces", State.GOOD: "passes", State.UNKNOWN: "was not judged"}
    for state, word in said.items():
        versions = [str(j.version) for j in releases if j.state is state]
        if versions:
            runs.append(f"{word} on mlx {', '.join(versions)}")
    oracle = (
        "float64 finite differences, the eager function or a loop"
        if entry.gradcheck is not None
        else "written out in the script"
    )
    return (
        f"Checked on {backend or 'an unknown backend'}: the script above {'; '.join(runs) or 'did not run'}. "
        f"Its expected values are computed without the transform under test ({oracle})."
    )


def section(
    entry: Entry, releases: Sequence[Judged], backend: str | None, index: Index | None = None
) -> str:
    """The report's "Where to look in MLX" section, as Markdown."""
    index = index or shipped()
    items = places(entry, index)
    if items:
        body = f"At MLX {index.ref} (the sources this mgradcheck indexes; later releases may have moved the lines):\n\n"
        body += "\n".join(f"- {item}" for item in items)
    else:
        body = f"Nothing found: no MLX function this reproducer calls is in the index of MLX {index.ref} (indexing with `[]` is not followed)."
    return f"### Where to look in MLX\n\n{body}\n\n{checked(entry, releases, backend)}\n"
