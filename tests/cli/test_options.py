"""One set of options everywhere: the release group, -j, '-' for stdout, errors, help and grammar."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.cli.options import default_jobs, usable_cores
from mgradcheck.cli.release_options import _RELEASE_KEYS
from mgradcheck.corpus.entry import Bug
from mgradcheck.outcomes import Outcome
from mgradcheck.reports import json_report
from mgradcheck.run import stages
from mgradcheck.wording import count, plural
from tests import builders, fake_mlx
from tests.conftest import BEHAVIOURS, MINIMAL, SUITES, write_entry

RELEASES = str(fake_mlx.FIXTURES)
MGRADCHECK = [sys.executable, "-m", "mgradcheck"]


def mgradcheck(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MGRADCHECK, *args], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def command(*path: str) -> click.Command:
    found: click.Command = cli
    for name in path:
        assert isinstance(found, click.Group)
        found = found.commands[name]
    return found


# Every command that installs MLX releases, with the arguments it needs besides the release options.
INSTALLERS: dict[tuple[str, ...], list[str]] = {
    ("run",): ["--corpus", RELEASES, "--mlx", "1.1.0"],
    ("sweep",): ["--ops", "sin", "--mlx", "1.1.0"],
    ("bisect",): ["fixed-in-1-3", "--corpus", RELEASES],
    ("matrix",): ["--corpus", RELEASES],
    ("envs", "releases"): [],
    ("envs", "path"): ["1.1.0"],
}


def release_params(path: tuple[str, ...]) -> dict[str, tuple[tuple[str, ...], str | None]]:
    params = command(*path).params
    return {
        p.name: (tuple(p.opts), getattr(p, "help", None)) for p in params if p.name in _RELEASE_KEYS
    }


def test_every_command_that_installs_releases_takes_the_same_release_options() -> None:
    reference = release_params(("matrix",))
    assert set(reference) == set(_RELEASE_KEYS)
    for path in INSTALLERS:
        assert release_params(path) == reference, path


@pytest.mark.parametrize("path", INSTALLERS, ids=" ".join)
def test_the_release_options_mean_the_same_to_every_command(
    path: tuple[str, ...], tmp_path: Path
) -> None:
    """The same bad combination is refused by each with the same line, before anything runs."""
    result = CliRunner().invoke(cli, [*path, *INSTALLERS[path], "--no-index"])
    assert result.exit_code == 2, result.output
    assert "without an index, give --find-links DIR to say where the wheels are" in result.output
    empty = tmp_path / "wheels"
    empty.mkdir()
    result = CliRunner().invoke(
        cli,
        [*path, *INSTALLERS[path], "--no-index", "--find-links", str(empty), "--backend", "cuda"],
    )
    assert result.exit_code == 2, result.output
    assert "for cuda on" in result.output and "from no index + wheels in" in result.output


@pytest.mark.parametrize(
    "option", ["--index-url=https://example.invalid/simple", "--pre", "--backend=cpu"]
)
@pytest.mark.parametrize("path", [("run", "--corpus", str(BEHAVIOURS)), ("sweep", "--ops", "sin")])
def test_release_options_without_a_release_are_refused(path: tuple[str, ...], option: str) -> None:
    result = CliRunner().invoke(cli, [*path, option])
    assert result.exit_code == 2
    assert f"{option.split('=')[0]} applies only with --mlx VERSION" in result.output


def test_run_mlx_installs_with_the_release_options(fake_wheels: Path) -> None:
    result = mgradcheck(
        "run", "--corpus", RELEASES, "fixed-in-1-3", "--mlx", "1.3.0", "--no-index",
        "--find-links", str(fake_wheels), "-q", "--json", "-",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(r["id"], r["environment"]["mlx"]) for r in data["results"]] == [
        ("fixed-in-1-3", "1.3.0")
    ]


# --- -j --------------------------------------------------------------------------------------


def test_jobs_default_to_the_usable_cores_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = [p for path in (("run",), ("sweep",), ("matrix",)) for p in command(*path).params
            if p.name == "jobs"]  # fmt: skip
    assert len(jobs) == 3 and len({(p.show_default, str(p.type)) for p in jobs}) == 1  # type: ignore[attr-defined]
    monkeypatch.delenv("MGRADCHECK_JOBS")
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_jobs() == usable_cores() == expected
    monkeypatch.setenv("MGRADCHECK_JOBS", "3")
    assert default_jobs() == 3


@pytest.mark.parametrize("value", ["lots", "0", "100000"])
def test_a_bad_jobs_variable_is_bad_usage(value: str) -> None:
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "passes", MGRADCHECK_JOBS=value)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "mgradcheck: error: Invalid value for -j/--jobs: $MGRADCHECK_JOBS"
    )


# --- '-' is standard output --------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--junit", "--summary", "--badge"])
def test_any_report_option_takes_dash_for_stdout(option: str) -> None:
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "passes", "raises", "-q", option, "-")
    assert result.returncode == 1, result.stderr
    if option == "--json":
        assert [r["id"] for r in json.loads(result.stdout)["results"]] == ["passes", "raises"]
    elif option in ("--junit", "--badge"):
        root = ET.fromstring(result.stdout.removeprefix('<?xml version="1.0" encoding="UTF-8"?>\n'))
        assert root.tag in ("testsuites", "{http://www.w3.org/2000/svg}svg")
    else:
        assert result.stdout.startswith("## mgradcheck")
    # What needs attention and the summary line go to stderr, so the report on stdout stays whole.
    assert "2 entries: 1 REGRESSED, 1 as expected  (mlx" in result.stderr
    assert result.stderr.startswith("REGRESSED raises") and "(mlx" not in result.stdout


def test_two_reports_cannot_share_stdout() -> None:
    result = mgradcheck("run", "--corpus", str(BEHAVIOURS), "passes", "--json", "-", "--junit", "-")
    assert result.returncode == 2
    assert "only one report can go to standard output ('-')" in result.stderr


def test_report_merge_writes_to_stdout_and_says_when_asked_for_nothing(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    json_report.write(builders.every_verdict(), report)
    merged = mgradcheck("report", "merge", str(report), "--json", "-")
    assert merged.returncode == 0, merged.stderr
    assert len(json.loads(merged.stdout)["results"]) == 6
    assert "merged 1 report: 6 entries" in merged.stderr
    nothing = mgradcheck("report", "merge", str(report))
    assert nothing.returncode == 2
    assert nothing.stderr.startswith("mgradcheck: error: nothing to write: give --json, --junit")


def test_badge_names_its_files_as_run_does(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    json_report.write(builders.every_verdict(), report)
    result = mgradcheck("badge", str(report), "--badge", str(tmp_path / "status"))
    assert result.returncode == 0, result.stderr
    assert {p.name for p in tmp_path.iterdir()} == {"r.json", "status.svg", "status.shields.json"}


# --- errors, help, grammar ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (["run", "-j", "0"], "mgradcheck: error: Invalid value for '-j' / '--jobs': 0 is not in"),
        (["bogus"], "mgradcheck: error: No such command 'bogus'."),
        (["run", "--no-such-option"], "mgradcheck: error: No such option '--no-such-option'"),
        (["envs", "path", "-rf"], "mgradcheck: error: No such option '-r'"),
    ],
)
def test_click_errors_read_as_every_other_error(args: list[str], first: str) -> None:
    result = mgradcheck(*args)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(first), lines
    assert lines[1].startswith("mgradcheck: see 'mgradcheck") and lines[1].endswith(" --help'")
    assert "Usage:" not in result.stderr and "Traceback" not in result.stderr


def test_envs_releases_with_nothing_found_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "wheels"
    empty.mkdir()
    result = mgradcheck("envs", "releases", "--no-index", "--find-links", str(empty))
    assert result.returncode == 2
    assert result.stderr.startswith("mgradcheck: error: no MLX release installable for")


def test_the_top_level_help_fits_80_columns_and_cuts_no_sentence() -> None:
    result = subprocess.run(
        [*MGRADCHECK, "--help"], capture_output=True, text=True, check=True,
        env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    listing = result.stdout[result.stdout.index("Commands:") :].splitlines()[1:]
    assert {line.split()[0] for line in listing} == set(cli.commands)
    for line in listing:
        assert len(line) <= 80 and not line.endswith(("...", "e.g.")), line
        assert line.rstrip().endswith("."), line  # each is whole, on one line


def test_counts_read_in_good_grammar(tmp_path: Path) -> None:
    assert [count(n, "entry") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert [plural(2, w) for w in ("report", "run", "match", "emitted entry", "day")] == [
        "reports", "runs", "matches", "emitted entries", "days",
    ]  # fmt: skip
    assert builders.report(builders.result("x")).summary_line() == "1 entry: 1 as expected"
    one = tmp_path / "one"
    one.mkdir()
    (one / "passes.yaml").write_text((BEHAVIOURS / "passes.yaml").read_text())
    assert mgradcheck("validate", str(one)).stdout == "1 entry valid\n"


# --- list ------------------------------------------------------------------------------------


def test_bug_expectation_per_backend() -> None:
    from packaging.version import Version

    metal = Bug((Outcome.FAIL,), affects=("metal",), fixed_in={"metal": Version("0.32.0")})
    assert metal.expectation("cpu") == "not on cpu"
    assert metal.expectation("metal") == "fixed in 0.32.0"
    assert Bug((Outcome.FAIL,), affects=()).expectation("cpu") == "guard"
    assert Bug((Outcome.FAIL,)).expectation("cuda") == "open"
    since = Bug((Outcome.FAIL,), introduced_in={"cpu": Version("0.30.0")})
    assert since.expectation("cpu") == "open since 0.30.0"


@pytest.mark.parametrize("backend", ["cpu", "metal", "cuda"])
def test_list_shows_the_expectation_for_the_backend(backend: str) -> None:
    from mgradcheck.run import stages

    result = mgradcheck("list", "--backend", backend)
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    for entry in stages.load_corpus([]):
        assert entry.bug.expectation(backend) in lines[entry.id]


def test_list_tags_repeat_and_all_must_match(tmp_path: Path) -> None:
    for name, tags in (("one", "[a]"), ("two", "[a, b]")):
        write_entry(tmp_path, name, MINIMAL.format(id=name) + f"tags: {tags}\n")
    both = mgradcheck("list", "--corpus", str(tmp_path), "--tag", "a", "--tag", "b")
    one = mgradcheck("list", "--corpus", str(tmp_path), "--tag", "a")
    assert [line.split()[0] for line in both.stdout.splitlines()] == ["two"]
    assert [line.split()[0] for line in one.stdout.splitlines()] == ["one", "two"]


# --- the note on a first mx.compile kernel build -------------------------------------------------


def test_the_first_kernel_build_is_announced_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mgradcheck.cli.target import note_kernel_build
    from mgradcheck.run.child_process import ChildCommand
    from tests.conftest import environment

    command = ChildCommand(sys.executable, kernels=tmp_path)
    note_kernel_build(command, environment(mlx="0.31.2"), compiles=True)
    assert capsys.readouterr().err.startswith(
        "mgradcheck: note: first mx.compile run on mlx 0.31.2"
    )
    for backend, compiles in (("metal", True), ("cpu", False)):
        note_kernel_build(command, environment(backend=backend), compiles=compiles)
        assert capsys.readouterr().err == ""
    (tmp_path / "mlx" / "0.31.2").mkdir(parents=True)
    (tmp_path / "mlx" / "0.31.2" / "libkernel.so").write_bytes(b"")
    note_kernel_build(command, environment(mlx="0.31.2"), compiles=True)
    assert capsys.readouterr().err == ""


# --- one vocabulary: --corpus, --backend, -j, --timeout, --no-cache ------------------------------


def test_validate_takes_corpus_as_every_command_does_and_paths_still(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for directory, name in ((one, "passes"), (two, "raises")):
        directory.mkdir()
        (directory / f"{name}.yaml").write_text((BEHAVIOURS / f"{name}.yaml").read_text())
    for args in (["--corpus", str(one)], [str(one)]):
        result = CliRunner().invoke(cli, ["validate", *args])
        assert (result.exit_code, result.output) == (0, "1 entry valid\n")
    both = CliRunner().invoke(cli, ["validate", str(one), "--corpus", str(two)])
    assert (both.exit_code, both.output) == (0, "2 entries valid\n")


def test_list_takes_every_backend_the_release_options_take() -> None:
    choices = [
        p.type.choices  # type: ignore[attr-defined]
        for path in (("list",), ("matrix",), ("run",))
        for p in command(*path).params
        if p.name == "backend"
    ]
    assert choices[0] == choices[1] == choices[2] == ("cpu", "cuda", "cuda12", "cuda13", "metal")
    listed = {b: CliRunner().invoke(cli, ["list", "--backend", b]) for b in ("cuda", "cuda13")}
    assert listed["cuda13"].exit_code == 0, listed["cuda13"].output
    assert (
        listed["cuda13"].output == listed["cuda"].output
    )  # every CUDA build is cuda to the corpus


def test_each_jobs_option_says_what_it_runs_at_once_and_bisect_why_it_has_none() -> None:
    helps = {
        path: str(next(getattr(p, "help", "") for p in command(*path).params if p.name == "jobs"))
        for path in (("run",), ("tests",), ("matrix",), ("new",), ("sweep",))
    }
    assert all(h.startswith("How many ") and " at once" in h for h in helps.values()), helps
    assert len(set(helps.values())) == len(helps)
    assert "each one run of one entry" in helps[("run",)]
    assert "releases" in helps[("matrix",)] and "releases" in helps[("new",)]
    assert "--per-child tests" in helps[("tests",)]
    assert "There is no -j" in (command("bisect").help or "")


def test_timeout_means_seconds_per_run_wherever_entries_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dataclasses import replace

    from mgradcheck.releases import bisect_releases as bisect
    from mgradcheck.releases import release_matrix
    from mgradcheck.releases.settings import Settings

    types = {
        path: str(next(p.type for p in command(*path).params if p.name == "timeout"))
        for path in (("run",), ("matrix",), ("bisect",), ("tests",))
    }
    assert len(set(types.values())) == 1, types
    seen: list[Settings] = []

    def capture(entries: object, settings: Settings, *args: object, **kwargs: object) -> None:
        seen.append(settings)
        raise SystemExit(0)

    monkeypatch.setattr(release_matrix, "matrix_of", capture)
    monkeypatch.setattr(bisect, "bisect_entry", lambda e, settings, *a: capture(e, settings))
    for args in (
        ["matrix", "--timeout", "7"],
        ["bisect", "where-jvp-zero-tangent", "--timeout", "7"],
    ):
        assert CliRunner().invoke(cli, args).exit_code == 0
    assert [s.timeout for s in seen] == [7.0, 7.0]
    # Runs under another timeout are stored as those of the entry with that timeout.
    entry = stages.load_corpus([])[0]
    keys = {
        replace(seen[0], timeout=t).key(entry, Version("0.32.0"), "b") for t in (None, 7.0, 8.0)
    }
    assert len(keys) == 3
    refused = CliRunner().invoke(cli, ["matrix", "--from-report", __file__, "--timeout", "7"])
    assert refused.exit_code == 2 and "--timeout is for runs made here" in refused.output


def test_run_entries_on_a_release_honours_the_timeout() -> None:
    from mgradcheck.releases.on_release import run_entries
    from tests.conftest import behaviour

    command_, env = stages.prepare(sys.executable)
    (runs,), interrupted = run_entries(command_, env, [behaviour("hangs")], None, timeout=0.3)
    assert interrupted is None and runs[0].outcome is Outcome.TIMEOUT
    assert runs[0].duration < 2  # the entry's own timeout is 2 s


def test_tests_no_cache_without_matrix_is_refused_saying_why() -> None:
    result = CliRunner().invoke(cli, ["tests", str(SUITES / "basic"), "--no-cache"])
    assert result.exit_code == 2
    assert "--no-cache is used with --matrix only: only a matrix reuses stored results" in (
        result.output
    )
