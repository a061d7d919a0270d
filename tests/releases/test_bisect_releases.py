"""bisect over fake MLX releases (fixed, broken, unknown), and once over real ones (network)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.corpus.entry import Entry
from mgradcheck.corpus.loader import load
from mgradcheck.envs import venvs
from mgradcheck.errors import ReleaseError
from mgradcheck.index.installable import (
    Listing,
    Source,
    Target,
    list_releases,
    select_releases,
)
from mgradcheck.index.pages import wheel_file
from mgradcheck.releases import bisect_releases as bisecting
from mgradcheck.releases import on_release
from mgradcheck.releases.regress import RegressOn, State
from mgradcheck.releases.settings import Settings
from mgradcheck.releases.store import ResultsStore
from mgradcheck.reports.bisect import render
from tests import fake_mlx

V = Version


def entry(name: str) -> Entry:
    (found,) = load([fake_mlx.FIXTURES / f"{name}.yaml"])
    return found


def run(
    name: str,
    wheels: Path,
    store: ResultsStore,
    good: str | None = None,
    bad: str | None = None,
    **kw: object,
) -> bisecting.BisectResult:
    settings = fake_mlx.settings(wheels, store)
    listing = list_releases(settings.source, settings.target)
    the_entry = kw.pop("the_entry", None) or entry(name)
    plan = bisecting.plan(the_entry, listing, V(good) if good else None, V(bad) if bad else None)  # type: ignore[arg-type]
    return bisecting.bisect(the_entry, plan, settings, **kw)  # type: ignore[arg-type]


def states(result: bisecting.BisectResult) -> dict[str, str]:
    return {str(p.version): p.state.label for p in result.probes}


def test_finds_the_fix(fake_wheels: Path, tmp_path: Path) -> None:
    result = run("fixed-in-1-3", fake_wheels, ResultsStore(tmp_path))
    assert result.direction == "fix"
    assert (result.good, result.bad) == (
        V("1.6.0"),
        V("1.2.0"),
    )  # newest, and newest before fixed_in
    assert result.boundary == (V("1.2.0"), V("1.3.0"))
    assert result.headline() == "last bad: mlx 1.2.0; first good: mlx 1.3.0"
    assert result.compare_url == "https://github.com/ml-explore/mlx/compare/v1.2.0...v1.3.0"
    assert result.recorded is None  # agrees with the entry's fixed_in
    assert "mgradcheck bisect fixed-in-1-3 --good 1.3.0 --bad 1.2.0" in result.reproduce
    assert len(result.probes) <= 2 + 2  # both ends, then ceil(log2(5 - 1))
    assert states(result)["1.2.0"] == "bad" and states(result)["1.3.0"] == "good"


def test_finds_the_break_of_a_regression(fake_wheels: Path, tmp_path: Path) -> None:
    result = run("broke-in-1-4", fake_wheels, ResultsStore(tmp_path))
    assert result.direction == "regression"
    assert (result.good, result.bad) == (V("1.3.0"), V("1.6.0"))
    assert result.boundary == (V("1.3.0"), V("1.4.0"))
    assert result.headline() == "last good: mlx 1.3.0; first bad: mlx 1.4.0"
    assert result.to_json()["boundary"] == ["1.3.0", "1.4.0"]


def test_routes_around_a_release_that_cannot_be_installed(
    fake_wheels: Path, tmp_path: Path
) -> None:
    result = run("fixed-in-1-6", fake_wheels, ResultsStore(tmp_path))
    assert result.bad == V("1.4.0")  # the entry's first choice, 1.5.0, cannot be judged
    assert result.boundary == (V("1.4.0"), V("1.6.0"))
    assert result.unknown_between == [V("1.5.0")]
    (broken,) = [p for p in result.probes if p.version == V("1.5.0")]
    assert broken.state is State.UNKNOWN and "installing mlx 1.5.0 failed" in broken.reason
    assert "(1 unknown between)" in result.headline()


def test_routes_around_a_release_whose_run_times_out(fake_wheels: Path, tmp_path: Path) -> None:
    result = run("hangs-on-1-2", fake_wheels, ResultsStore(tmp_path))
    assert result.boundary == (V("1.1.0"), V("1.3.0"))
    (hung,) = [p for p in result.probes if p.version == V("1.2.0")]
    assert hung.state is State.UNKNOWN and hung.outcome == "timeout"


def test_refuses_ends_that_do_not_disagree(fake_wheels: Path, tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    both_bad = run("fixed-in-1-3", fake_wheels, store, good="1.1.0", bad="1.0.0")
    assert both_bad.boundary is None
    assert both_bad.stopped is not None and "are both bad" in both_bad.stopped
    assert len(both_bad.probes) == 2
    swapped = run("fixed-in-1-3", fake_wheels, store, good="1.0.0", bad="1.6.0")
    assert swapped.stopped is not None and "swap them (--good 1.6.0 --bad 1.0.0)" in swapped.stopped
    # What the probes saw and what bad means are two sentences, never one run-on parenthesis.
    meaning = f"Bad means {RegressOn.SIGNATURE.meaning} (--regress-on signature)."
    assert both_bad.stopped.endswith(meaning) and swapped.stopped.endswith(meaning)
    assert "mlx 1.1.0 (--good): bad, " in both_bad.stopped
    unknown = run("fixed-in-1-6", fake_wheels, store, good="1.5.0", bad="1.0.0")
    assert unknown.stopped is not None and unknown.stopped.startswith(
        "Cannot judge mlx 1.5.0 (--good)"
    )


def test_the_report_explains_its_markers(fake_wheels: Path, tmp_path: Path) -> None:
    from rich.console import Console

    result = run("fixed-in-1-3", fake_wheels, ResultsStore(tmp_path))
    console = Console(width=100, record=True)
    render(result.view(), console)
    text = console.export_text()
    assert text.count(" <") == 2  # last bad and first good
    assert "<  the boundary: the last bad and the first good release" in text


def test_a_second_bisect_runs_nothing(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultsStore(tmp_path)
    first = run("broke-in-1-4", fake_wheels, store)
    assert not any(p.cached for p in first.probes)

    def no_environment(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored release was installed or run again")

    monkeypatch.setattr(venvs, "using", no_environment)
    second = run("broke-in-1-4", fake_wheels, store)
    assert all(p.cached for p in second.probes)
    assert second.boundary == first.boundary and states(second) == states(first)


def test_no_cache_runs_again(fake_wheels: Path, tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    run("fixed-in-1-3", fake_wheels, store, good="1.3.0", bad="1.2.0")
    settings = dataclasses.replace(fake_mlx.settings(fake_wheels, store), use_cached=False)
    (again,) = on_release.run_release(V("1.2.0"), [entry("fixed-in-1-3")], settings)
    assert not again.cached and again.runs


def test_says_when_the_corpus_records_another_release(fake_wheels: Path, tmp_path: Path) -> None:
    wrong = entry("fixed-in-1-3")
    wrong = dataclasses.replace(
        wrong, bug=dataclasses.replace(wrong.bug, fixed_in={"cpu": V("1.5.0")})
    )
    result = run(
        "", fake_wheels, ResultsStore(tmp_path), good="1.6.0", bad="1.0.0", the_entry=wrong
    )
    assert result.boundary == (V("1.2.0"), V("1.3.0"))
    assert result.recorded is not None and "records fixed_in 1.5.0 for cpu" in result.recorded


def test_other_meanings_of_bad(fake_wheels: Path, tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    passing = run(
        "fixed-in-1-3", fake_wheels, store, good="1.0.0", bad="1.6.0", regress_on=RegressOn.PASS
    )
    assert passing.boundary == (V("1.2.0"), V("1.3.0")) and passing.direction == "regression"
    matched = run(
        "fixed-in-1-3",
        fake_wheels,
        store,
        good="1.6.0",
        bad="1.0.0",
        regress_on=RegressOn.MATCH,
        pattern=r"this is 1\.[01]\.",
    )
    assert matched.boundary == (V("1.1.0"), V("1.2.0"))
    assert "--regress-on match --match" in matched.reproduce


LINUX_FILES = {
    "mlx": [wheel_file(f"mlx-{v}-py3-none-any.whl") for v in ("0.1.0", "0.2.0", "0.3.0", "0.4.0")],
    "mlx-cpu": [
        wheel_file(f"mlx_cpu-{v}-py3-none-any.whl") for v in ("0.1.0", "0.2.0", "0.3.0", "0.4.0")
    ],
}


def listing() -> Listing:
    return select_releases(
        {k: [w for w in v if w] for k, v in LINUX_FILES.items()}, Target.current("cpu"), Source()
    )


def test_default_ends_follow_the_entry() -> None:
    fixed = entry("fixed-in-1-3")
    versions = [V("1.0.0"), V("1.2.0"), V("1.4.0")]
    newest_first = [V("1.4.0"), V("1.2.0"), V("1.0.0")]
    assert bisecting.default_ends(fixed, versions, "cpu") == (
        newest_first,
        [V("1.2.0"), V("1.0.0")],
    )
    broke = entry("broke-in-1-4")
    assert bisecting.default_ends(broke, versions, "cpu") == (
        [V("1.2.0"), V("1.0.0")],
        newest_first,
    )


def test_plans_check_the_ends_against_the_listing() -> None:
    fixed = entry("fixed-in-1-3")
    the_listing = listing()
    with pytest.raises(ReleaseError, match=r"mlx 9\.0\.0 is not installable"):
        bisecting.plan(fixed, the_listing, good=V("9.0.0"))
    with pytest.raises(ReleaseError, match="two different releases"):
        bisecting.plan(fixed, the_listing, good=V("0.2.0"), bad=V("0.2.0"))
    plan = bisecting.plan(fixed, the_listing, good=V("0.3.0"), bad=V("0.1.0"))
    assert (plan.good, plan.bad) == ((V("0.3.0"),), (V("0.1.0"),)) and plan.direction == "fix"
    assert plan.between(V("0.3.0"), V("0.1.0")) == (V("0.1.0"), V("0.2.0"), V("0.3.0"))


def test_upstream_refs() -> None:
    assert bisecting.tag(V("0.29.1")) == "v0.29.1"
    assert bisecting.tag(V("0.30.0.dev20250101+g1234abcd")) == "1234abcd"


def test_the_command(fake_wheels: Path, tmp_path: Path) -> None:
    out = tmp_path / "bisect.json"
    args = [
        "bisect",
        "fixed-in-1-3",
        "--corpus",
        str(fake_mlx.FIXTURES),
        "--no-index",
        "--find-links",
        str(fake_wheels),
    ]
    result = CliRunner().invoke(cli, [*args, "--backend", "cpu", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "last bad: mlx 1.2.0; first good: mlx 1.3.0" in result.output
    assert "https://github.com/ml-explore/mlx/compare/v1.2.0...v1.3.0" in result.output
    assert (
        "reproduce with: mgradcheck bisect fixed-in-1-3 --good 1.3.0 --bad 1.2.0 --corpus"
        in result.output
    )
    data = json.loads(out.read_text())
    assert data["schema"] == "mgradcheck-bisect" and data["boundary"] == ["1.2.0", "1.3.0"]
    assert {"version", "state", "outcome", "reason", "cached"} <= set(data["probes"][0])
    refused = CliRunner().invoke(cli, [*args, "--good", "1.0.0", "--bad", "1.1.0"])
    assert refused.exit_code == 2 and "are both bad" in refused.output


def test_the_command_checks_its_input_first() -> None:
    runner = CliRunner()
    for bad in (
        ["--good", "--rm"],
        ["--bad", "1.0 ; ls"],
        ["--index-url", "ftp://x"],
        ["--regress-on", "match"],
    ):
        result = runner.invoke(
            cli, ["bisect", "fixed-in-1-3", "--corpus", str(fake_mlx.FIXTURES), *bad]
        )
        assert result.exit_code == 2, (bad, result.output)
    helped = runner.invoke(cli, ["bisect", "--help"])
    for member in RegressOn:
        assert f"{member.label}  " in helped.output and member.meaning[
            :30
        ] in helped.output.replace("\n", " ")


@pytest.mark.network
def test_a_real_bisect_over_two_adjacent_releases(real_cache: Path) -> None:
    """A bundled entry over the two real releases around its recorded fix."""
    from mgradcheck.corpus.files import bundled_corpus

    entries = {e.id: e for e in load([bundled_corpus()])}
    settings = Settings(Target.current(), Source.from_options(), venvs.default_installer())
    the_listing = list_releases(settings.source, settings.target)
    candidate = entries["where-jvp-zero-tangent"]
    fixed = candidate.bug.fixed_in[settings.target.backend]
    assert fixed in the_listing.versions
    before = [v for v in the_listing.versions if v < fixed]
    plan = bisecting.plan(candidate, the_listing, good=fixed, bad=before[-1])
    result = bisecting.bisect(candidate, plan, settings)
    assert result.boundary == (before[-1], fixed), result.stopped
