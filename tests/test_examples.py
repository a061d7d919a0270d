"""The example CI workflow: valid YAML, sharded run jobs that upload, a merge that needs them all.

Its mgradcheck command lines are checked against the real command-line options,
so a renamed option breaks this test rather than a user's pipeline.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from mgradcheck.cli import cli

WORKFLOW = Path(__file__).resolve().parent.parent / "examples" / "github-actions.yml"
RUN_JOBS = ("cpu", "cuda", "metal")


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def _one_word(match: re.Match[str]) -> str:
    return "${{" + match[1].replace(" ", "") + "}}"


def commands(job: dict[str, Any], subcommand: str) -> list[list[str]]:
    """Every ``mgradcheck <subcommand> ...`` command line in a job's shell steps, as words."""
    wanted = subcommand.split()
    found = []
    for step in steps(job):
        # Join continued lines, and make each ${{ expression }} one word for shlex.
        script = step.get("run", "").replace("\\\n", " ")
        script = re.sub(r"\$\{\{\s*(.*?)\s*\}\}", _one_word, script)
        for line in script.splitlines():
            words = shlex.split(line)
            for i, word in enumerate(words):
                if word.endswith("mgradcheck") and words[i + 1 : i + 1 + len(wanted)] == wanted:
                    found.append(words[i + 1 + len(wanted) :])
    return found


def uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in steps(job) if s.get("uses", "").startswith(action)]


def option_value(words: list[str], option: str) -> str:
    return words[words.index(option) + 1]


def known_options(*path: str) -> set[str]:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return {opt for param in command.params for opt in param.opts}


def test_triggers_and_jobs(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on") or workflow[True]  # type: ignore[index]  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request", "schedule"} <= set(triggers)
    assert set(workflow["jobs"]) == {*RUN_JOBS, "merge"}


@pytest.mark.parametrize("name", RUN_JOBS)
def test_each_run_job_is_sharded_and_uploads_its_json(workflow: dict[str, Any], name: str) -> None:
    job = workflow["jobs"][name]
    (run,) = commands(job, "run")
    shard = option_value(run, "--shard")
    assert shard == "${{matrix.shard}}/" + str(len(job["strategy"]["matrix"]["shard"]))
    # One shard's regression must not cancel the others.
    assert job["strategy"]["fail-fast"] is False
    assert set(run) & {"--json", "--junit"} == {"--json", "--junit"}
    assert {w for w in run if w.startswith("-")} <= known_options("run")
    json_path = option_value(run, "--json")
    (upload,) = uses(job, "actions/upload-artifact@")
    assert upload["if"] == "always()"  # reports go up even when a regression fails the job
    assert json_path.startswith(upload["with"]["path"])
    assert upload["with"]["name"].startswith("mgradcheck-")


def test_metal_runs_on_self_hosted_apple_silicon(workflow: dict[str, Any]) -> None:
    labels = workflow["jobs"]["metal"]["runs-on"]
    assert {"self-hosted", "macOS", "ARM64"} <= set(labels)


def test_merge_needs_every_run_job_and_publishes(workflow: dict[str, Any]) -> None:
    merge = workflow["jobs"]["merge"]
    assert set(merge["needs"]) == set(RUN_JOBS)
    assert merge["if"] == "always()"
    (download,) = uses(merge, "actions/download-artifact@")
    assert download["with"]["pattern"] == "mgradcheck-*"
    (command,) = commands(merge, "report merge")
    assert {w for w in command if w.startswith("-")} <= known_options("report", "merge")
    assert {"--junit", "--badge", "-o"} <= set(command)
    assert command[0].startswith(download["with"]["path"])
    published = [s for s in steps(merge) if "junit" in s.get("uses", "")]
    assert published and published[0]["with"]["report_paths"] == option_value(command, "--junit")
    uploaded = [u["with"]["path"].split()[0] for u in uses(merge, "actions/upload-artifact@")]
    assert any(option_value(command, "--badge").startswith(path) for path in uploaded)


def test_readme_points_at_the_example() -> None:
    readme = (WORKFLOW.parent.parent / "README.md").read_text(encoding="utf-8")
    assert "examples/github-actions.yml" in readme
