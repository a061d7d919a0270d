"""``-k EXPR``: pytest's keyword expressions, over a test's id.

``jvp``, ``jvp and not complex``, ``(sort or topk) and grad``: each word
matches, case-insensitively, as a substring of the test's file name (with or
without ``.py``), its class or its name. Parentheses and ``not`` nest at most
100 levels deep (a chain of ``and``/``or`` of any length nests none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mgradcheck.errors import UsageError

_TOKEN = re.compile(r"\s*(\(|\)|[\w:+\-.\[\]\\/]+)")
_KEYWORDS = ("and", "or", "not", "(", ")")
MAX_DEPTH = 100  # nested parentheses and nots: the parser recurses once per level


@dataclass(frozen=True)
class Word:
    text: str

    def matches(self, names: frozenset[str]) -> bool:
        return any(self.text in name for name in names)


@dataclass(frozen=True)
class Not:
    operand: Expression

    def matches(self, names: frozenset[str]) -> bool:
        return not self.operand.matches(names)


@dataclass(frozen=True)
class Both:
    # All operands of a chain ``a and b and c`` in one node: a chain of any length nests not
    # at all, so neither matching nor comparing it recurses once per word.
    operands: tuple[Expression, ...]

    def matches(self, names: frozenset[str]) -> bool:
        return all(o.matches(names) for o in self.operands)


@dataclass(frozen=True)
class Either:
    operands: tuple[Expression, ...]

    def matches(self, names: frozenset[str]) -> bool:
        return any(o.matches(names) for o in self.operands)


Expression = Word | Not | Both | Either


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos, end = 0, len(text.rstrip())
        while pos < end:
            found = _TOKEN.match(text, pos)
            if found is None:
                bad = text[pos:].strip()[:1]
                raise UsageError(f"-k {quoted(text)}: unexpected character {bad!r}")
            self.tokens.append(found.group(1))
            pos = found.end()
        self.pos = 0
        self.depth = 0

    def fail(self, problem: str) -> UsageError:
        return UsageError(f"-k {quoted(self.text)}: {problem}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.fail("the expression ends too soon")
        self.pos += 1
        return token

    def either(self) -> Expression:
        operands = [self.both()]
        while self.peek() == "or":
            self.take()
            operands.append(self.both())
        return operands[0] if len(operands) == 1 else Either(tuple(operands))

    def both(self) -> Expression:
        operands = [self.negated()]
        while self.peek() == "and":
            self.take()
            operands.append(self.negated())
        return operands[0] if len(operands) == 1 else Both(tuple(operands))

    def negated(self) -> Expression:
        token = self.take()
        if token in ("not", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"parentheses and 'not' nest deeper than {MAX_DEPTH} levels")
        if token == "not":
            inner: Expression = Not(self.negated())
            self.depth -= 1
            return inner
        if token == "(":
            inner = self.either()
            if self.peek() != ")":
                raise self.fail("a '(' is not closed")
            self.take()
            self.depth -= 1
            return inner
        if token in _KEYWORDS:
            raise self.fail(f"unexpected {token!r}")
        return Word(token.lower())


def quoted(text: str) -> str:
    """The expression as an error message shows it: quoted, escaped, at most 80 characters."""
    return repr(text if len(text) <= 80 else text[:79] + "…")


def parse(text: str) -> Expression:
    """The expression, or UsageError naming what is wrong with it."""
    parser = _Parser(text)
    if not parser.tokens:
        raise UsageError("-k: the expression is empty")
    expression = parser.either()
    if parser.peek() is not None:
        raise parser.fail(f"unexpected {parser.peek()!r}")
    return expression


def names(test_id: str) -> frozenset[str]:
    """What ``-k`` words match: the file (with and without .py), the class and the test name."""
    parts = test_id.split("::")
    file = parts[0].rsplit("/", 1)[-1]
    return frozenset(p.lower() for p in (file, file.removesuffix(".py"), *parts[1:]))


__all__ = ["Expression", "names", "parse", "quoted"]
