"""``show``: its JSON, held to the shipped schema; its text at a width is in tests/cli/test_widths.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.paths import last_report
from mgradcheck.reports import json_report
from mgradcheck.run import stages
from mgradcheck.schemas import load
from tests import builders

ENTRY = "compiled-threads-tuple-output"


def test_show_json_holds_the_schemas_keys_for_every_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = load("show")
    entries = stages.load_corpus([])

    # Each `show` reads and checks every file of the corpus, as a user's must; read once here.
    def loaded(*_: Any, only: set[str] | None = None, ids: list[str] | None = None, **__: Any):  # type: ignore[no-untyped-def]
        if ids is not None:
            ids.extend(e.id for e in entries)
        return [e for e in entries if only is None or e.id in only]

    monkeypatch.setattr(stages, "load_corpus", loaded)
    for entry in entries:
        result = CliRunner().invoke(cli, ["show", entry.id, "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        jsonschema.validate(data, schema)
        assert set(data) == set(schema["properties"]), entry.id
        assert (data["id"], data["code"], data["last_run"]) == (entry.id, entry.code, None)


def test_show_json_carries_the_last_recorded_run() -> None:
    json_report.write(builders.report(builders.result(ENTRY, reason="it crashed")), last_report())
    data = json.loads(CliRunner().invoke(cli, ["show", ENTRY, "--json"]).output)
    assert (
        data["last_run"]["reason"] == "it crashed" and data["last_run"]["verdict"] == "as expected"
    )


def test_show_json_to_a_file_and_a_json_flag_before_the_id_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "entry.json"
    result = CliRunner().invoke(cli, ["show", ENTRY, "--json", str(out)])
    assert result.exit_code == 0 and result.output.startswith(f"{ENTRY}: ")
    assert json.loads(out.read_text())["id"] == ENTRY
    # '--json ID' takes ID for the file: then ID is missing, and nothing is written
    refused = CliRunner().invoke(cli, ["show", "--json", ENTRY])
    assert refused.exit_code == 2 and not Path(ENTRY).exists()


def test_show_names_the_commit_that_fixed_the_bug() -> None:
    """From bug.fixed_by, which a finished ``bisect --commits`` gave (see bench/README.md)."""
    text = CliRunner().invoke(cli, ["show", "where-jvp-zero-tangent"]).output
    assert "fixed by commit 6335c834c (pull request #3633):" in text
    data = json.loads(CliRunner().invoke(cli, ["show", "where-jvp-zero-tangent", "--json"]).output)
    sha = "6335c834c24425dae655ee384b63524ed25c4574"
    assert data["fixed_by"] == {
        "commit": sha,
        "pr": 3633,
        "url": f"https://github.com/ml-explore/mlx/commit/{sha}",
    }
    assert data["introduced_by"] is None
