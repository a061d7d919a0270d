"""Merging reports of many jobs: shards, backends, releases; refusing what cannot be merged."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import joined, json_report
from mgradcheck.run.results import SCHEMA_VERSION
from tests.builders import report, result, suite_result
from tests.conftest import BEHAVIOURS, environment

CPU, CUDA = environment(backend="cpu"), environment(mlx="0.31.1", backend="cuda")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mgradcheck.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_merge_keeps_every_result_and_its_environment() -> None:
    a = report(result("x", env=CPU), result("y", Verdict.REGRESSED, env=CPU), shard="1/2")
    b = report(result("x", Verdict.FIXED, env=CUDA), interrupted=True, shard="1/1")
    merged = joined.merge([a, b], ["cpu.json", "cuda.json"])
    assert [(r.id, r.environment.backend) for r in merged.results] == [
        ("x", "cpu"),
        ("y", "cpu"),
        ("x", "cuda"),
    ]
    assert merged.environments == (CPU, CUDA)
    assert merged.interrupted
    assert merged.tally() == {Verdict.AS_EXPECTED: 1, Verdict.REGRESSED: 1, Verdict.FIXED: 1}
    assert [s["name"] for s in merged.meta["sources"]] == ["cpu.json", "cuda.json"]
    assert merged.meta["sources"][0]["shard"] == "1/2"


def test_merged_times_span_the_jobs() -> None:
    a = report(result("x"))
    b = report(result("y"))
    b = type(b)(b.results, b.environments, "2025-12-31T00:00:00+00:00", "2026-01-02T00:00:00+00:00")
    merged = joined.merge([a, b])
    assert (merged.started, merged.finished) == (b.started, b.finished)


def test_the_same_entry_twice_in_one_environment_is_refused() -> None:
    a, b = report(result("x", env=CPU)), report(result("x", env=CPU))
    with pytest.raises(
        ValueError, match=r"entry 'x' on mlx 0\.32\.4 cpu .* is in both a\.json and b\.json"
    ):
        joined.merge([a, b], ["a.json", "b.json"])


def test_mixed_schema_versions_are_refused(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    json_report.write(report(result("x")), old)
    data = json.loads(old.read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    new.write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match="cannot merge reports of different schema versions"
    ) as err:
        joined.read([old, new])
    assert str(old) in str(err.value) and str(new) in str(err.value)


def test_a_newer_schema_alone_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "future.json"
    json_report.write(report(result("x")), path)
    data = json.loads(path.read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"{path}: report schema version {SCHEMA_VERSION + 1}"):
        joined.read([path])


def test_missing_shards_are_named() -> None:
    reports = [
        report(result("a"), shard="1/3"),
        report(result("b"), shard="3/3"),
        report(result("c")),
    ]
    (missing,) = joined.missing_shards(reports)
    assert missing.endswith(": 2/3") and "cpu" in missing


@pytest.fixture(scope="module")
def shard_reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two real CPU shards, and the same pair as a CUDA job on another release would report them."""
    out = tmp_path_factory.mktemp("shards")
    paths: list[Path] = []
    for k in (1, 2):
        path = out / f"cpu-{k}.json"
        run = run_cli(
            "run", "--corpus", str(BEHAVIOURS), "passes", "fails-check", "raises", "-q",
            "--shard", f"{k}/2", "--json", str(path),
        )  # fmt: skip
        assert run.returncode in (0, 1), run.stderr
        paths.append(path)
    for k, cpu in enumerate(list(paths), start=1):
        data = json.loads(cpu.read_text())
        for env in [*data["environments"], *(r["environment"] for r in data["results"])]:
            env.update(backend="cuda", mlx="0.31.1", device="Device(gpu, 0)")
        cuda = out / f"cuda-{k}.json"
        cuda.write_text(json.dumps(data))
        paths.append(cuda)
    return paths


