"""[tool.mgradcheck] in the nearest pyproject.toml: defaults the command line overrides; a bad
key or value is one line naming the file, the line and the key, exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.cli.config import defaults
from tests.conftest import BEHAVIOURS

TABLE = """\
[project]
name = "uses-mgradcheck"
dependencies = ["mgradcheck"]

[tool.mgradcheck]
corpus = "bugs"
jobs = 3
timeout = 0.5
json = "reports/run.json"

[tool.other]
jobs = "not ours"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a corpus of two fixtures, run from a directory two levels below it,
    under a nearer pyproject.toml that has no [tool.mgradcheck]."""
    (tmp_path / "pyproject.toml").write_text(TABLE)
    (tmp_path / "bugs").mkdir()
    (tmp_path / "reports").mkdir()
    for name in ("passes", "hangs"):
        shutil.copy(BEHAVIOURS / f"{name}.yaml", tmp_path / "bugs")
    below = tmp_path / "pkg" / "sub"
    below.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    monkeypatch.chdir(below)
    return tmp_path


def test_each_command_gets_the_defaults_of_the_options_it_takes(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MGRADCHECK_JOBS")
    found = defaults(cli)
    assert found is not None
    corpus = [str(project / "bugs")]
    assert found["run"] == {
        "corpus_paths": corpus, "jobs": 3, "timeout": 0.5,
        "json_path": str(project / "reports" / "run.json"),
    }  # fmt: skip
    assert found["matrix"] == {"corpus_paths": corpus, "jobs": 3, "timeout": 0.5}  # no run's report
    assert found["tests"] == {"jobs": 3, "timeout": 0.5}
    assert found["list"] == found["show"] == found["validate"] == {"corpus_paths": corpus}
    assert found["report"]["upstream"] == {"corpus_paths": corpus}
    monkeypatch.setenv("MGRADCHECK_JOBS", "2")  # the variable wins over the file
    assert "jobs" not in defaults(cli)["run"]  # type: ignore[index]


def test_a_run_takes_the_corpus_timeout_and_report_from_the_file(project: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "hangs", "-q"])
    assert result.exit_code == 1, result.output
    (hung,) = json.loads((project / "reports" / "run.json").read_text())["results"]
    assert hung["id"] == "hangs" and hung["outcome"] == "timeout"
    assert hung["duration"] < 2  # the file's 0.5 s, not the entry's own 2 s


def test_the_command_line_wins(project: Path, tmp_path: Path) -> None:
    listed = CliRunner().invoke(cli, ["list", "--corpus", str(BEHAVIOURS)])
    assert listed.exit_code == 0, listed.output
    assert len(listed.output.splitlines()) == len(list(BEHAVIOURS.glob("*.yaml")))
    from_file = CliRunner().invoke(cli, ["list"])
    assert [line.split()[0] for line in from_file.output.splitlines()] == ["hangs", "passes"]
    # validate's PATHS are its --corpus: given, the file's corpus is not checked as well
    one = CliRunner().invoke(cli, ["validate", str(BEHAVIOURS / "passes.yaml")])
    assert one.output == "1 entry valid\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "colour = true",
            "tool.mgradcheck.colour: unknown key (known: corpus, jobs, timeout, json, junit, summary, badge)",
        ),
        ('jobs = "four"', "tool.mgradcheck.jobs: must be a whole number from 1 to 512, not 'four'"),
        ("timeout = true", "tool.mgradcheck.timeout: must be seconds, from 0.1 to 86400, not True"),
        ("corpus = []", "tool.mgradcheck.corpus: must be a path or a list of paths, not []"),
        ("json = 1", "tool.mgradcheck.json: must be a path, not 1"),
    ],
)
def test_a_bad_key_or_value_is_one_line_with_file_line_and_key(
    project: Path, line: str, message: str
) -> None:
    key = line.split(" =")[0]
    ours, other = TABLE.split("[tool.other]")  # the same key in another tool's table is not ours
    kept = "".join(old for old in ours.splitlines(True) if not old.startswith(f"{key} ="))
    text = (
        kept.replace("[tool.mgradcheck]\n", f"[tool.mgradcheck]\n{line}\n") + "[tool.other]" + other
    )
    (project / "pyproject.toml").write_text(text)
    number = text.splitlines().index(line) + 1
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 2
    assert result.output == f"mgradcheck: error: {project / 'pyproject.toml'}:{number}: {message}\n"


def test_a_file_that_is_not_toml_is_one_line_too(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.mgradcheck\ncorpus = 'bugs'\n")
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 2
    assert result.output.startswith(
        f"mgradcheck: error: {project / 'pyproject.toml'}:1: not valid TOML"
    )
    assert len(result.output.splitlines()) == 1


def test_no_table_no_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mgradcheck-user"\n')
    monkeypatch.chdir(tmp_path)
    assert defaults(cli) is None


# Files that name mgradcheck and cannot be read as TOML: passed over, the first gave the
# bundled corpus a green run; the others ended in a traceback.
UNREADABLE = {
    "a Latin-1 byte": ("[tool.mgradcheck]\n# caf\xe9\ncorpus = 'bugs'\n".encode("latin-1"), ":2: not valid TOML: not UTF-8 (byte 0xe9)"),
    "nested too deep": (b"[tool.mgradcheck]\ncorpus = " + b"[" * 5000 + b"]" * 5000, ": not valid TOML: arrays or tables nested too deep"),
    "an integer of 5,000 digits": (b"[tool.mgradcheck]\njobs = " + b"7" * 5000 + b"\n", ": not valid TOML: Exceeds the limit"),
    "not TOML": (b"[tool.mgradcheck\ncorpus = 'bugs'\n", ":1: not valid TOML: "),
}  # fmt: skip


@pytest.mark.parametrize("command", [["list"], ["validate"], ["run"], ["tests", "."], ["sweep"]])
@pytest.mark.parametrize("case", UNREADABLE)
def test_a_file_that_cannot_be_read_is_one_line_and_exit_2_for_every_command(
    case: str, command: list[str], tmp_path: Path
) -> None:
    text, message = UNREADABLE[case]
    (tmp_path / "pyproject.toml").write_bytes(text)
    done = subprocess.run(
        [sys.executable, "-m", "mgradcheck", *command],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"mgradcheck: error: pyproject.toml{message}"), done.stderr
