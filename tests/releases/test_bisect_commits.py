"""Commit-level bisects over the fake history of tests/fake_commits.py and the fake releases of
tests/fake_mlx.py: real git, real builds of fake wheels, real environments and runs, offline."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.builds import builder
from mgradcheck.builds.wheels import built
from mgradcheck.cli import cli
from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.loader import load
from mgradcheck.index.installable import Target
from mgradcheck.releases import bisect_commits as bisecting
from mgradcheck.releases.choice import Commit, Release
from mgradcheck.releases.regress import State
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import ResultsStore
from mgradcheck.run.display import Silent
from tests import fake_mlx
from tests.fake_commits import (
    BROKEN_AT,
    FIX,
    REGRESSION,
    FakeHistory,
    ctrl_c_during_a_build,
    make_history,
)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> FakeHistory:
    return make_history(tmp_path_factory.mktemp("history") / "mlx")


TARGET = Target.current("cpu")
R120 = Release(Version("1.2.0"))


def entry() -> Entry:
    (found,) = load([fake_mlx.FIXTURES / "fixed-in-commit.yaml"])
    return found


def settings(wheels: Path, history: FakeHistory, store: ResultsStore) -> Settings:
    return dataclasses.replace(fake_mlx.settings(wheels, store), mlx_repo=history.path)


def short(history: FakeHistory, index: int) -> str:
    return history.shas[index][:9]


def version_of(base: str, sha: str) -> str:
    """The version of a wheel built from ``sha``, as PEP 440 writes it: a hash of digits
    alone is a number there, and loses its leading zeros (+044232294 is +44232294)."""
    return str(Version(f"{base}.dev20260101+{sha[:9]}"))


def command(history: FakeHistory, wheels: Path, *args: str) -> list[str]:
    return [
        *args,
        "--corpus",
        str(fake_mlx.FIXTURES),
        "--no-index",
        "--find-links",
        str(wheels),
        "--backend",
        "cpu",
        "--mlx-repo",
        str(history.path),
    ]


def test_from_the_releases_down_to_the_pull_request(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bisect.json"
    argv = command(
        history, fake_wheels, "bisect", "fixed-in-commit", "--commits", "--json", str(out)
    )
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert "last bad: mlx 1.2.0; first good: mlx 1.3.0" in result.output  # the release bisect
    assert (
        f"first good: {short(history, FIX)} Fix the jvp of where (#104) (1 unknown between)"
        in result.output
    )
    assert f"last bad: {short(history, FIX - 2)} Tidy the docs (#102)" in result.output
    assert "pull request: https://github.com/ml-explore/mlx/pull/104" in result.output
    assert f"commit: https://github.com/ml-explore/mlx/commit/{history.shas[FIX]}" in result.output
    assert "reproduce with: mgradcheck bisect fixed-in-commit --commits --good" in result.output
    data = json.loads(out.read_text())
    assert set(data) == {  # the JSON contract: version 1 holds exactly these
        "schema", "schema_version", "entry", "content_hash", "regress_on", "match", "target",
        "good", "bad", "direction", "commits", "boundary", "changed", "unknown_between",
        "compare", "stopped", "interrupted", "headline", "builds", "build_seconds", "reproduce", "probes",
        "releases", "recorded",
    }  # fmt: skip
    add = f"under bug, add: fixed_by: {{commit: {history.shas[FIX]}, pr: 104}}"
    assert data["recorded"] == f"the entry names no commit; {add}"
    assert add in " ".join(result.output.split())
    assert set(data["probes"][0]) == {"commit", "subject", "state", "outcome", "reason", "mlx",
                                      "how", "built", "build_seconds", "build_steps", "ccache_hits",
                                      "ccache_misses", "cached"}  # fmt: skip
    assert set(data["changed"]) == {"sha", "subject", "author", "date", "pull_request", "url",
                                    "pull_url"}  # fmt: skip
    assert data["schema"] == "mgradcheck-commit-bisect" and data["schema_version"] == 1
    assert data["direction"] == "fix" and data["commits"] == 9
    assert data["changed"]["sha"] == history.shas[FIX] and data["changed"]["pull_request"] == 104
    assert data["unknown_between"] == [history.shas[BROKEN_AT]]
    assert data["releases"]["boundary"] == ["1.2.0", "1.3.0"]
    probes = {p["commit"]: p for p in data["probes"]}
    assert (
        probes[history.shas[0]]["how"] == "release 1.2.0"
        and probes[history.shas[0]]["state"] == "bad"
    )
    assert (
        probes[history.shas[-1]]["how"] == "release 1.3.0"
        and probes[history.shas[-1]]["state"] == "good"
    )
    broken = probes[history.shas[BROKEN_AT]]
    assert broken["state"] == "unknown" and broken["how"] == "does not build"
    assert broken["reason"] == "src/kernels.cpp:3:1: error: expected ';' before '}' token"
    assert probes[history.shas[FIX]]["mlx"] == version_of("1.3.0", history.shas[FIX])
    # Both ends from the releases, then the middle (4), the quarter (2) and the broken one (3).
    assert len(data["probes"]) == 5 and data["builds"] == 3


def test_a_second_bisect_builds_and_runs_nothing(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultsStore(tmp_path / "results")
    where = settings(fake_wheels, history, store)
    good, bad = Commit(history.shas[-1]), Commit(history.shas[0])
    first = bisecting.bisect_commits(entry(), where, good, bad, Silent())
    assert first.changed is not None and first.changed.sha == history.shas[FIX]
    ends = [p for p in first.probes if p.commit.sha in (good.ref, bad.ref)]
    assert [p.how.startswith(("built in", "wheel cached")) for p in ends] == [
        True,
        True,
    ]  # by hash: built

    def nothing(*args: object, **kwargs: object) -> int:
        raise AssertionError("a commit was built, or a stored probe run, again")

    monkeypatch.setattr(builder, "run_logged", nothing)
    monkeypatch.setattr("mgradcheck.envs.venvs.run_logged", nothing)
    second = bisecting.bisect_commits(entry(), where, good, bad, Silent())
    assert second.builds == 0 and second.boundary == first.boundary
    assert all(p.cached or p.how.startswith("does not build") for p in second.probes)


def test_a_regression_between_two_commits(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path
) -> None:
    where = settings(fake_wheels, history, ResultsStore(tmp_path))
    result = bisecting.bisect_commits(
        entry(), where, Commit(history.shas[FIX]), Commit(history.shas[REGRESSION]), Silent()
    )
    assert result.direction == "regression"
    assert result.changed is not None and result.changed.pull_request == 106
    assert result.headline().startswith(
        f"first bad: {short(history, REGRESSION)} Rewrite select (#106)"
    )
    assert [p.commit.sha for p in result.probes] == [history.shas[i] for i in (6, 4, 5)]


def test_ends_that_do_not_disagree_stop_it(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path
) -> None:
    where = settings(fake_wheels, history, ResultsStore(tmp_path))
    both_bad = bisecting.bisect_commits(entry(), where, Commit(history.shas[2]), R120, Silent())
    assert both_bad.boundary is None and both_bad.stopped is not None
    assert both_bad.stopped.startswith(f"commit {short(history, 2)} and mlx 1.2.0 are both bad")
    swapped = bisecting.bisect_commits(entry(), where, R120, Commit(history.shas[FIX]), Silent())
    assert swapped.stopped is not None and "swap them (--good" in swapped.stopped
    unbuilt = bisecting.bisect_commits(
        entry(), where, Commit(history.shas[BROKEN_AT]), R120, Silent()
    )
    assert unbuilt.stopped is not None
    assert unbuilt.stopped.startswith(f"Cannot judge commit {short(history, BROKEN_AT)} (--good)")


def test_at_most_this_many_probes_between_the_ends() -> None:
    assert bisecting.searches_at_most(147) == 8  # 145 commits between two releases
    assert bisecting.searches_at_most(9) == 3
    assert bisecting.searches_at_most(2) == 0


def test_run_and_matrix_take_a_commit(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path
) -> None:
    fix = short(history, FIX)
    ran = CliRunner().invoke(
        cli,
        command(
            history,
            fake_wheels,
            "run",
            "fixed-in-commit",
            "--mlx",
            fix,
            "--json",
            str(tmp_path / "r.json"),
        ),
    )
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert [e["mlx"] for e in report["environments"]] == [version_of("1.3.0", fix)]
    out = tmp_path / "matrix.json"
    argv = command(
        history,
        fake_wheels,
        "matrix",
        "fixed-in-commit",
        "--versions",
        ">=1.1,<1.4",
        "--commit",
        short(history, FIX - 2),
        "--json",
        str(out),
    )
    shown = CliRunner().invoke(cli, argv)
    assert shown.exit_code == 0, shown.output
    data = json.loads(out.read_text())
    before = version_of("1.3.0", history.shas[FIX - 2])
    assert data["releases"] == ["1.1.0", "1.2.0", before, "1.3.0"]  # after the release it follows
    (cells,) = (e["cells"] for e in data["entries"])
    assert cells[before]["state"] == State.BAD.label and cells["1.3.0"]["state"] == "good"


def test_run_takes_a_branch_and_builds_its_tip(
    history: FakeHistory, fake_wheels: Path, tmp_path: Path
) -> None:
    """``run --mlx main``: what a maintainer runs before a release; the tip is built once."""
    tip = short(history, len(history.shas) - 1)
    for _ in range(2):
        out = str(tmp_path / "r.json")
        argv = command(
            history, fake_wheels, "run", "fixed-in-commit", "--mlx", "main", "--json", out
        )
        ran = CliRunner().invoke(cli, argv)
        assert ran.exit_code == 0, ran.output
        report = json.loads((tmp_path / "r.json").read_text())
        (environment,) = report["environments"]
        assert Version(environment["mlx"]).local == Version(f"0+{tip}").local
    # A mistyped version is still said as one, not looked up as a branch.
    typo = CliRunner().invoke(cli, command(history, fake_wheels, "run", "--mlx", "0.32.x"))
    assert typo.exit_code == 2 and "0.32.x" in typo.output and "version" in typo.output


def test_ctrl_c_during_a_build_shows_what_finished(fake_wheels: Path, tmp_path: Path) -> None:
    history = make_history(tmp_path / "mlx")  # its own: no commit of it is built yet
    out = tmp_path / "bisect.json"
    argv = command(history, fake_wheels, "bisect", "fixed-in-commit", "--commits")
    stopped = ctrl_c_during_a_build([*argv, "--json", str(out), "-q"], tmp_path)
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.builder_gone
    assert "interrupted by SIGINT after 2 probes; the same command goes on from there" in (
        stopped.stdout
    )
    data = json.loads(out.read_text())
    assert data["interrupted"] is True and data["boundary"] is None
    assert [p["how"] for p in data["probes"]] == ["release 1.3.0", "release 1.2.0"]
    assert data["releases"]["boundary"] == ["1.2.0", "1.3.0"]
    assert not any(built(TARGET, sha) for sha in history.shas)


def test_the_command_checks_its_input_first(history: FakeHistory, tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        (["bisect", "fixed-in-commit", "--good", "abcdef0"], "give --commits"),
        (
            ["bisect", "fixed-in-commit", "--commits", "--good", "abcdef0"],
            "needs both --good and --bad",
        ),
        (["bisect", "fixed-in-commit", "--commits", "--good", "--x"], "neither an MLX version"),
        (["bisect", "fixed-in-commit", "--mlx-repo", str(tmp_path)], "not a git repository"),
        (["matrix", "--commit", "0.32.0"], "is not a commit hash"),
        (
            [
                "matrix",
                "--commit",
                "abcdef0",
                "--from-report",
                str(fake_mlx.FIXTURES / "fixed-in-commit.yaml"),
            ],
            "cannot go with --from-report",
        ),
        (["run", "--mlx", "v0.1 x"], "not an MLX version"),
    ]
    for argv, message in cases:
        done = runner.invoke(cli, [*argv, "--corpus", str(fake_mlx.FIXTURES)])
        assert done.exit_code == 2, (argv, done.output)
        assert message in done.output, (argv, done.output)


@pytest.mark.build
@pytest.mark.network
def test_a_real_fix_from_the_releases_down_to_its_pull_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """where-jvp-zero-tangent: fixed in 0.32.0, by PR #3633 (checked by hand in the history:
    6335c834c is the only commit between v0.31.2 and v0.32.0 that changes Select::jvp).

    Builds MLX (CPU) from the clone in $MGRADCHECK_MLX_REPO (default: a clone of upstream kept
    in the cache), offline with $MGRADCHECK_MLX_DEPS. It uses the user's cache, where each
    wheel is built once: the first run builds eight commits (15 minutes on two quiet cores,
    bench/README.md), and the search run again builds none.
    """
    import os

    monkeypatch.delenv("MGRADCHECK_CACHE")  # the user's: wheels and environments are kept
    argv = ["bisect", "where-jvp-zero-tangent", "--commits", "--json", str(tmp_path / "b.json")]
    for variable, option in (
        ("MGRADCHECK_MLX_REPO", "--mlx-repo"),
        ("MGRADCHECK_MLX_DEPS", "--mlx-deps"),
    ):
        if os.environ.get(variable):
            argv += [option, os.environ[variable]]
    done = CliRunner().invoke(cli, argv)
    assert done.exit_code == 0, done.output
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["releases"]["boundary"] == ["0.31.2", "0.32.0"]
    assert data["changed"]["pull_request"] == 3633
    assert data["changed"]["sha"].startswith("6335c834c")
    assert data["changed"]["subject"].startswith("Fix JVPs of select, arctan2")
    assert data["boundary"][0]["sha"].startswith("5abdd04bc")  # its parent: still bad
    again = CliRunner().invoke(cli, argv)
    assert again.exit_code == 0, again.output
    repeated = json.loads((tmp_path / "b.json").read_text())
    assert repeated["changed"] == data["changed"]
    assert repeated["builds"] == 0 and all(p["how"] == "wheel cached" or p["how"].startswith("release")
                                           for p in repeated["probes"])  # fmt: skip


def test_a_version_written_as_its_tag_is_the_release() -> None:
    """``v0.32.0`` installs the release, as bisect's ends read it; only a non-version is a ref."""
    from mgradcheck.cli.release_options import release_or_commit, release_or_ref

    for read in (release_or_commit, release_or_ref):
        assert read(None, None, "v0.32.0") == Release(Version("0.32.0"))  # type: ignore[arg-type]
        assert read(None, None, "main") == Commit("main")  # type: ignore[arg-type]
