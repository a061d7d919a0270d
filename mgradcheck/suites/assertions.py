"""unittest's assertions as the code of an inlined test's entry has them.

Some map onto the check helpers the entry finds bound when it runs
(:data:`ENTRY_NAMES`); the rest onto the small functions of :data:`PRELUDE`,
written into the entry as needed, with unittest's meaning and a message naming
the observed and the expected value.
"""

from __future__ import annotations

import ast

# Names a corpus entry's code finds bound when it runs (see child/bootstrap.py).
ENTRY_NAMES = frozenset(
    {"mx", "np", "CheckFailed", "assert_close", "assert_dtype", "assert_shape", "assert_true"}
)

# The functions an entry gets for unittest assertions without a check helper of their own.
PRELUDE = {
    "assert_equal": '''
def assert_equal(first, second, msg=None, what="value"):
    """unittest's assertEqual."""
    if not first == second:
        raise CheckFailed(msg or f"{what}: observed {first!r}, expected {second!r}")
''',
    "assert_not_equal": '''
def assert_not_equal(first, second, msg=None, what="value"):
    """unittest's assertNotEqual."""
    if not first != second:
        raise CheckFailed(msg or f"{what}: observed {first!r}, expected anything else")
''',
    "assert_that": '''
def assert_that(first, second, relation, holds, msg=None, what="value"):
    """unittest's assertIs, assertIn, assertGreater and the like."""
    if not holds:
        raise CheckFailed(msg or f"{what}: expected {first!r} {relation} {second!r}")
''',
    "assert_raises": '''
class assert_raises:
    """unittest's assertRaises and assertRaisesRegex, as a context manager or a call."""

    def __init__(self, expected, *call, pattern=None, msg=None, **kwargs):
        self.expected, self.pattern, self.exception = expected, pattern, None
        if call:
            with self:
                call[0](*call[1:], **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        import re

        name = getattr(self.expected, "__name__", None) or str(self.expected)
        if kind is None:
            raise CheckFailed(f"{name} not raised")
        if not issubclass(kind, self.expected):
            return False
        if self.pattern is not None and not re.search(self.pattern, str(value)):
            raise CheckFailed(f"{name} raised, but {str(value)!r} does not match {self.pattern!r}")
        self.exception = value
        return True
''',
    "fail": '''
def fail(msg=None):
    """unittest's fail."""
    raise CheckFailed(msg or "failed")
''',
    "subtest": '''
class subtest:
    """unittest's subTest: a failure inside names the subtest."""

    def __init__(self, msg=None, **params):
        parts = ([f"[{msg}]"] if msg is not None else []) + [f"({k}={v!r})" for k, v in params.items()]
        self.label = " ".join(parts)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is not None and issubclass(kind, AssertionError):
            raise CheckFailed(f"{self.label}: {value}") from value
        return False
''',
}

EQUAL = {"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual",
         "assertDictEqual", "assertSetEqual", "assertSequenceEqual"}  # fmt: skip
RELATIONS: dict[str, tuple[str, ast.cmpop]] = {
    "assertIs": ("is", ast.Is()),
    "assertIsNot": ("is not", ast.IsNot()),
    "assertIn": ("in", ast.In()),
    "assertNotIn": ("not in", ast.NotIn()),
    "assertGreater": (">", ast.Gt()),
    "assertGreaterEqual": (">=", ast.GtE()),
    "assertLess": ("<", ast.Lt()),
    "assertLessEqual": ("<=", ast.LtE()),
}
