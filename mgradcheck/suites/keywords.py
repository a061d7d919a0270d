"""``-k EXPR``: pytest's keyword expressions, over a test's id.

``jvp``, ``jvp and not complex``, ``(sort or topk) and grad``: each word
matches, case-insensitively, as a substring of the test's file name (with or
without ``.py``), its class or its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mgradcheck.errors import UsageError

_TOKEN = re.compile(r"\s*(\(|\)|[\w:+\-.\[\]\\/]+)")
_KEYWORDS = ("and", "or", "not", "(", ")")


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
    left: Expression
    right: Expression

    def matches(self, names: frozenset[str]) -> bool:
        return self.left.matches(names) and self.right.matches(names)


@dataclass(frozen=True)
class Either:
    left: Expression
    right: Expression

    def matches(self, names: frozenset[str]) -> bool:
        return self.left.matches(names) or self.right.matches(names)


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
                raise UsageError(f"-k {text!r}: unexpected character {bad!r}")
            self.tokens.append(found.group(1))
            pos = found.end()
        self.pos = 0

    def fail(self, problem: str) -> UsageError:
        return UsageError(f"-k {self.text!r}: {problem}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.fail("the expression ends too soon")
        self.pos += 1
        return token

    def either(self) -> Expression:
        left = self.both()
        while self.peek() == "or":
            self.take()
            left = Either(left, self.both())
        return left

    def both(self) -> Expression:
        left = self.negated()
        while self.peek() == "and":
            self.take()
            left = Both(left, self.negated())
        return left

    def negated(self) -> Expression:
        token = self.take()
        if token == "not":
            return Not(self.negated())
        if token == "(":
            inner = self.either()
            if self.peek() != ")":
                raise self.fail("a '(' is not closed")
            self.take()
            return inner
        if token in _KEYWORDS:
            raise self.fail(f"unexpected {token!r}")
        return Word(token.lower())


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


__all__ = ["Expression", "names", "parse"]
