"""-k: pytest's keyword expressions over a test's file, class and name."""

from __future__ import annotations

import pytest

from mgradcheck.errors import UsageError
from mgradcheck.suites.keywords import names, parse

ID = "python/tests/test_autograd.py::TestAutograd::test_sort_grad"


@pytest.mark.parametrize(
    ("expression", "matches"),
    [
        ("sort", True),
        ("SORT_GRAD", True),
        ("test_autograd", True),
        ("test_autograd.py", True),
        ("vmap", False),
        ("not vmap", True),
        ("sort and not grad", False),
        ("(topk or sort) and autograd", True),
        ("topk or sort and vmap", False),
        ("not (topk or vmap)", True),
        ("python", False),  # the directory is not a name
    ],
)
def test_expressions(expression: str, matches: bool) -> None:
    assert parse(expression).matches(names(ID)) is matches


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "the expression is empty"),
        ("sort and", "ends too soon"),
        ("(sort", "a '\\(' is not closed"),
        ("sort grad", "unexpected 'grad'"),
        ("sort $", "unexpected character '\\$'"),
        ("and sort", "unexpected 'and'"),
    ],
)
def test_malformed_expressions_are_usage_errors(expression: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse(expression)
