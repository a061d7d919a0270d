"""The results store: what an entry did on a release, kept so it never runs twice."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from mgradcheck.outcomes import Outcome
from mgradcheck.releases.store import ProbeKey, ResultsStore, StoredRuns
from mgradcheck.run.observation import Observation
from tests.conftest import environment

KEY = ProbeKey("0123456789abcdef", "0.29.1", "cpu", "linux-x86_64", "5eed0f5eed0f5eed")


def stored(*outcomes: Outcome, key: ProbeKey = KEY, **run: object) -> StoredRuns:
    runs = tuple(Observation(o, 0.25, message="tangent off", **run) for o in outcomes)  # type: ignore[arg-type]
    return StoredRuns(key, "some-entry", runs, environment("0.29.1"))


def test_round_trip(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    assert store.get(KEY) is None
    assert store.put(stored(Outcome.FAIL, Outcome.PASS))
    got = store.get(KEY)
    assert got is not None
    assert [r.outcome for r in got.runs] == [Outcome.FAIL, Outcome.PASS]
    assert got.environment == environment("0.29.1")
    assert got.recorded  # stamped when kept
    data = json.loads(store.path(KEY).read_text())
    assert data["schema"] == "mgradcheck-probe" and data["runs"][0]["outcome"] == "fail"


def test_keys_do_not_collide(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    store.put(stored(Outcome.FAIL))
    for other in (
        dataclasses.replace(KEY, content_hash="fedcba9876543210"),
        dataclasses.replace(KEY, release="0.29.2"),
        dataclasses.replace(KEY, backend="metal"),
        dataclasses.replace(KEY, platform="linux-aarch64"),
        dataclasses.replace(KEY, build="b0117f20b0117f20"),  # a build of the branch, say
    ):
        assert store.get(other) is None


def test_stopped_runs_and_our_own_errors_are_not_kept(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    assert not store.put(stored(Outcome.PASS, Outcome.NOT_RUN))
    assert not store.put(stored(Outcome.ERROR, harness_error=True))
    assert not store.path(KEY).exists()


def test_unreadable_files_count_as_missing(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    store.put(stored(Outcome.FAIL))
    store.path(KEY).write_text("{half a fi")
    assert store.get(KEY) is None
    store.path(KEY).write_text(json.dumps({"schema": "mgradcheck-probe", "schema_version": 99}))
    assert store.get(KEY) is None


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    store.put(stored(Outcome.FAIL))
    store.put(stored(Outcome.PASS))
    assert [p.name for p in store.path(KEY).parent.iterdir()] == [store.path(KEY).name]
    got = store.get(KEY)
    assert got is not None and got.runs[0].outcome is Outcome.PASS
