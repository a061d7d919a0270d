"""Just enough of C++ to index MLX's sources: top-level definitions and where they start.

Not a parser: comments, string literals and preprocessor lines are blanked first
(newlines kept, so offsets and line numbers stay those of the file), then braces
are matched. At namespace scope a braced block is a namespace, a class, or a
function (the name before its first parenthesis); everything nested in a
function or a class is body. That is how MLX writes ``ops.cpp``,
``primitives.cpp`` and their headers, and what the tests pin on small files.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator
from dataclasses import dataclass

# Leftmost wins: a quote inside a comment is comment, "//" inside a string is string.
_NOT_CODE = re.compile(
    r"//[^\n]*"
    r"|/\*.*?\*/"
    r'|(?<!\w)R"([^(\s"]{0,16})\(.*?\)\1"'
    r'|"(?:\\.|[^"\\\n])*"'
    r"|(?<!\w)'(?:\\.|[^'\\\n])*'"  # after a word character it is a digit separator
    r"|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*",
    re.S | re.M,
)
_NAMESPACE = re.compile(r"\s*(?:inline\s+)?namespace\b\s*([\w:]*)")
_CLASS = re.compile(
    r"\s*(?:template\s*<[^{;]*>\s*)?(?:class|struct)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::(?!:)(.*))?$",
    re.S,
)
_OTHER_TYPE = re.compile(r"\s*(?:typedef\s+)?(?:enum|union)\b|\s*extern\s")
_STATEMENT = re.compile(r"[{};]")
_BRACES = re.compile(r"[{}]")
_CALLED = re.compile(r"([A-Za-z_~][\w:~]*)\s*\(")
# MLX's own prefix: `mlx::core::fast::LayerNorm` is `fast::LayerNorm` here.
_CORE = re.compile(r"^mlx(?:::core)?(?:::|$)")


def blank(text: str) -> str:
    """``text`` with comments, literals and preprocessor lines as spaces, newlines kept."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


@dataclass(frozen=True)
class Definition:
    """A function or class defined at namespace scope."""

    kind: str  # "function" or "class"
    local: str  # as written: "addmm", "AddMM::jvp", "LayerNorm"
    namespace: str  # below mlx::core, where it is written: "", "fft", "detail"
    line: int  # of its name
    body: tuple[int, int]  # offsets of the text between its braces
    bases: tuple[str, ...] = ()  # a class's bases as written
    internal: bool = False  # in an anonymous namespace

    @property
    def name(self) -> str:
        """Qualified below mlx::core: "addmm", "fft::irfftn", "AddMM::jvp", "fast::LayerNorm"."""
        return qualify(self.namespace, self.local)


def qualify(namespace: str, name: str) -> str:
    joined = f"{namespace}::{name}" if namespace and name else namespace or name
    return _CORE.sub("", joined)


def resolve(name: str, namespace: str, known: Container[str]) -> str | None:
    """What ``name``, written in ``namespace``, names among ``known``: the innermost match."""
    name = _CORE.sub("", name)
    parts = namespace.split("::") if namespace else []
    for end in range(len(parts), -1, -1):
        candidate = qualify("::".join(parts[:end]), name)
        if candidate in known:
            return candidate
    return None


def _header(kind: str, header: str) -> tuple[str, int, tuple[str, ...]] | None:
    """A class's or function's name, its offset in ``header`` and a class's bases."""
    if kind == "class":
        found = _CLASS.match(header)
        if found is None:
            return None
        bases = tuple(
            part.split()[-1].split("<")[0]
            for part in (found.group(2) or "").split(",")
            if part.split()
        )
        return found.group(1), found.start(1), bases
    called = _CALLED.search(header)
    if called is None or called.group(1) in {"if", "for", "while", "switch", "return"}:
        return None
    return called.group(1), called.start(1), ()


def _closing(text: str, at: int) -> int:
    """The offset of the brace that closes the one at ``at``."""
    depth = 0
    for brace in _BRACES.finditer(text, at):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return brace.start()
    return len(text)


def definitions(text: str) -> Iterator[Definition]:
    """The namespace-scope functions and classes of C++ source ``text`` (already :func:`blank`)."""
    frames: list[
        tuple[str, str, str, int, tuple[str, ...], int]
    ] = []  # kind, name, ns, line, bases, body
    start = at = 0  # where the current statement began; where the scan is
    while (found := _STATEMENT.search(text, at)) is not None:
        at, char = found.start(), found.group()
        if char == ";":
            start = at = at + 1
            continue
        if char == "}":
            if frames:
                kind, name, namespace, line, bases, body = frames.pop()
                if kind in ("function", "class"):
                    internal = any(f[0] == "namespace" and not f[1] for f in frames)
                    yield Definition(kind, name, namespace, line, (body, at), bases, internal)
            start = at = at + 1
            continue
        header = text[start:at]
        scope = all(frame[0] == "namespace" for frame in frames)
        if scope and (header.count("(") > header.count(")") or header.rstrip().endswith("=")):
            at = _closing(text, at) + 1  # a braced initialiser, a default argument `= {}`
            continue
        namespace = qualify("::".join(f[1] for f in frames if f[0] == "namespace" and f[1]), "")
        frame: tuple[str, str, str, int, tuple[str, ...], int] = (
            "other",
            "",
            namespace,
            0,
            (),
            at + 1,
        )
        ns = _NAMESPACE.match(header) if scope else None
        if ns is not None:
            frame = ("namespace", ns.group(1), namespace, 0, (), at + 1)
        elif scope and _OTHER_TYPE.match(header) is None:
            kind = "class" if _CLASS.match(header) else "function"
            named = _header(kind, header)
            if named is not None:
                name, offset, bases = named
                frame = (kind, name, namespace, line_of(text, start + offset), bases, at + 1)
        frames.append(frame)
        start = at = at + 1


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def depth_zero(text: str, begin: int, end: int) -> Iterator[tuple[int, int]]:
    """Spans of ``text[begin:end]`` outside any nested braces, as (start, end) offsets."""
    depth, last = 0, begin
    for brace in re.finditer(r"[{}]", text[begin:end]):
        at = begin + brace.start()
        if brace.group() == "{":
            if depth == 0:
                yield last, at
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                last = at + 1
    if depth == 0:
        yield last, end


def macros_defining(raw: str, methods: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The argument-less macros of ``raw`` source whose expansion defines one of ``methods`` inline."""
    found: dict[str, tuple[str, ...]] = {}
    for macro in re.finditer(r"^[ \t]*#define[ \t]+(\w+)\(\)((?:[^\n]*\\\n)*[^\n]*)", raw, re.M):
        body = macro.group(2)
        defined = tuple(m for m in methods if re.search(rf"\b{m}\s*\([^;{{]*\)[^;{{]*\{{", body))
        if defined:
            found[macro.group(1)] = defined
    return found
