"""The bundled corpus against real MLX: each entry's outcome is the one its YAML claims.

The first test runs on the MLX installed with mgradcheck; the network tests
install real releases from the package index into cached environments and run
the whole corpus there: the three releases the corpus is held to (before the
fixes of 0.32.0, the first with them, and the newest when the corpus was last
widened), and whatever release is the newest today. The runs start with the
session and go on beside the other tests (tests/corpus_runs.py).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.run.verdict import bug_expected
from tests.conftest import environment
from tests.corpus_runs import CorpusRuns, Finished

# The newest Linux release before the fixes of ml-explore/mlx#3633 (0.32.0).
BEFORE_THE_FIXES = "0.31.2"
# `mgradcheck run` must exit 0 on each: before the 0.32.0 fixes, the release that
# made them, and the newest release when the corpus was last widened.
HELD_TO = (BEFORE_THE_FIXES, "0.32.0", "0.32.4")


def judged(run: Finished) -> dict[str, Any]:
    """The report of a corpus run, which must have judged every entry as expected."""
    assert run.report.exists(), run.stderr
    report: dict[str, Any] = json.loads(run.report.read_text())
    unexpected = [
        f"{r['id']}: {r['outcomes']} -> {r['verdict']} ({r['reason']})"
        for r in report["results"]
        if r["verdict"] != "as expected" and not _before_its_release(r)
    ]
    assert not unexpected, "\n".join(unexpected)
    assert run.returncode == 0, run.stderr
    return report


def _before_its_release(result: dict[str, Any]) -> bool:
    """An entry skipped for the release, whose function it does not have (``requires``)."""
    return result["verdict"] == "skipped" and str(result["reason"]).startswith("needs mlx ")


def releases_wanted(items: Sequence[pytest.Item]) -> list[str | None]:
    """The corpus runs the collected ``items`` will wait for (None: the installed MLX's, which
    every corpus test compares with); a release that is the installed one reuses its run."""
    names = {item.name for item in items if item.path.name == Path(__file__).name}
    if not names or importlib.util.find_spec("mlx") is None:
        return []
    installed = Version(importlib.metadata.version("mlx"))
    held = [f"test_bundled_corpus_on_the_releases_it_is_held_to[{r}]" for r in HELD_TO]
    return [None] + [
        release
        for release, name in zip(HELD_TO, held, strict=True)
        if name in names and Version(release) != installed
    ]


def check_claims(report: dict[str, Any]) -> None:
    """Each entry expected to reproduce here shows its signature; the others pass."""
    entries = {e.id: e for e in load([bundled_corpus()])}
    assert {r["id"] for r in report["results"]} == set(entries)
    for result in report["results"]:
        if _before_its_release(result):
            continue
        entry = entries[result["id"]]
        env = environment(result["environment"]["mlx"], result["environment"]["backend"])
        outcomes = {run["outcome"] for run in result["runs"]}
        if bug_expected(entry.bug, env):
            signature = {o.label for o in entry.bug.outcomes}
            assert outcomes & signature, (entry.id, outcomes, signature)
        else:
            assert outcomes == {"pass"}, (entry.id, outcomes)


@pytest.fixture(scope="session")
def installed_run(corpus_runs: CorpusRuns) -> dict[str, Any]:
    """The bundled corpus on the MLX installed with mgradcheck, run once per session."""
    return judged(corpus_runs.result(None))


def run_release(
    release: str, installed_run: dict[str, Any], corpus_runs: CorpusRuns
) -> dict[str, Any]:
    """The corpus under a real release: the installed MLX's run when it is that release, else
    its run started with the session, else one run now (the newest, known only here)."""
    (installed,) = installed_run["environments"]
    if Version(installed["mlx"]) == Version(release):
        report = installed_run
    elif release in corpus_runs.releases:
        report = judged(corpus_runs.result(release))
    else:
        now = CorpusRuns([release], jobs=2)
        now.start()
        try:
            report = judged(now.result(release))
        finally:
            now.stop()
    check_claims(report)
    assert {e["mlx"] for e in report["environments"]} == {release}
    return report


@pytest.mark.mlx
@pytest.mark.slow
def test_bundled_corpus_on_the_installed_mlx(installed_run: dict[str, Any]) -> None:
    check_claims(installed_run)


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("release", HELD_TO)
def test_bundled_corpus_on_the_releases_it_is_held_to(
    release: str, installed_run: dict[str, Any], corpus_runs: CorpusRuns
) -> None:
    report = run_release(release, installed_run, corpus_runs)
    if release == BEFORE_THE_FIXES:
        # Before the fixes most bugs reproduce: this run must see them, not only passes.
        reproduced = [r["id"] for r in report["results"] if r["bug_expected"]]
        assert len(reproduced) >= 20, reproduced


@pytest.mark.network
@pytest.mark.slow
def test_bundled_corpus_on_the_newest_release(
    installed_run: dict[str, Any], corpus_runs: CorpusRuns
) -> None:
    from mgradcheck.index.installable import Source, Target, list_releases

    newest = list_releases(Source.from_options(), Target.current()).versions[-1]
    assert newest >= Version(HELD_TO[-1])
    run_release(str(newest), installed_run, corpus_runs)
