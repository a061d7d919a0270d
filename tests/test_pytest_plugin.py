"""``pytest --mgradcheck``: corpus entries as pytest items, in a project that is not this one."""

from __future__ import annotations

import re
import shutil

import pytest

from mgradcheck.corpus import loader
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


def test_entries_are_items_with_stable_node_ids(project: pytest.Pytester) -> None:
    result = run(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "--collect-only", "-q")
    ids = [line for line in result.outlines if line.startswith("mgradcheck::")]
    assert sorted(ids) == sorted(f"mgradcheck::{name}" for name in ONE_EACH)
    assert "test_mine.py::test_mine" in result.outlines
    assert "6 tests collected" in result.stdout.str()


def test_verdicts_become_pytest_outcomes(project: pytest.Pytester) -> None:
    result = run_downstream(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-rA")
    result.assert_outcomes(passed=2, failed=2, xfailed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "PASSED mgradcheck::passes",
            "SKIPPED *needs metal; this run is on cpu",
            "XFAIL mgradcheck::known-crash - known bug reproduced as expected: SIGSEGV",
            "FAILED mgradcheck::fixed-upstream - FIXED: *",
            "FAILED mgradcheck::segfaults - REGRESSED: the bug is back: SIGSEGV*",
        ],
        consecutive=False,
    )


def test_a_crash_report_shows_signal_and_output(project: pytest.Pytester) -> None:
    result = run(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-k", "segfaults")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "*_ mgradcheck::segfaults _*",
            "REGRESSED: the bug is back: SIGSEGV (1/1 runs)",
            "signal: SIGSEGV",
            "exit status: -11",
            "--- stderr (tail) ---",
            "Fatal Python error: Segmentation fault",
        ],
        consecutive=False,
    )


def test_k_selects_by_id_and_tag(project: pytest.Pytester) -> None:
    by_id = run(project, "--mgradcheck", "--mgradcheck-corpus=mlx-corpus", "-k", "known-crash")
    by_id.assert_outcomes(xfailed=1, deselected=5)
    by_tag = run(
        project,
        "--mgradcheck",
        "--mgradcheck-corpus=mlx-corpus",
        "-k",
        "verdicts",
        "--collect-only",
        "-q",
    )
    assert "3/6 tests collected (3 deselected)" in by_tag.stdout.str()


def test_a_bad_corpus_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", broken="id: broken\ntitle: t\n")
    result = run(pytester, "--mgradcheck", "--mgradcheck-corpus=broken.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting mgradcheck*", "broken.yaml:1: missing required key 'summary'"],
        consecutive=False,
    )


def _bundled_ids() -> list[str]:
    try:
        return [e.id for e in loader.load([loader.bundled_corpus()])]
    except CorpusError:
        pytest.skip("the bundled corpus has no entries yet")


def test_the_bundled_corpus_is_collected_in_a_downstream_project(pytester: pytest.Pytester) -> None:
    expected = _bundled_ids()
    assert not (pytester.path / "mgradcheck").exists()
    result = run_downstream(pytester, "--mgradcheck", "--collect-only", "-q")
    assert sorted(line for line in result.outlines if line.startswith("mgradcheck::")) == sorted(
        f"mgradcheck::{i}" for i in expected
    )


@pytest.mark.slow
@pytest.mark.mlx
def test_the_bundled_corpus_runs_in_a_downstream_project(pytester: pytest.Pytester) -> None:
    expected = _bundled_ids()
    result = run_downstream(pytester, "--mgradcheck", timeout=570)
    outcomes = result.parseoutcomes()
    ran = sum(outcomes.get(k, 0) for k in ("passed", "failed", "xfailed", "skipped"))
    assert ran == len(expected) and "errors" not in outcomes, result.stdout.str()


def test_a_single_corpus_file_by_absolute_path(project: pytest.Pytester) -> None:
    corpus = project.path / "mlx-corpus" / "passes.yaml"
    result = run(project, "--mgradcheck", f"--mgradcheck-corpus={corpus}", "-q")
    result.assert_outcomes(passed=2)  # the project's own test, and the entry
