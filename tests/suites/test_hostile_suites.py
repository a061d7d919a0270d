"""``mgradcheck tests`` on suites that unittest and pytest take in their stride: real subprocesses.

Ids that two directories share, a file of thousands of tests, odd encodings and
names, a data file beside the tests, a test that closes every descriptor, a
megabyte-sized skip reason, a hostile ``-k``, and ``--emit`` into a directory
that already holds files or is interrupted.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import mgradcheck
from tests.suites.conftest import RANGE

UNITTEST = """\
import unittest


class T(unittest.TestCase):
    def test_a(self):
        {body}
"""


def outcomes(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Each test's outcome, from the JSON report on standard output."""
    return {r["id"]: r["outcome"] for r in json.loads(result.stdout)["results"]}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def one_error_line(result: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mgradcheck: error: "), result.stderr
    for part in parts:
        assert part in lines[0], lines[0]


# --- ids across paths ------------------------------------------------------------------------


def test_a_test_id_two_directories_share_is_kept_apart(tmp_path: Path) -> None:
    write(tmp_path / "pkg_a" / "test_x.py", UNITTEST.format(body="pass"))
    write(tmp_path / "pkg_b" / "test_x.py", UNITTEST.format(body="self.fail('b fails')"))
    for given in (["pkg_a", "pkg_b"], ["pkg_a/test_x.py", "pkg_b/test_x.py"]):
        result = mgradcheck("tests", *given, "-q", "--json", "-", cwd=tmp_path)
        assert result.returncode == 1, result.stderr  # the failing one ran
        assert outcomes(result) == {
            "pkg_a/test_x.py::T::test_a": "pass",
            "pkg_b/test_x.py::T::test_a": "fail",
        }
    listed = mgradcheck(
        "tests", "pkg_a", "pkg_b", "pkg_a/test_x.py", "--collect-only", cwd=tmp_path
    )
    assert listed.stdout.splitlines() == [
        "pkg_a/test_x.py::T::test_a",
        "pkg_b/test_x.py::T::test_a",
    ]
    assert listed.stderr.strip() == "2 tests collected"


# --- collection is linear in the tests of a file -----------------------------------------------


def _collect_cpu(directory: Path, tests: int) -> float:
    """The CPU seconds ``tests --collect-only`` takes over one file of ``tests`` tests."""
    lines = ["import unittest", "", "", "class TestMany(unittest.TestCase):"]
    for i in range(tests):
        lines += [f"    def test_{i}(self):", f"        self.assertEqual({i}, {i})", ""]
    write(directory / f"n{tests}" / "test_many.py", "\n".join(lines))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = mgradcheck("tests", str(directory / f"n{tests}"), "--collect-only", timeout=90)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0 and f"{tests} tests collected" in result.stderr, result.stderr
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def test_collecting_four_times_the_tests_costs_at_most_four_times_as_much(tmp_path: Path) -> None:
    # CPU time, not wall time: another process loading the machine barely changes it. A
    # quadratic collection costs 16 times as much (it did: 1 s for 750 tests, 60 s for 3,000).
    small = min(_collect_cpu(tmp_path / "a", 750), _collect_cpu(tmp_path / "b", 750))
    large = _collect_cpu(tmp_path, 3000)
    assert large < 4 * small, (small, large)


# --- what unittest and pytest take -------------------------------------------------------------


def test_a_pytest_test_under_a_directory_with_a_bracket_runs(tmp_path: Path) -> None:
    suite = tmp_path / "ci[2]" / "suite"
    write(suite / "test_p.py", "def test_p():\n    assert 1 + 1 == 2\n")
    result = mgradcheck("tests", str(suite), "-q", "--json", "-")
    assert result.returncode == 0, result.stderr
    assert outcomes(result) == {"test_p.py::test_p": "pass"}


def test_a_bom_and_a_coding_cookie_are_read_as_python_reads_them(tmp_path: Path) -> None:
    write(tmp_path / "test_bom.py", b"\xef\xbb\xbf" + UNITTEST.format(body="pass").encode())
    latin = "# coding: latin-1\n" + UNITTEST.format(body="self.assertEqual(len('\xe9'), 1)")
    write(tmp_path / "test_latin.py", latin.encode("latin-1"))
    result = mgradcheck("tests", str(tmp_path), "-q", "--json", "-")
    assert result.returncode == 0, result.stderr
    assert outcomes(result) == {
        "test_bom.py::T::test_a": "pass",
        "test_latin.py::T::test_a": "pass",
    }


def test_tests_run_in_the_directory_mgradcheck_runs_in(tmp_path: Path) -> None:
    # As `python -m pytest .` or `python -m unittest` from there: data files by relative path,
    # in a test and at a module's import (pytest's conftest and modules included).
    write(tmp_path / "data.txt", "hi\n")
    body = "self.assertEqual(open('data.txt').read(), DATA)"
    write(tmp_path / "test_u.py", "DATA = open('data.txt').read()\n" + UNITTEST.format(body=body))
    write(tmp_path / "conftest.py", "assert open('data.txt').read() == 'hi\\n'\n")
    write(
        tmp_path / "test_p.py",
        "DATA = open('data.txt').read()\n\n\ndef test_p():\n    assert open('data.txt').read() == DATA\n",
    )
    for per_child in ("1", "2"):
        result = mgradcheck(
            "tests", ".", "-q", "--per-child", per_child, "--json", "-", cwd=tmp_path
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert outcomes(result) == {"test_p.py::test_p": "pass", "test_u.py::T::test_a": "pass"}


def test_a_test_that_closes_every_descriptor_it_did_not_open(tmp_path: Path) -> None:
    body = "import os; os.closerange(3, 256)"
    write(
        tmp_path / "test_fds.py",
        UNITTEST.format(body=body) + "\n    def test_b(self):\n        pass\n",
    )
    for per_child in ("1", "2"):
        result = mgradcheck("tests", str(tmp_path), "-q", "--per-child", per_child, "--json", "-")
        assert result.returncode == 0, result.stdout + result.stderr
        assert outcomes(result) == {
            "test_fds.py::T::test_a": "pass",
            "test_fds.py::T::test_b": "pass",
        }


def test_a_skip_reason_or_subtest_of_17_mib_is_kept_short(tmp_path: Path) -> None:
    text = UNITTEST.format(body="self.skipTest('x' * (17 << 20))")
    text += "\n    def test_b(self):\n        with self.subTest(p='y' * (17 << 20)):\n            self.fail('no')\n"
    write(tmp_path / "test_big.py", text)
    result = mgradcheck("tests", str(tmp_path), "-q", "--per-child", "2", "--json", "-")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)["results"]
    assert [(r["outcome"], r["reason"][:5]) for r in data] == [("skip", "xxxxx"), ("fail", "(p='y")]
    assert len(result.stdout) < 100_000


@pytest.mark.parametrize(
    ("name", "kind", "refused"),
    [
        ("test_a::b.py", "unittest", "'::' in a test file's path"),
        ("test_a[1].py", "pytest", "pytest reads '['"),
        ("test_a[1].py", "unittest", ""),  # runs, as pytest runs it (unittest skips the name)
        ("test_\x1b]0;title\x07.py", "pytest", ""),
    ],
)
def test_odd_file_names_run_or_are_refused_in_one_line(
    tmp_path: Path, name: str, kind: str, refused: str
) -> None:
    text = UNITTEST.format(body="pass") if kind == "unittest" else "def test_a():\n    pass\n"
    write(tmp_path / name, text)
    result = mgradcheck("tests", str(tmp_path), "-q", "--json", "-")
    if refused:
        one_error_line(result, refused, str(tmp_path))
        return
    assert result.returncode == 0, result.stderr
    assert list(outcomes(result).values()) == ["pass"]


# --- -k and --collect-only -------------------------------------------------------------------


def test_a_deeply_nested_k_expression_is_one_line() -> None:
    suite = str(Path(__file__).parents[1] / "fixtures" / "suites" / "basic")
    for expression in ("(" * 500 + "passes" + ")" * 500, "not " * 5000 + "passes"):
        result = mgradcheck("tests", suite, "-k", expression, "--collect-only")
        one_error_line(result, "nest deeper than 100 levels")
    chain = " or ".join(["zz"] * 15_000 + ["test_passes"])  # no nesting: no limit
    result = mgradcheck("tests", suite, "-k", chain, "--collect-only")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "test_behaviours.py::TestBehaviours::test_passes\n"


def test_collect_only_shows_escapes_in_names_escaped(tmp_path: Path) -> None:
    write(tmp_path / "\x1b]0;pwned\x07" / "test_\x1b[31mred.py", UNITTEST.format(body="pass"))
    result = mgradcheck("tests", str(tmp_path), "--collect-only")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "\\x1b]0;pwned\\x07/test_\\x1b[31mred.py::T::test_a\n"
    assert "\x1b" not in result.stderr + result.stdout and "\x07" not in result.stdout


# --- --emit -----------------------------------------------------------------------------------

VERSIONS = """\
import unittest
import time

import mlx.core as mx


def version():
    return tuple(int(part) for part in mx.__version__.split("."))


class TestA(unittest.TestCase):
    def test_foo(self):
        self.assertGreaterEqual(version(), (1, 3, 0))


class TestB(unittest.TestCase):
    def test_foo(self):
        {body}
        self.assertLess(version(), (1, 4, 0))
"""


def emit(suite: Path, out: Path, wheels: Path, *extra: str) -> list[str]:
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu"]
    return [
        "tests",
        str(suite),
        "--matrix",
        "--versions",
        RANGE,
        *source,
        "--emit",
        str(out),
        *extra,
    ]


def test_emit_names_each_test_and_never_replaces_a_file_it_did_not_write(
    tmp_path: Path, fake_wheels: Path
) -> None:
    suite, out = tmp_path / "suite", tmp_path / "out"
    write(suite / "test_flips.py", VERSIONS.format(body="pass"))
    result = mgradcheck(*emit(suite, out, fake_wheels, "-q"))
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["mlx-test-flips-a-foo.yaml", "mlx-test-flips-b-foo.yaml"]
    assert result.stdout.count("wrote ") == 2
    # A draft edited by hand: refused before anything runs, unless --force.
    edited = out / "mlx-test-flips-a-foo.yaml"
    edited.write_text("# mine\n")
    refused = mgradcheck(*emit(suite, out, fake_wheels, "-q"))
    one_error_line(refused, str(edited), "--force")
    assert edited.read_text() == "# mine\n"
    # --force, and TestB's entry no longer reproduces (as an entry it passes everywhere): the
    # file there stays as it was; TestA's is replaced.
    write(
        suite / "test_flips.py",
        VERSIONS.format(body="if __name__ == '__mgradcheck_entry__': return"),
    )
    kept = out / "mlx-test-flips-b-foo.yaml"
    kept.write_text("# mine too\n")
    forced = mgradcheck(*emit(suite, out, fake_wheels, "-q", "--force"))
    assert forced.returncode == 0, forced.stderr
    assert "not harvested: test_flips.py::TestB::test_foo: as an entry it is good" in forced.stdout
    assert kept.read_text() == "# mine too\n"
    assert edited.read_text().startswith("# Emitted by mgradcheck tests --emit")


def test_an_interrupted_harvest_leaves_no_unverified_draft(
    tmp_path: Path, fake_wheels: Path
) -> None:
    suite, out = tmp_path / "suite", tmp_path / "out"
    # As an entry (only there), TestB's test sleeps: the harvest is stopped while it checks it.
    write(
        suite / "test_flips.py",
        VERSIONS.format(body="if __name__ == '__mgradcheck_entry__': time.sleep(60)"),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "mgradcheck", *emit(suite, out, fake_wheels)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert process.stderr is not None
    harvesting = False
    while True:
        line = process.stderr.readline()
        assert line, "mgradcheck exited early"
        harvesting = harvesting or line.startswith("harvest: ")
        if harvesting and line.startswith("  ... test_flips.py::TestB::test_foo"):
            break  # checking TestB's draft now
    try:
        process.wait(timeout=3)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 143, stderr
    left = {p.name: p.read_text() for p in out.iterdir()}
    assert all("\nevidence:" in text for text in left.values()), left  # each one verified
    assert list(left) == ["mlx-test-flips-a-foo.yaml"]
    assert "wrote " in stdout and "interrupted by SIGTERM" in stderr
