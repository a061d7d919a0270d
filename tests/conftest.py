from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.loader import load
from mgradcheck.run.observation import Environment

if TYPE_CHECKING:
    from tests.corpus_runs import CorpusRuns

FIXTURES = Path(__file__).parent / "fixtures"
BEHAVIOURS = FIXTURES / "behaviours"
SUITES = FIXTURES / "suites"
# The fixture suites (tests that segfault, hang, fail) are data for `mgradcheck tests`, never ours.
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own cache root unless it sets one itself."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path_factory.mktemp("cache")))


def behaviour(name: str) -> Entry:
    (entry,) = load([BEHAVIOURS / f"{name}.yaml"])
    return entry


def environment(mlx: str | None = "0.32.4", backend: str | None = "cpu", **kw: Any) -> Environment:
    return Environment(
        mlx=mlx,
        backend=backend,
        device=f"Device({backend}, 0)",
        python="3.11.7",
        platform="linux-x86_64",
        float64=kw.pop("float64", True),
        interpreter=kw.pop("interpreter", sys.executable),
        **kw,
    )


def write_entry(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


MINIMAL = """\
id: {id}
title: A minimal entry
summary: Used by the tests.
upstream: {{report: "https://example.invalid/report"}}
bug: {{outcome: fail, match: "the minimal check"}}
code: |
  assert_true(True, "ok")
"""


@pytest.fixture(autouse=True)
def _two_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """-j defaults to the usable cores; the suite runs as on its 2-core CI machine wherever it runs."""
    monkeypatch.setenv("MGRADCHECK_JOBS", "2")


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs inside GitHub Actions must not append the tests' summaries to the job's own."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(scope="session")
def _fake_release_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.fake_mlx import wheel_dir

    root = tmp_path_factory.mktemp("fake-releases")
    wheel_dir(root)
    return root


@pytest.fixture
def fake_wheels(_fake_release_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of tiny fake MLX releases (tests/fake_mlx.py), installable offline.

    uv runs offline with its own cache; the environments built from these
    wheels are shared by the session (a test that needs its own sets
    MGRADCHECK_CACHE itself).
    """
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(_fake_release_root / "uv-cache"))
    monkeypatch.setenv("MGRADCHECK_CACHE", str(_fake_release_root / "cache"))
    return _fake_release_root / "wheels"


CORPUS_RUNS = pytest.StashKey["CorpusRuns"]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the corpus runs the collected corpus tests will wait for, beside the rest."""
    from tests.corpus_runs import CorpusRuns
    from tests.test_corpus import releases_wanted

    releases = releases_wanted(session.items)
    if releases:
        session.config.stash[CORPUS_RUNS] = runs = CorpusRuns(releases)
        runs.start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    runs = session.config.stash.get(CORPUS_RUNS, None)
    if runs is not None:
        runs.stop()


@pytest.fixture(scope="session")
def corpus_runs(request: pytest.FixtureRequest) -> CorpusRuns:
    """The session's corpus runs (tests/corpus_runs.py), started now if collection did not."""
    from tests.corpus_runs import CorpusRuns

    stash = request.config.stash
    if CORPUS_RUNS not in stash:
        stash[CORPUS_RUNS] = CorpusRuns([None])
        stash[CORPUS_RUNS].start()
    return stash[CORPUS_RUNS]


@pytest.fixture(scope="session")
def _real_release_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("real-releases")


@pytest.fixture
def real_cache(_real_release_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One cache for every test that installs real MLX releases: each release is built,
    and its CPU kernels compiled, once per session."""
    monkeypatch.setenv("MGRADCHECK_CACHE", str(_real_release_root))
    return _real_release_root
