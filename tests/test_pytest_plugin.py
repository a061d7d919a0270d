"""``pytest --mgradcheck``: corpus files collected as pytest items, in a project that is not this one."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mgradcheck.corpus import files, loader
from mgradcheck.errors import CorpusError
from tests.conftest import BEHAVIOURS, FIXTURES

pytest_plugins = ["pytester"]

VERDICTS = FIXTURES / "verdicts"
ONE_EACH = ("passes", "segfaults", "known-crash", "fixed-upstream", "metal-only")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A downstream project: its own test, and a corpus with one entry of each kind."""
    pytester.makepyfile(test_mine="def test_mine():\n    assert 1 + 1 == 2\n")
    corpus = pytester.path / "mlx-corpus"
    corpus.mkdir()
    for name in ONE_EACH:
        source = BEHAVIOURS / f"{name}.yaml"
        shutil.copy(source if source.exists() else VERDICTS / f"{name}.yaml", corpus)
    return pytester


# Hypothesis's plugin re-imports all of hypothesis in every in-process run; these runs don't need it.
QUICK = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*args, *QUICK)


def run_downstream(pytester: pytest.Pytester, *args: str, timeout: float = 120) -> pytest.RunResult:
    """As a downstream project runs it: a new interpreter, the installed package, its own rootdir."""
    return pytester.runpytest_subprocess(*args, *QUICK, timeout=timeout)


def _without_timing(lines: list[str]) -> list[str]:
    return [re.sub(r" in [\d.]+s", "", line) for line in lines]


def test_without_the_flag_nothing_changes(project: pytest.Pytester) -> None:
    plain = run(project, "--collect-only", "-q", "-p", "no:mgradcheck")
    loaded = run(project, "--collect-only", "-q")
    assert _without_timing(loaded.outlines) == _without_timing(plain.outlines)
    assert "mgradcheck" not in loaded.stdout.str()
    result = run(project)
    result.assert_outcomes(passed=1)


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        ["*--mgradcheck *Run the MLX bug corpus as tests.*", "*--mgradcheck-corpus=PATH*"]
    )


def test_entries_are_items_with_short_node_ids(project: pytest.Pytester) -> None:
    result = run(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "--collect-only", "-q")
    ids = [line for line in result.outlines if line.startswith("mgradcheck::")]
    assert sorted(ids) == sorted(f"mgradcheck::{name}" for name in ONE_EACH)
    assert "test_mine.py::test_mine" in result.outlines
    assert "6 tests collected" in result.stdout.str()


def test_a_node_id_on_the_command_line_runs_that_entry(project: pytest.Pytester) -> None:
    result = run(
        project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-rA",
        "mlx-corpus/known-crash.yaml::known-crash", "mlx-corpus/metal-only.yaml",
    )  # fmt: skip
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["PASSED mgradcheck::known-crash"])


def test_a_short_node_id_on_the_command_line_runs_that_entry(project: pytest.Pytester) -> None:
    args = ("--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-rA")
    result = run(project, *args, "mgradcheck::known-crash", "mgradcheck::metal-only")
    result.assert_outcomes(passed=1, skipped=1)  # the project's own test is not named
    result.stdout.fnmatch_lines(["PASSED mgradcheck::known-crash"])
    unknown = run(project, *args, "mgradcheck::no-such-entry")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*not found: mgradcheck::no-such-entry*"])


def test_progress_is_one_line_of_dots_and_verbose_lists_short_ids(project: pytest.Pytester) -> None:
    """As pytest shows one test file: no line per corpus file, no blank progress lines."""
    args = ("--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-m", "mgradcheck")
    plain = run_downstream(project, *args)
    progress = [line for line in plain.outlines if re.search(r"\[\s*\d+%\]$", line)]
    assert len(progress) == 1 and re.match(r"mgradcheck [.FsE]{5} +\[100%\]$", progress[0])
    verbose = run_downstream(project, *args, "-v")
    verbose.stdout.fnmatch_lines(
        [f"mgradcheck::{name} *" for name in sorted(ONE_EACH)], consecutive=True
    )


def test_items_run_under_pytest_xdist(project: pytest.Pytester) -> None:
    result = run_downstream(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-n", "2")
    result.assert_outcomes(passed=3, failed=2, skipped=1)  # the project's test among them
    result.stdout.fnmatch_lines(["FAILED mgradcheck::segfaults - REGRESSED: *"], consecutive=False)


def test_the_marker_is_registered_and_selects_the_entries(project: pytest.Pytester) -> None:
    markers = run(project, "--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.mgradcheck: an entry of the mgradcheck corpus*"])
    selected = run(
        project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "--strict-markers",
        "-m", "mgradcheck", "--collect-only", "-q",
    )  # fmt: skip
    assert "5/6 tests collected (1 deselected)" in selected.stdout.str()
    assert "test_mine.py::test_mine" not in selected.outlines
    others = run(
        project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-m", "not mgradcheck", "-q",
    )  # fmt: skip
    others.assert_outcomes(passed=1, deselected=5)