def test_cli_merges_shards_and_backends_into_one_badge(
    shard_reports: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    out.mkdir()
    run = run_cli(
        "report", "merge", *map(str, shard_reports), "--json", str(out / "m.json"),
        "--junit", str(out / "m.xml"), "--summary", str(out / "m.md"), "--badge", str(out / "badge.svg"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "merged 4 reports: 6 entries: 4 REGRESSED, 2 as expected" in run.stdout
    assert "warning" not in run.stderr
    merged = json_report.read(out / "m.json")
    assert sorted((r.environment.backend, r.id) for r in merged.results) == sorted(
        (b, i) for b in ("cpu", "cuda") for i in ("passes", "fails-check", "raises")
    )
    assert {e.backend for e in merged.environments} == {"cpu", "cuda"}
    suites = ET.parse(out / "m.xml").getroot().findall("testsuite")
    assert sorted(s.get("tests", "") for s in suites) == ["3", "3"]
    assert "6 entries: 4 REGRESSED, 2 as expected" in (out / "m.md").read_text()
    endpoint = json.loads((out / "badge.shields.json").read_text())
    assert endpoint["label"] == "mlx 0.31.1, 0.32.4 (cpu+cuda)"
    assert endpoint["message"] == "2/6 as expected, 4 REGRESSED"
    svg = ET.parse(out / "badge.svg").getroot()
    assert svg.get("aria-label") == "mlx 0.31.1, 0.32.4 (cpu+cuda): 2/6 as expected, 4 REGRESSED"


def test_cli_badge_from_reports(shard_reports: list[Path], tmp_path: Path) -> None:
    """``badge --badge b`` names its files as ``run --badge b`` does: b.svg, and b.shields.json beside it."""
    svg, endpoint = tmp_path / "b.svg", tmp_path / "b.shields.json"
    run = run_cli("badge", *map(str, shard_reports[:2]), "--badge", str(tmp_path / "b"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "mlx 0.32.4 (cpu): 1/3 as expected, 2 REGRESSED"
    assert ET.parse(svg).getroot().get("role") == "img"
    assert json.loads(endpoint.read_text())["color"]


def test_cli_refuses_a_missing_shard_unless_allowed(
    shard_reports: list[Path], tmp_path: Path
) -> None:
    merged = tmp_path / "m.json"
    run = run_cli("report", "merge", str(shard_reports[0]), "--json", str(merged))
    assert run.returncode == 2 and not merged.exists()
    (line,) = run.stderr.splitlines()
    assert line.startswith("mgradcheck: error: no report for shard mlx 0.32.4 cpu")
    assert "2/2" in line and "--allow-missing" in line
    run = run_cli(
        "report", "merge", str(shard_reports[0]), "--json", str(merged), "--allow-missing"
    )
    assert run.returncode == 0
    assert "warning: no report for shard mlx 0.32.4 cpu" in run.stderr and "2/2" in run.stderr
    assert json_report.read(merged).meta["missing_shards"][0].endswith(": 2/2")


def test_cli_merged_shards_equal_the_unsharded_run(
    shard_reports: list[Path], tmp_path: Path
) -> None:
    whole, merged = tmp_path / "whole.json", tmp_path / "m.json"
    run = run_cli(
        "run", "--corpus", str(BEHAVIOURS), "passes", "fails-check", "raises", "-q",
        "--json", str(whole),
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stderr
    run = run_cli("report", "merge", *map(str, shard_reports[:2]), "--json", str(merged))
    assert run.returncode == 0, run.stderr

    def results(path: Path) -> list[tuple[str, str, str, str]]:
        return [(r.id, r.outcome_text, r.verdict.label, r.reason)
                for r in json_report.read(path).results]  # fmt: skip

    assert results(merged) == results(whole)  # the same results, in the same order


def test_a_shard_given_twice_is_refused_naming_both_files() -> None:
    one = report(result("a"), shard="1/2", selection={"fingerprint": "f1"})
    again = report(result("b"), shard="1/2", selection={"fingerprint": "f1"})
    with pytest.raises(
        ValueError, match=r"^shard 1/2 of mlx 0\.32\.4 cpu .* is in both a\.json and b\.json$"
    ):
        joined.merge([one, again], ["a.json", "b.json"])


def test_shards_of_different_selections_are_refused() -> None:
    one = report(result("a"), shard="1/2", selection={"fingerprint": "f1"})
    other = report(result("b"), shard="2/2", selection={"fingerprint": "f2"})
    with pytest.raises(
        ValueError, match=r"^a\.json and b\.json are shards of different selections"
    ):
        joined.merge([one, other], ["a.json", "b.json"])
    # Another environment's shards are another run: their split is their own.
    cuda = report(result("b", env=CUDA), shard="1/1", selection={"fingerprint": "f2"})
    assert len(joined.merge([one, cuda]).results) == 2


def test_cli_refuses_shards_of_different_selections_in_one_line(
    shard_reports: list[Path], tmp_path: Path
) -> None:
    other = tmp_path / "other-2.json"
    run = run_cli(
        "run", "--corpus", str(BEHAVIOURS), "passes", "fails-check", "-q",
        "--shard", "2/2", "--json", str(other),
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stderr
    run = run_cli("report", "merge", str(shard_reports[0]), str(other), "--json", "-")
    assert run.returncode == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert "are shards of different selections" in line
    assert str(shard_reports[0]) in line and str(other) in line


def test_cli_refuses_mixed_versions_plainly(shard_reports: list[Path], tmp_path: Path) -> None:
    future = tmp_path / "future.json"
    data = json.loads(shard_reports[0].read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    future.write_text(json.dumps(data))
    run = run_cli(
        "report", "merge", str(shard_reports[1]), str(future), "--json", str(tmp_path / "m.json")
    )
    assert run.returncode == 2
    assert "cannot merge reports of different schema versions" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "m.json").exists()


def test_cli_refuses_a_file_given_twice(shard_reports: list[Path]) -> None:
    run = run_cli("report", "merge", str(shard_reports[0]), str(shard_reports[0]))
    assert run.returncode == 2 and "is in both" in run.stderr


def test_a_corpus_report_and_a_suites_report_are_not_merged() -> None:
    tests = report(suite_result("t.py::test_a", Outcome.PASS))
    with pytest.raises(ValueError, match="one counts verdicts, the other outcomes"):
        joined.merge([report(result("a")), tests])
    both = joined.merge([tests, report(suite_result("t.py::test_b", Outcome.FAIL))])
    assert both.summary_line() == "2 tests: 1 pass, 1 fail"
