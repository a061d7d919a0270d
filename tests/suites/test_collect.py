"""Collecting a suite from its source: ids, kinds, roots, source hashes, selection, bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mgradcheck.errors import UsageError
from mgradcheck.suites.collect import SuiteTest, collect, select
from mgradcheck.suites.source import import_root
from tests.conftest import SUITES

BASIC = SUITES / "basic"


def ids(tests: list[SuiteTest]) -> list[str]:
    return [t.id for t in tests]


def test_unittest_methods_functions_and_plain_classes_are_collected() -> None:
    tests = collect([BASIC])
    assert ids(tests) == [
        "test_behaviours.py::TestBehaviours::test_passes",
        "test_behaviours.py::TestBehaviours::test_fails",
        "test_behaviours.py::TestBehaviours::test_errors",
        "test_behaviours.py::TestBehaviours::test_segfaults",
        "test_behaviours.py::TestBehaviours::test_hangs",
        "test_behaviours.py::TestBehaviours::test_skipped",
        "test_behaviours.py::TestBehaviours::test_skips_itself",
        "test_behaviours.py::TestBehaviours::test_expected_failure",
        "test_behaviours.py::TestBehaviours::test_unexpected_success",
        "test_behaviours.py::TestBehaviours::test_subtests",
        "test_behaviours.py::TestBehaviours::test_redefined",
        "test_behaviours.py::TestBehaviours::test_helper_module_ran",
        "test_behaviours.py::TestBrokenFixture::test_never_reached",
        "test_broken_import.py::TestUnreachable::test_one",
        "test_functions.py::test_function_passes",
        "test_functions.py::test_function_fails",
        "test_functions.py::test_uses_a_fixture",
        "test_functions.py::test_parametrized",
        "test_functions.py::test_marked_skip",
        "test_functions.py::test_skips_at_run_time",
        "test_functions.py::test_known_bug",
        "test_functions.py::TestPlain::test_method",
    ]
    kinds = {t.id.split("::")[0]: t.kind for t in tests}
    assert kinds == {
        "test_behaviours.py": "unittest",  # through suite_helpers.HelperCase, beside it
        "test_broken_import.py": "unittest",
        "test_functions.py": "pytest",
    }
    (redefined,) = [t for t in tests if t.name == "test_redefined"]
    assert redefined.line == 59  # the later definition: the one that exists when the module runs
    assert all(t.root == BASIC.resolve() and t.module == t.file.stem for t in tests)


def test_a_package_is_imported_from_above_it() -> None:
    (test,) = collect([SUITES / "package"])
    assert test.id == "pkg/test_in_package.py::TestInPackage::test_relative_import"
    assert test.root == (SUITES / "package").resolve() and test.module == "pkg.test_in_package"
    assert import_root(SUITES / "package" / "pkg" / "helpers.py")[1] == "pkg.helpers"


def test_a_file_and_a_node_id_select_tests() -> None:
    one = collect([f"{BASIC / 'test_behaviours.py'}::TestBehaviours::test_fails"])
    assert ids(one) == ["test_behaviours.py::TestBehaviours::test_fails"]
    plain = collect([f"{BASIC / 'test_functions.py'}::TestPlain"])
    assert ids(plain) == ["test_functions.py::TestPlain::test_method"]


def test_keyword_selection() -> None:
    tests = collect([BASIC])
    assert ids(select(tests, "fails or fixture and not uses")) == [
        "test_behaviours.py::TestBehaviours::test_fails",
        "test_behaviours.py::TestBrokenFixture::test_never_reached",
        "test_functions.py::test_function_fails",
    ]
    assert len(select(tests, "functions")) == 8  # the file name, without .py
    with pytest.raises(UsageError, match="matches none of the 22 tests"):
        select(tests, "nothing_like_this")


def _copy(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(BASIC, suite)
    return suite


def hashes(suite: Path) -> dict[str, str]:
    return {t.id: t.source_hash for t in collect([suite])}


def test_a_test_hash_follows_its_own_source_its_module_and_its_helpers(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    before = hashes(suite)
    assert hashes(_copy(tmp_path / "elsewhere")) == before  # not the path: the source
    path = suite / "test_behaviours.py"
    text = path.read_text()
    path.write_text(
        text.replace("self.assertEqual(double(2), 5)", "self.assertEqual(double(2), 6)")
    )
    after = hashes(suite)
    changed = {i for i in before if before[i] != after[i]}
    assert changed == {"test_behaviours.py::TestBehaviours::test_fails"}
    path.write_text(text.replace("SCALE = 2", "SCALE = 3"))  # module-level code: all its tests
    module = {i for i in before if i.startswith("test_behaviours.py")}
    assert {i for i in before if before[i] != hashes(suite)[i]} == module
    path.write_text(text)
    helper = suite / "suite_helpers.py"
    helper.write_text(helper.read_text().replace("LIMIT = 3", "LIMIT = 4"))
    assert {i for i in before if before[i] != hashes(suite)[i]} == module  # its importers only


@pytest.mark.parametrize(
    ("write", "message"),
    [
        ({"test_bad.py": "def test_x(:\n"}, r"test_bad.py:1: cannot parse"),
        ({"test_none.py": "X = 1\n"}, "no tests collected"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, write: dict[str, str], message: str) -> None:
    for name, text in write.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(UsageError, match=message):
        select(collect([tmp_path]), None)


def test_missing_paths_and_tests(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        collect([tmp_path / "nope"])
    with pytest.raises(UsageError, match="no such test"):
        collect([f"{BASIC / 'test_functions.py'}::test_missing"])


def test_ids_are_relative_to_the_directory_given_and_hashes_to_the_test(tmp_path: Path) -> None:
    for name in ("a", "b"):  # two directories without __init__.py, a test file of one name each
        (tmp_path / name).mkdir()
        (tmp_path / name / "test_x.py").write_text("def test_y():\n    assert True\n")
    tests = collect([tmp_path])
    assert ids(tests) == ["a/test_x.py::test_y", "b/test_x.py::test_y"]
    assert [t.node_id for t in tests] == ["test_x.py::test_y", "test_x.py::test_y"]
    assert tests[0].root != tests[1].root
    (alone,) = collect([tmp_path / "a" / "test_x.py"])
    assert alone.id == "test_x.py::test_y" and alone.source_hash == tests[0].source_hash
