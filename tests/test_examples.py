"""The example CI workflow: valid against GitHub's published workflow schema, sharded run jobs
that upload, a merge that needs them all, a scheduled matrix, and what the manual's CI page promises of it.

GitHub's workflow schema is SchemaStore's, as vendored by check-jsonschema (a
development dependency), so the test needs no network. Its mgradcheck command
lines are checked against the real command-line options, so a renamed option
breaks this test rather than a user's pipeline.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
import yaml

from mgradcheck.cli import cli

WORKFLOW = Path(__file__).resolve().parent.parent / "examples" / "github-actions.yml"
RUN_JOBS = ("cpu", "cuda", "metal")
# The current major version of each action, as of July 2026: a copy of this file should not
# start out a major behind. All run on Node 24 (Node 20 is retired on GitHub), as every major
# since checkout 5, setup-python 6, cache 5, upload-artifact 6 and download-artifact 7 does.
CURRENT = {
    "actions/checkout": 7,
    "actions/setup-python": 7,
    "actions/cache": 6,
    "actions/cache/restore": 6,  # cache's own restore-only and save-only halves
    "actions/cache/save": 6,
    "actions/upload-artifact": 7,
    "actions/download-artifact": 8,
}


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    # YAML 1.1 reads a bare `on` as true; GitHub (and its schema) read it as "on".
    return {("on" if key is True else key): value for key, value in data.items()}


def _schema(package: str, name: str) -> jsonschema.Draft7Validator:
    text = resources.files(f"check_jsonschema.builtin_schemas.{package}").joinpath(name)
    return jsonschema.Draft7Validator(json.loads(text.read_text(encoding="utf-8")))


GITHUB_WORKFLOW = _schema("vendor", "github-workflows.json")  # SchemaStore's, as published
EVERY_JOB_TIMES_OUT = _schema("custom", "github-workflows-require-timeout.json")


def test_the_workflow_is_valid_against_githubs_published_schema(workflow: dict[str, Any]) -> None:
    assert [e.message for e in GITHUB_WORKFLOW.iter_errors(workflow)] == []
    assert [e.message for e in EVERY_JOB_TIMES_OUT.iter_errors(workflow)] == []


def test_the_schema_check_can_fail(workflow: dict[str, Any]) -> None:
    broken = copy.deepcopy(workflow)
    broken["jobs"]["cpu"]["timeout-minute"] = broken["jobs"]["cpu"].pop("timeout-minutes")
    assert not GITHUB_WORKFLOW.is_valid(broken) and not EVERY_JOB_TIMES_OUT.is_valid(broken)
    broken = copy.deepcopy(workflow)
    broken["jobs"]["merge"]["steps"][0]["with"] = "python-version: 3.12"
    assert not GITHUB_WORKFLOW.is_valid(broken)


def every_use(workflow: dict[str, Any]) -> list[str]:
    return [s["uses"] for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s]


def test_every_action_is_at_its_current_major(workflow: dict[str, Any]) -> None:
    for use in every_use(workflow):
        action, _, ref = use.partition("@")
        assert action in CURRENT, f"{use}: an action this test does not know"
        assert ref == f"v{CURRENT[action]}", use


def test_fork_pull_requests_need_no_write_access(workflow: dict[str, Any]) -> None:
    assert workflow["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in workflow["jobs"].values())
    assert "pull_request_target" not in workflow["on"] and "workflow_run" not in workflow["on"]


def test_runs_are_bounded_and_superseded_runs_cancelled(workflow: dict[str, Any]) -> None:
    assert all(isinstance(job["timeout-minutes"], int) for job in workflow["jobs"].values())
    concurrency = workflow["concurrency"]
    assert "github.event.pull_request.number" in concurrency["group"]
    assert "pull_request" in concurrency["cancel-in-progress"]


@pytest.mark.parametrize(("job", "variable"), [("cuda", "MGRADCHECK_CUDA_RUNNER"),
                                               ("metal", "MGRADCHECK_METAL_RUNNER")])  # fmt: skip
def test_gpu_jobs_are_skipped_where_no_such_runner_is_named(
    workflow: dict[str, Any], job: str, variable: str
) -> None:
    """A job for a runner that does not exist would wait for one a whole day; this one is skipped."""
    spec = workflow["jobs"][job]
    assert f"vars.{variable} != ''" in spec["if"]
    assert spec["runs-on"] == f"${{{{ vars.{variable} }}}}"
    assert (
        "!cancelled()" in workflow["jobs"]["merge"]["if"]
    )  # a skipped job does not stop the merge


def test_caches_keep_kernels_environments_and_results(workflow: dict[str, Any]) -> None:
    assert workflow["env"]["MGRADCHECK_CACHE"].startswith("${{ github.workspace }}")
    for name in ("cpu", "matrix"):
        paths = " ".join(u["with"]["path"] for u in uses(workflow["jobs"][name], "actions/cache@"))
        assert "env.MGRADCHECK_CACHE" in paths
    matrix_paths = [u["with"]["path"] for u in uses(workflow["jobs"]["matrix"], "actions/cache@")]
    assert any("~/.cache/uv" in p for p in matrix_paths)


def test_the_scheduled_job_runs_the_matrix_when_a_release_is_new(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["matrix"]
    assert "schedule" in job["if"] and workflow["on"]["schedule"]
    newest = next(s for s in steps(job) if s.get("id") == "newest")
    assert "mgradcheck envs releases | tail -n 1" in newest["run"]
    (run,) = commands(job, "matrix")
    assert {w for w in run if w.startswith("-")} <= known_options("matrix")
    done = next(u for u in uses(job, "actions/cache@") if u.get("id") == "done")
    assert "steps.newest.outputs.version" in done["with"]["key"]
    run_step = next(s for s in steps(job) if "mgradcheck matrix" in s.get("run", ""))
    assert run_step["if"] == "steps.done.outputs.cache-hit != 'true'"
    assert "GITHUB_STEP_SUMMARY" in run_step["run"]
    for name in RUN_JOBS:  # the nightly run does not repeat the run jobs
        assert "github.event_name != 'schedule'" in workflow["jobs"][name]["if"]


def test_every_install_works_before_a_release_is_published(workflow: dict[str, Any]) -> None:
    installs = [s["run"] for job in workflow["jobs"].values() for s in job["steps"]
                if "pip\" install" in s.get("run", "") or "pip install" in s.get("run", "")]  # fmt: skip
    assert len(installs) == len(workflow["jobs"]) - 1  # all but mgradcheck's own dependencies job
    for script in installs:
        assert "${MGRADCHECK_SOURCE:+ @ $MGRADCHECK_SOURCE}" in script, script
    assert workflow["env"]["MGRADCHECK_SOURCE"] == "${{ vars.MGRADCHECK_SOURCE }}"


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
    assert {"push", "pull_request", "schedule"} <= set(workflow["on"])
    assert set(workflow["jobs"]) == {*RUN_JOBS, "merge", "matrix", "sweep", "sweep-merge",
                                     "dependencies"}  # fmt: skip


def test_a_daily_job_tests_mgradcheck_on_the_newest_dependencies(workflow: dict[str, Any]) -> None:
    """A breaking dependency release is seen within a day, not at the next change to main."""
    job = workflow["jobs"]["dependencies"]
    assert "schedule" in job["if"]
    (script,) = [s["run"] for s in steps(job) if "run" in s]
    assert script.splitlines()[-1] == "make test-latest"
    makefile = (WORKFLOW.parent.parent / "Makefile").read_text(encoding="utf-8")
    assert "\ntest-latest: " in makefile and "--upgrade" in makefile
    # Its everyday environment comes from the lock, never from a fresh resolution.
    install = makefile.split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "sync --locked" in install and "pip install" not in install


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
    assert upload["if"] == "${{ !cancelled() }}"  # reports go up even when a regression fails
    assert json_path.startswith(upload["with"]["path"])
    assert upload["with"]["name"].startswith("mgradcheck-run-")


@pytest.mark.parametrize(("name", "command"), [*((job, "run") for job in RUN_JOBS),
                                               ("matrix", "matrix")])  # fmt: skip
def test_the_checked_out_corpus_is_the_one_run(
    workflow: dict[str, Any], name: str, command: str
) -> None:
    """A pull request that edits corpus/ is tested as it stands, not the corpus installed with
    mgradcheck; its entries' paths lie in the checkout, so annotations keep their file= line."""
    job = workflow["jobs"][name]
    assert uses(job, "actions/checkout@")
    (words,) = commands(job, command)
    corpus = option_value(words, "--corpus")
    assert not Path(corpus).is_absolute() and (WORKFLOW.parent.parent / corpus).is_dir()


