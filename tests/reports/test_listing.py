"""``list``: its JSON, held to the shipped schema, and its text at a width (tests/cli/test_widths.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.reports.listing import render
from mgradcheck.run import stages
from mgradcheck.schemas import load

ENTRIES = stages.load_corpus([])


def listed(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["list", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def test_list_json_holds_the_schemas_keys_and_nothing_else() -> None:
    schema = load("list")
    data = listed("--backend", "cpu", "--json")
    jsonschema.validate(data, schema)
    assert set(data) == set(schema["properties"])
    entry_keys = set(schema["properties"]["entries"]["items"]["properties"])
    assert all(set(e) == entry_keys for e in data["entries"])
    assert [e["id"] for e in data["entries"]] == [e.id for e in ENTRIES]
    by_id = {e["id"]: e for e in data["entries"]}
    for entry in ENTRIES:
        assert by_id[entry.id]["expectation"] == entry.bug.expectation("cpu")
        assert by_id[entry.id]["report"] == entry.upstream.report


def test_list_json_dash_is_the_bare_flag_and_a_file_keeps_the_text(tmp_path: Path) -> None:
    assert listed("--json", "-") == listed("--json")
    out = tmp_path / "list.json"
    result = CliRunner().invoke(cli, ["list", "--json", str(out), "--tag", "jvp"])
    assert result.exit_code == 0, result.output
    ids = [e["id"] for e in json.loads(out.read_text())["entries"]]
    assert ids and all(result.output.count(i) == 1 for i in ids)  # the text as without --json


def test_list_json_for_a_cuda_build_says_what_cuda_expects() -> None:
    cuda, cuda13 = listed("--backend", "cuda", "--json"), listed("--backend", "cuda13", "--json")
    assert cuda13["backend"] == "cuda13" and cuda13["entries"] == cuda["entries"]


def test_a_narrow_listing_puts_the_title_under_its_id() -> None:
    lines = render(ENTRIES[:2], "cpu", 60).splitlines()
    assert lines[0].split()[0] == ENTRIES[0].id and lines[1].startswith("    ")
    wide = render(ENTRIES[:2], "cpu", 200).splitlines()
    assert len(wide) == 2 and wide[0].endswith(ENTRIES[0].title)