def test_verdicts_become_pytest_outcomes(project: pytest.Pytester) -> None:
    result = run_downstream(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-rA")
    result.assert_outcomes(passed=3, failed=2, skipped=1)
    for line in (
        "PASSED mgradcheck::known-crash",
        "PASSED mgradcheck::passes",
        "SKIPPED [[]1] mlx-corpus/metal-only.yaml:1: needs metal; this run is on cpu",
        "FAILED mgradcheck::fixed-upstream - FIXED: *",
        "FAILED mgradcheck::segfaults - REGRESSED: the bug is back: SIG*",
    ):
        result.stdout.fnmatch_lines([line])


def _junit_kinds(path: Path) -> dict[str, tuple[str, str]]:
    """Testcase name -> (what it is: passed, skipped or failed; its bug_expected property)."""
    kinds = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        kind = (
            "failed"
            if tags & {"failure", "error"}
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        kinds[case.get("name", "")] = (kind, props.get("bug_expected") or "?")
    return kinds


def test_pytest_junit_and_run_junit_agree(project: pytest.Pytester) -> None:
    """One convention in both: an entry as the corpus expects passes, a known bug reproducing
    where it lives included, with bug_expected=true; skips skip; the other verdicts fail."""
    pytest_xml, run_xml = project.path / "pytest.xml", project.path / "run.xml"
    run_downstream(
        project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-m", "mgradcheck",
        f"--junitxml={pytest_xml}",
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", "mlx-corpus", "-q",
         "--junit", str(run_xml)],
        cwd=project.path, capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    from_run = _junit_kinds(run_xml)
    assert from_run == _junit_kinds(pytest_xml)
    assert from_run["known-crash"] == ("passed", "true")
    assert from_run["passes"] == ("passed", "false")
    assert {name for name, (kind, _) in from_run.items() if kind == "failed"} == {
        "segfaults", "fixed-upstream"
    }  # fmt: skip


def test_a_bad_corpus_file_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", broken="id: broken\ntitle: t\n")
    result = run(pytester, "--mgradcheck", "--mgradcheck-corpus=broken.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting mgradcheck*",
            "broken.yaml: not a valid corpus file:",
            "broken.yaml:1: missing required key 'summary'",
            "ERROR mgradcheck",
        ],
        consecutive=False,
    )


def _bundled_ids() -> list[str]:
    try:
        return [e.id for e in loader.load([files.bundled_corpus()])]
    except CorpusError:
        pytest.skip("the bundled corpus has no entries yet")


def test_the_bundled_corpus_is_collected_in_a_downstream_project(pytester: pytest.Pytester) -> None:
    expected = _bundled_ids()
    assert not (pytester.path / "mgradcheck").exists()
    result = run_downstream(pytester, "--mgradcheck", "--collect-only", "-q")
    collected = sorted(line for line in result.outlines if "::" in line)
    # The corpus lies in site-packages, outside the project: its ids are short all the same,
    # and pytest accepts them back.
    assert collected == sorted(f"mgradcheck::{i}" for i in expected)
    first = run_downstream(pytester, "--mgradcheck", collected[0], "-q", "--collect-only")
    assert "1 test collected" in first.stdout.str()
    assert first.outlines[0] == collected[0]


@pytest.mark.slow
@pytest.mark.mlx
def test_the_bundled_corpus_runs_in_a_downstream_project(pytester: pytest.Pytester) -> None:
    # Three cheap entries stand for the rest (the whole corpus runs in test_corpus.py):
    # a fixed bug, an open one, and a guard, each judged as expected on any release.
    chosen = ["where-jvp-zero-tangent", "addmm-jvp-alpha-beta", "while-loop-gradient"]
    assert set(chosen) <= set(_bundled_ids())
    result = run_downstream(pytester, "--mgradcheck", "-k", " or ".join(chosen), timeout=300)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == len(chosen), result.stdout.str()
    assert "errors" not in outcomes and "failed" not in outcomes, result.stdout.str()


def test_a_single_corpus_file_by_absolute_path(project: pytest.Pytester) -> None:
    corpus = project.path / "mlx-corpus" / "passes.yaml"
    result = run(project, "--mgradcheck", f"--mgradcheck-corpus={corpus}", "-q")
    result.assert_outcomes(passed=2)  # the project's own test, and the entry
