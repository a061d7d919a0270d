"""pytest-style tests as pytest collects them, one test per parameter set: the real CLI on the
venv's interpreter (pytest is installed there), each collection and test in a real child."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.builders import mgradcheck
from tests.conftest import SUITES

PARAMS = SUITES / "params"
FILE = PARAMS / "test_params.py"
PYTEST_IDS = [
    "test_params.py::test_reduce[float32-axis0]",
    "test_params.py::test_reduce[float16-axis1]",
    "test_params.py::test_reduce[bfloat16-axis[-1]]",
    "test_params.py::test_stacked[shape0-1]",
    "test_params.py::test_stacked[shape0-2]",
    "test_params.py::test_plain",
    "test_params.py::TestShapes::test_size[0]",
    "test_params.py::TestShapes::test_size[3]",
]


def results(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    """Each test's outcome and reason, from the JSON report on standard output."""
    data = json.loads(result.stdout)
    return {r["id"]: (r["outcome"], r.get("reason") or "") for r in data["results"]}


def test_collect_only_lists_pytests_ids_one_per_parameter_set() -> None:
    listed = mgradcheck("tests", str(PARAMS), "--collect-only")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == PYTEST_IDS
    assert listed.stderr.strip() == "8 tests collected"


def test_what_pytest_does_not_collect_is_left_out_and_said(tmp_path: Path) -> None:
    """A class marked ``__test__ = False`` and an empty parametrization: pytest's answer, not the
    source's (which sees a test in each)."""
    (tmp_path / "test_l.py").write_text(
        "import pytest\n\n\nclass TestNotCollected:\n    __test__ = False\n\n"
        "    def test_a(self):\n        pass\n\n\n@pytest.mark.parametrize('n', [])\n"
        "def test_empty(n):\n    pass\n"
    )
    listed = mgradcheck("tests", str(tmp_path), "--collect-only")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["test_l.py::test_empty[NOTSET]"]
    assert listed.stderr.splitlines() == [
        "mgradcheck: note: pytest collects nothing of 1 test read from the source "
        "(test_l.py::TestNotCollected::test_a): left out, as pytest leaves it",
        "1 test collected",
    ]


def test_each_parameter_set_has_its_own_outcome_alone_and_in_a_batch() -> None:
    alone = mgradcheck("tests", str(FILE), "-k", "test_reduce", "-j", "2", "-q", "--json", "-")
    assert alone.returncode == 1, alone.stderr
    found = results(alone)
    assert {i: o for i, (o, _) in found.items()} == {
        "test_params.py::test_reduce[float32-axis0]": "pass",
        "test_params.py::test_reduce[float16-axis1]": "fail",
        "test_params.py::test_reduce[bfloat16-axis[-1]]": "pass",
    }
    assert (
        "float16 on axis 1 loses the sum" in found["test_params.py::test_reduce[float16-axis1]"][1]
    )
    # Eight tests in one child: each parameter set still reported as itself, in one session.
    batch = mgradcheck("tests", str(PARAMS), "--per-child", "8", "-j", "1", "-q", "--json", "-")
    assert batch.returncode == 1, batch.stderr
    outcomes = {i: o for i, (o, _) in results(batch).items()}
    assert list(outcomes) == PYTEST_IDS
    assert [i for i, o in outcomes.items() if o != "pass"] == [PYTEST_IDS[1]]


def test_k_and_a_node_id_pick_one_parameter_set_and_its_child_runs_only_that() -> None:
    # A passing set run alone passes: its child ran it, not the set that fails beside it.
    picked = mgradcheck("tests", str(PARAMS), "-k", "bfloat16", "-q", "--json", "-")
    assert picked.returncode == 0, picked.stderr
    assert results(picked) == {"test_params.py::test_reduce[bfloat16-axis[-1]]": ("pass", "")}
    named = mgradcheck("tests", f"{FILE}::test_reduce[float16-axis1]", "--collect-only")
    assert named.returncode == 0, named.stderr
    assert named.stdout.splitlines() == ["test_params.py::test_reduce[float16-axis1]"]
    whole = mgradcheck("tests", f"{FILE}::TestShapes::test_size", "--collect-only")
    assert whole.stdout.splitlines() == PYTEST_IDS[-2:], whole.stderr
    missing = mgradcheck("tests", f"{FILE}::test_reduce[float64]", "--collect-only")
    assert missing.returncode == 2
    assert "pytest collects no such test" in missing.stderr and "Traceback" not in missing.stderr


def test_without_pytest_in_the_target_tests_are_read_from_the_source_and_it_says_so(
    tmp_path: Path,
) -> None:
    """An interpreter whose ``import pytest`` fails: collection says so in one line, and a
    parametrized test is one test again, as the source has it."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pytest.py").write_text("raise ImportError('no pytest in this environment')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), *sys.path])}
    listed = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "tests", str(PARAMS), "--collect-only"],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "test_params.py::test_reduce",
        "test_params.py::test_stacked",
        "test_params.py::test_plain",
        "test_params.py::TestShapes::test_size",
    ]
    notes = [line for line in listed.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and "pytest is not importable by" in notes[0], listed.stderr
    assert "a parametrized test as one test" in notes[0]


def test_a_collecting_child_that_dies_leaves_the_tests_as_read_and_says_so(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 3\n")
    python.chmod(0o755)
    listed = mgradcheck("tests", str(PARAMS), "--python", str(python), "--collect-only")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 4  # test_reduce is one test again
    assert listed.stderr.splitlines()[0] == (
        f"mgradcheck: note: pytest's collection under {PARAMS} ended crash: exit status 3: "
        "pytest-style tests collected from their source, a parametrized test as one test"
    )


def test_release_environments_have_no_pytest_so_tests_are_read_from_the_source() -> None:
    """--mlx runs the tests in a release environment (MLX and NumPy): said in one line, and
    before anything is installed, as --collect-only installs nothing."""
    listed = mgradcheck("tests", str(PARAMS), "--mlx", "0.30.0", "--collect-only")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == "test_params.py::test_reduce"
    notes = [line for line in listed.stderr.splitlines() if "note:" in line]
    assert notes == [
        "mgradcheck: note: release environments hold MLX and NumPy, not pytest (--with pytest "
        "puts it there): pytest-style tests collected from their source, a parametrized test as one test"
    ]


def test_a_pytest_module_that_fails_to_import_keeps_its_tests_and_reports_the_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_broken.py").write_text(
        "import pytest\nimport module_that_does_not_exist\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_f(n):\n    pass\n"
    )
    (tmp_path / "test_fine.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_g(n):\n    pass\n"
    )
    run = mgradcheck("tests", str(tmp_path), "-q", "--json", "-", "--per-child", "4")
    assert run.returncode == 1, run.stderr
    found = results(run)
    assert {i: o for i, (o, _) in found.items()} == {
        "test_broken.py::test_f": "error",
        "test_fine.py::test_g[1]": "pass",
        "test_fine.py::test_g[2]": "pass",
    }
    assert "module_that_does_not_exist" in found["test_broken.py::test_f"][1]