def test_merge_needs_every_run_job_and_publishes(workflow: dict[str, Any]) -> None:
    merge = workflow["jobs"]["merge"]
    assert set(merge["needs"]) == set(RUN_JOBS)
    (download,) = uses(merge, "actions/download-artifact@")
    assert download["with"]["pattern"] == "mgradcheck-run-*"
    (command,) = commands(merge, "report merge")
    assert {w for w in command if w.startswith("-")} <= known_options("report", "merge")
    assert {"--junit", "--badge", "--json"} <= set(command)
    assert command[0].startswith(download["with"]["path"])
    uploaded = [u["with"]["path"].split()[0] for u in uses(merge, "actions/upload-artifact@")]
    for option in ("--badge", "--junit", "--json"):
        assert any(option_value(command, option).startswith(path) for path in uploaded)


def test_the_scheduled_sweep_is_sharded_by_durations_cached_and_merged(
    workflow: dict[str, Any],
) -> None:
    """Every check of the newest release, over N jobs dealt by the last sweep's times, its
    kernels kept per release, merged into one report and a summary of the findings."""
    job, merge = workflow["jobs"]["sweep"], workflow["jobs"]["sweep-merge"]
    assert "schedule" in job["if"] and "schedule" in merge["if"] and "!cancelled()" in merge["if"]
    shards = job["strategy"]["matrix"]["shard"]
    assert len(shards) > 1 and job["strategy"]["fail-fast"] is False
    (sweep,) = commands(job, "sweep")
    assert {w for w in sweep if w.startswith("-")} <= known_options("sweep")
    assert option_value(sweep, "--shard") == "${{matrix.shard}}/" + str(len(shards))
    assert not {"--skip", "--ops", "--mlx", "--python"} & set(sweep)  # all of the newest release
    # Its kernels: MGRADCHECK_CACHE's kernels dir, per release (the tag keeps the cache root).
    (kernels,) = uses(job, "actions/cache@")
    assert kernels["with"]["path"].splitlines() == [
        "${{ env.MGRADCHECK_CACHE }}/CACHEDIR.TAG", "${{ env.MGRADCHECK_CACHE }}/kernels"
    ]  # fmt: skip
    assert "steps.newest.outputs.version" in kernels["with"]["key"]
    # Durations: restored by every shard, written and saved by the merge alone.
    (restore,) = uses(job, "actions/cache/restore@")
    (save,) = uses(merge, "actions/cache/save@")
    durations = option_value(sweep, "--durations")
    assert restore["with"]["path"] == save["with"]["path"] == durations
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    (upload,) = uses(job, "actions/upload-artifact@")
    assert option_value(sweep, "--json").startswith(upload["with"]["path"])
    assert upload["if"] == "${{ !cancelled() }}"  # even when the step fails
    # The merge: every shard's report into one, whose findings go to the job summary.
    assert merge["needs"] == ["sweep"]
    (download,) = uses(merge, "actions/download-artifact@")
    assert upload["with"]["name"].startswith(download["with"]["pattern"].rstrip("*"))
    (merged,) = commands(merge, "report merge")
    assert {w for w in merged if w.startswith("-")} <= known_options("report", "merge")
    assert merged[0].startswith(download["with"]["path"]) and merged[0].endswith(".json")
    assert "--summary" not in merged  # in Actions: $GITHUB_STEP_SUMMARY, the job's page
    (timed,) = commands(merge, "report durations")
    assert {w for w in timed if w.startswith("-")} <= known_options("report", "durations")
    assert timed[0] == option_value(merged, "--json") and option_value(timed, "-o") == durations


def test_the_ci_page_points_at_the_example() -> None:
    page = (WORKFLOW.parent.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "`examples/github-actions.yml`" in page
