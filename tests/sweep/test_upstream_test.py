"""``report upstream ID --as-test``: an entry as a unittest for MLX's python/tests, run for real.

Written by a real command, then run by ``mgradcheck tests`` (real children): on fake
MLX releases where the fixture's bug lives (it fails) and where it is fixed (it
passes), and under this interpreter's real MLX for a bug fixed before it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from tests.conftest import MINIMAL, write_entry
from tests.fake_mlx import FIXTURES

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def _mgradcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def test_a_fixed_bug_as_a_test_fails_where_it_lives_and_passes_where_fixed(
    fake_wheels: Path, tmp_path: Path
) -> None:
    made = _mgradcheck(
        "report", "upstream", "fixed-in-1-3", "--corpus", str(FIXTURES), "--as-test", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["mlx_tests.py", "test_fixed_in_1_3.py"]
    text = (tmp_path / "out" / "test_fixed_in_1_3.py").read_text()
    assert "import mlx_tests\n" in text and "(mlx_tests.MLXTestCase):" in text
    assert text.rstrip().endswith("mlx_tests.MLXTestRunner()") and "mgradcheck." not in text
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu"]
    live = _mgradcheck("tests", "out", "--mlx", "1.2.0", *source, cwd=tmp_path)
    assert live.returncode == 1, live.stdout + live.stderr
    assert "test_fixed_in_1_3.py::TestFixedIn13::test_fixed_in_1_3" in live.stdout
    assert "broken before 1.3 (this is 1.2.0)" in live.stdout + live.stderr
    assert "1 test: 1 fail" in live.stdout
    fixed = _mgradcheck("tests", "out", "--mlx", "1.3.0", *source, cwd=tmp_path)
    assert fixed.returncode == 0 and "1 test: 1 pass" in fixed.stdout, fixed.stdout + fixed.stderr


def test_a_bug_fixed_before_this_mlx_passes_under_it_and_an_mlx_tests_is_kept(
    tmp_path: Path,
) -> None:
    from mgradcheck.sweep import upstream_test

    pytest.importorskip("mlx.core")
    out = tmp_path / "python-tests"
    out.mkdir()
    (out / "mlx_tests.py").write_text(upstream_test.MLX_TESTS + "\nKEPT = True\n")
    made = _mgradcheck(
        "report", "upstream", "pad-vjp-axes-subset", "--as-test", str(out), cwd=tmp_path
    )
    assert made.returncode == 0 and "mlx_tests.py" not in made.stdout, made.stdout + made.stderr
    assert "KEPT = True" in (out / "mlx_tests.py").read_text()
    ran = _mgradcheck("tests", str(out), cwd=tmp_path)
    assert ran.returncode == 0 and "1 test: 1 pass" in ran.stdout, ran.stdout + ran.stderr
    alone = subprocess.run(
        [sys.executable, "test_pad_vjp_axes_subset.py"], capture_output=True, text=True,
        timeout=120, cwd=out,
    )  # fmt: skip
    assert alone.returncode == 0 and "OK" in alone.stderr, alone.stderr


def test_printed_to_standard_output_and_a_gradcheck_entry_refused_in_one_line(
    tmp_path: Path,
) -> None:
    printed = _mgradcheck("report", "upstream", "pad-vjp-axes-subset", "--as-test", cwd=tmp_path)
    assert printed.returncode == 0 and "class TestPadVjpAxesSubset(" in printed.stdout
    compile(printed.stdout, "test.py", "exec")
    refused = _mgradcheck("report", "upstream", "gradcheck-where-jvp", "--as-test", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "gradcheck-where-jvp is a gradcheck: entry" in refused.stderr


def test_every_code_entry_of_the_corpus_becomes_a_test_that_compiles() -> None:
    from mgradcheck.sweep import upstream_test

    entries = [e for e in load([bundled_corpus()]) if e.code is not None]
    assert len(entries) > 50
    for entry in entries:
        compile(upstream_test.render(entry), upstream_test.file_name(entry), "exec")


def test_multi_line_strings_and_global_names_mean_what_they_meant(tmp_path: Path) -> None:
    """Lines inside a multi-line string keep their indentation, and a name the code's
    functions declare ``global`` stays one inside the test method."""
    pytest.importorskip("mlx.core")
    code = (
        's = """\nline\n  two\n"""\n'
        'assert_true(s == "\\nline\\n  two\\n", f"reindented: {s!r}")\n'
        "total = None\n"
        "def bump():\n"
        "    global total\n"
        "    total = 1 if total is None else total + 1\n"
        "bump()\nbump()\n"
        'assert_true(total == 2, f"total is {total}")\n'
    )
    entry = MINIMAL.format(id="multi-line").replace('  assert_true(True, "ok")\n', "")
    write_entry(tmp_path, "multi-line", entry + textwrap.indent(code, "  "))
    made = _mgradcheck(
        "report", "upstream", "multi-line", "--corpus", str(tmp_path), "--as-test", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    ran = subprocess.run(
        [sys.executable, "test_multi_line.py"], capture_output=True, text=True, timeout=120,
        cwd=tmp_path / "out",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
