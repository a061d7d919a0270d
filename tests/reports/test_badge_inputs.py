"""``badge`` takes the reports of run and tests; another command's JSON is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import mgradcheck


@pytest.mark.parametrize("schema", ["mgradcheck-sweep", "mgradcheck-matrix"])
def test_badge_names_the_reports_it_takes(tmp_path: Path, schema: str) -> None:
    report = tmp_path / "other.json"
    report.write_text(json.dumps({"schema": schema, "schema_version": 1, "findings": []}))
    done = mgradcheck("badge", str(report), "--badge", str(tmp_path / "b.svg"))
    assert done.returncode == 2
    kind = schema.removeprefix("mgradcheck-")
    assert done.stderr.splitlines() == [
        f"mgradcheck: error: {report}: a {kind} report ({schema}), not a run's; this takes the "
        "reports of run and tests (--json), merged or not"
    ]
    assert not (tmp_path / "b.svg").exists()
