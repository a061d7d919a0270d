"""A unittest test made self-contained: the code runs as an entry's, its assertions still decide."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from mgradcheck.child import checks
from mgradcheck.suites.inline import NotInlinable, inline
from mgradcheck.suites.source import Source
from tests.conftest import SUITES

MODULE = """\
import math
import unittest

OFFSET = 1


def helper(x):
    return x + OFFSET


def twice(f):
    return lambda x: 2 * f(x)


@twice
def doubled(x):
    return x


class Base(unittest.TestCase):
    def check_positive(self, x):
        self.assertGreater(x, 0, msg=f"{x} is not positive")

    @staticmethod
    def decorated():
        return 1


class TestMapping(Base):
    def setUp(self):
        self.value = 1

    def test_equal(self):
        self.assertEqual(helper(1), 2)

    def test_equal_bad(self):
        self.assertEqual(helper(1), 3)

    def test_almost(self):
        self.assertAlmostEqual(math.pi, 3.14159, places=5)

    def test_almost_bad(self):
        self.assertAlmostEqual(math.pi, 3.14, places=5)

    def test_delta_bad(self):
        self.assertAlmostEqual(1.0, 1.5, delta=0.1)

    def test_true_false(self):
        self.assertTrue(1)
        self.assertFalse(0)

    def test_false_bad(self):
        self.assertFalse([1], "a list is true")

    def test_raises(self):
        with self.assertRaises(ValueError):
            int("x")
        self.assertRaises(ZeroDivisionError, lambda: 1 / 0)
        with self.assertRaisesRegex(ValueError, "invalid literal"):
            int("x")

    def test_raises_bad(self):
        with self.assertRaises(ValueError):
            int("1")

    def test_regex_bad(self):
        with self.assertRaisesRegex(ValueError, "nothing like it"):
            int("x")

    def test_relations(self):
        self.assertIn(2, [1, 2])
        self.assertIsNone(None)
        self.assertIsInstance(1, int)
        self.assertLessEqual(1, 1)
        self.assertIsNot(1, None)
        self.assertNotEqual(1, 2)

    def test_in_bad(self):
        self.assertIn(3, [1, 2])

    def test_helper_method(self):
        self.check_positive(helper(0))

    def test_helper_method_bad(self):
        self.check_positive(helper(-5))

    def test_subtest_bad(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)

    def test_nonlocal(self):
        count = 0

        def bump():
            nonlocal count
            count += 1

        bump()
        self.assertEqual(count, 1)

    def test_decorators_kept(self):
        @twice
        def inner(x):
            return x + 1

        self.assertEqual(inner(1), 4)
        self.assertEqual(doubled(1), 2)

    def test_returns_early(self):
        if OFFSET:
            return
        self.fail("not reached")

    def test_fail_bad(self):
        self.fail("told to fail")

    def test_attribute(self):
        self.assertEqual(self.value, 1)

    def test_decorated_helper(self):
        self.assertEqual(self.decorated(), 1)

    def test_unknown_name(self):
        self.assertTrue(undefined_name)

    def test_skip(self):
        self.skipTest("no")
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Source:
    path = tmp_path_factory.mktemp("suite") / "test_mapping.py"
    path.write_text(MODULE)
    return Source.parse(path)


def run(code: str) -> None:
    """Run entry code as the child does: the check helpers bound, nothing else."""
    scope: dict[str, Any] = {name: getattr(checks, name) for name in checks.__all__}
    exec(compile(code, "<entry>", "exec"), scope)


@pytest.mark.parametrize(
    "name",
    ["test_equal", "test_almost", "test_true_false", "test_raises", "test_relations",
     "test_helper_method", "test_nonlocal", "test_returns_early", "test_decorators_kept"],
)  # fmt: skip
def test_a_passing_test_passes_as_an_entry(module: Source, name: str) -> None:
    run(inline(module, "TestMapping", name).code)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("test_equal_bad", "helper(1): observed 2, expected 3"),
        ("test_almost_bad", "math.pi: observed 3.141592653589793, expected 3.14"),
        ("test_delta_bad", "observed 1.0, expected 1.5"),
        ("test_false_bad", "a list is true"),
        ("test_raises_bad", "ValueError not raised"),
        ("test_regex_bad", "does not match 'nothing like it'"),
        ("test_in_bad", "3: expected 3 in [1, 2]"),
        ("test_helper_method_bad", "-4 is not positive"),
        ("test_subtest_bad", "(i=2): i: expected 2 < 2"),
        ("test_fail_bad", "told to fail"),
    ],
)
def test_a_failing_test_fails_its_check_saying_what_it_saw(
    module: Source, name: str, message: str
) -> None:
    with pytest.raises(checks.CheckFailed) as info:
        run(inline(module, "TestMapping", name).code)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("test_attribute", "uses self.value, which is not a method call"),
        ("test_decorated_helper", "self.decorated is decorated (staticmethod)"),
        ("test_unknown_name", "'undefined_name' is not defined in test_mapping.py"),
        ("test_skip", "self.skipTest has no mapping"),
        ("test_missing", "TestMapping.test_missing is not defined"),
    ],
)
def test_what_cannot_be_made_self_contained_says_why(
    module: Source, name: str, reason: str
) -> None:
    with pytest.raises(NotInlinable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        inline(module, "TestMapping", name)


def test_only_what_is_used_is_pulled_in(module: Source) -> None:
    code = inline(module, "TestMapping", "test_helper_method").code
    assert "def check_positive(x):" in code and "def helper(x):" in code and "OFFSET = 1" in code
    assert "import math" not in code and "assert_raises" not in code and "self" not in code
    assert "def test_nonlocal():" in inline(module, "TestMapping", "test_nonlocal").code


def test_helpers_beside_the_test_are_inlined_and_comments_kept() -> None:
    source = Source.parse(SUITES / "basic" / "test_behaviours.py")
    inlined = inline(source, "TestBehaviours", "test_passes")
    assert inlined.comment == "double() doubles, and its result is small"
    assert "# double() doubles" in inlined.code
    assert "def assertSmall(value):" in inlined.code  # from suite_helpers.HelperCase
    assert "LIMIT = 3" in inlined.code and "SCALE = 2" in inlined.code
    assert "import suite_helpers" not in inlined.code
    run(inlined.code)
    with pytest.raises(NotInlinable, match="uses the helper module suite_helpers directly"):
        inline(source, "TestBehaviours", "test_redefined")


def test_a_function_is_not_harvested(tmp_path: Path) -> None:
    path = tmp_path / "test_f.py"
    path.write_text(textwrap.dedent("def test_f():\n    assert True\n"))
    with pytest.raises(NotInlinable, match="only those are harvested"):
        inline(Source.parse(path), None, "test_f")
