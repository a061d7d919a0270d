"""Bad input a command reads gives one line and exit 2, never a crash or a traceback.

YAML nested far deeper than any C stack (each a real ``python -m mgradcheck``, since it
crashed the interpreter), malformed reports for ``report merge`` and ``badge``, an absurd
shard, a cache that cannot be written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.conftest import BEHAVIOURS

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
REPORT = {"schema": "mgradcheck-report", "schema_version": 1}

YAML: dict[str, str] = {
    "flow sequences 50,000 deep": "id: " + "[" * 50_000 + "]" * 50_000 + "\n",
    "flow mappings 50,000 deep": "id: " + "{a: " * 50_000 + "1" + "}" * 50_000 + "\n",
    "block sequences 50,000 deep": "- " * 50_000 + "x\n",
}
REPORTS: dict[str, str] = {
    "nested 200,000 deep": "[" * 200_000 + "]" * 200_000,
    "environment null": json.dumps({**REPORT, "results": [{"id": "x", "verdict": "pass", "environment": None}]}),
    "results not a list": json.dumps({**REPORT, "results": "abc"}),
    "a run not an object": json.dumps({**REPORT, "results": [{"id": "x", "verdict": "as expected", "environment": {}, "runs": [1]}]}),
    "environments of lists": json.dumps({**REPORT, "environments": [[]]}),
}  # fmt: skip

Case = Callable[[Path], tuple[list[str], dict[str, str]]]


def _yaml(text: str, command: str) -> Case:
    def make(tmp: Path) -> tuple[list[str], dict[str, str]]:
        (tmp / "deep.yaml").write_text(text)
        args = {"validate": ["validate", "deep.yaml"], "list": ["list", "--corpus", "deep.yaml"],
                "run": ["run", "--corpus", "deep.yaml"]}[command]  # fmt: skip
        return args, {}

    return make


def _report(text: str, command: str) -> Case:
    def make(tmp: Path) -> tuple[list[str], dict[str, str]]:
        (tmp / "bad.json").write_text(text)
        if command == "merge":
            return ["report", "merge", "bad.json", "--json", "out.json"], {}
        return ["badge", "bad.json", "--badge", "out.svg"], {}

    return make


def _cache(tmp: Path) -> tuple[list[str], dict[str, str]]:
    (tmp / "a-file").write_text("")
    run = ["run", "passes", "--corpus", str(BEHAVIOURS)]
    return run, {"MGRADCHECK_CACHE": str(tmp / "a-file" / "cache")}


CASES: dict[str, tuple[Case, str]] = {
    **{f"{c} of YAML {name}": (_yaml(text, c), "deep.yaml:1: nested more than 64 levels")
       for name, text in YAML.items() for c in ("validate", "list", "run")},
    **{f"{c} of a report {name}": (_report(text, c), "bad.json: ")
       for name, text in REPORTS.items() for c in ("merge", "badge")},
    "run --shard 1/99999999999999999999": (
        lambda tmp: (["run", "--shard", "1/99999999999999999999"], {}), "at most 100000 shards"),
    "a cache that cannot be written": (_cache, "$MGRADCHECK_CACHE"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, says = CASES[case]
    args, env = make(tmp_path)
    if "YAML" in case:  # what crashed the interpreter: a real process, as a user would run it
        done = subprocess.run(
            [*MGRADCHECK, *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, **env},
            timeout=120,
            check=False,
        )
        code, stderr = done.returncode, done.stderr
    else:
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(cli, args, env=env)
        code, stderr = result.exit_code, result.output
    assert code == 2, (code, stderr[-2000:])
    assert "Traceback" not in stderr
    errors = [
        line for line in stderr.splitlines() if line.startswith(("Error:", "mgradcheck: error:"))
    ]
    assert len(errors) == 1 and says in errors[0], stderr[-2000:]


@pytest.mark.network
@pytest.mark.parametrize("pyyaml", ["6.0.3", "6.0.4"])
def test_the_depth_limit_is_ours_whichever_pyyaml(pyyaml: str, tmp_path: Path) -> None:
    # 6.0.4's libyaml refuses deep nesting in its own words, before mgradcheck's check sees
    # an event; 6.0.3's does not. Either way the user reads mgradcheck's limit and line.
    uv = Path(sys.executable).with_name("uv")
    site = tmp_path / "site"
    subprocess.run(
        [str(uv), "pip", "install", "--quiet", "--target", str(site), f"pyyaml=={pyyaml}"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    version = subprocess.run(
        [sys.executable, "-c", "import yaml; print(yaml.__version__, yaml.__with_libyaml__)"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert version == [pyyaml, "True"]
    for text in YAML.values():
        (tmp_path / "deep.yaml").write_text(text)
        done = subprocess.run(
            [*MGRADCHECK, "validate", "deep.yaml"],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.strip() == (
            "mgradcheck: error: deep.yaml:1: nested more than 64 levels"
        ), done.stderr[-2000:]
