"""The JSON report schema is a contract: pin its shape and its round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import json_report
from mgradcheck.run.observation import Observation
from mgradcheck.run.results import SCHEMA_VERSION, EntryResult, Report
from mgradcheck.run.verdict import Judgement
from tests.builders import every_outcome
from tests.conftest import environment

REPORT_KEYS = [
    "schema", "schema_version", "mgradcheck", "started", "finished", "interrupted",
    "environments", "counts", "meta", "results",
]  # fmt: skip
RESULT_KEYS = [
    "id", "title", "path", "tags", "signature", "outcome", "outcomes", "duration",
    "verdict", "reason", "bug_expected", "flaky", "environment", "runs",
]  # fmt: skip
RUN_KEYS = [
    "outcome", "duration", "exit_status", "signal", "exc_type", "message", "traceback",
    "stdout", "stderr", "result_written", "harness_error",
]  # fmt: skip
ENV_KEYS = [
    "mlx",
    "backend",
    "device",
    "python",
    "platform",
    "float64",
    "interpreter",
    "mgradcheck",
    "device_name",
    "device_memory",
    "driver",
    "cuda",
]


def sample() -> Report:
    env = environment()
    runs = (
        Observation(
            Outcome.CRASH,
            0.5,
            exit_status=-11,
            signal="SIGSEGV",
            message="killed by SIGSEGV",
            stderr="Fatal",
        ),
        Observation(Outcome.PASS, 0.25, exit_status=0, result_written=True),
    )
    result = EntryResult(
        id="bitwise", title="t", path="corpus/b.yaml", runs=runs,
        judgement=Judgement(Verdict.AS_EXPECTED, "reproduced 1/2: SIGSEGV", True, True),
        environment=env, tags=("jvp",), signature="crash or fail",
    )  # fmt: skip
    return Report(
        (result,),
        (env,),
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:01+00:00",
        mgradcheck="0.1.0",
    )


def test_schema_shape_is_pinned() -> None:
    data = sample().to_json()
    assert list(data) == REPORT_KEYS
    assert data["schema"] == "mgradcheck-report" and data["schema_version"] == SCHEMA_VERSION == 1
    assert list(data["counts"]) == [v.label for v in Verdict]
    (result,) = data["results"]
    assert list(result) == RESULT_KEYS
    assert list(result["environment"]) == ENV_KEYS
    assert all(list(run) == RUN_KEYS for run in result["runs"])
    assert result["outcome"] == "crash" and result["outcomes"] == "pass 1/2, crash 1/2"


def test_round_trip(tmp_path: Path) -> None:
    report = sample()
    path = tmp_path / "r.json"
    json_report.write(report, path)
    again = json_report.read(path)
    assert again == report
    assert json.loads(path.read_text()) == report.to_json()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ("[]", "not an mgradcheck report"),
        ('{"schema": "other"}', "not an mgradcheck report"),
        ('{"schema": "mgradcheck-report", "schema_version": 99}', "schema version 99 is not 1"),
    ],
)
def test_bad_report_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as info:
        json_report.read(path)
    assert str(path) in str(info.value)


def test_a_suites_test_has_no_verdict_and_counts_by_outcome(tmp_path: Path) -> None:
    report = every_outcome()
    data = report.to_json()
    assert list(data["counts"]) == [o.label for o in Outcome] and not report.judged
    first = data["results"][0]
    assert list(first) == RESULT_KEYS and first["verdict"] is None and first["bug_expected"] is None
    assert report.summary_line().startswith("7 tests: 1 pass, 1 fail")
    path = tmp_path / "r.json"
    json_report.write(report, path)
    assert json_report.read(path) == report
    fail = next(r for r in report.results if r.outcome is Outcome.FAIL)
    assert fail.standing is Outcome.FAIL and fail.reason == "fail"
    with pytest.raises(ValueError, match="not judged"):
        _ = fail.verdict
