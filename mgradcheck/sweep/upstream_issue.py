"""``mgradcheck report upstream ID``: a corpus entry as a paste-ready upstream issue.

The stages: reproduce the entry on the newest release chosen (a ``gradcheck:``
entry is run once to learn which transform combination fails, and at which
inputs), turn that into a standalone script (MLX and NumPy only; a ``code:``
entry's code, with the few check helpers it uses written out), run the script
on every release chosen through the release machinery (cached environments,
the results store), and render title, script, observed against expected, the
releases where it reproduces and the environment, as Markdown.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from mgradcheck.corpus.entry import Bug, Entry, Upstream
from mgradcheck.errors import ReleaseError, UsageError
from mgradcheck.index.installable import list_releases, parse_range
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.choice import Release
from mgradcheck.releases.on_release import open_target, run_release
from mgradcheck.releases.regress import Judged, RegressOn, State
from mgradcheck.releases.release_matrix import run_matrix
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.markdown import cell, prose
from mgradcheck.run.display import Progress, Silent, printable
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.sweep import inline_checks, mlx_places
from mgradcheck.sweep import script as scripts
from mgradcheck.sweep.case_runs import Executor, Status, Task
from mgradcheck.sweep.catalogue import Case
from mgradcheck.sweep.findings import arg_names

SERIES = 3  # by default: the newest release of each of the three newest minor series


@dataclass(frozen=True)
class Issue:
    entry: Entry
    script: str
    newest: Observation  # the script's run on the newest release
    environment: Environment
    releases: tuple[Judged, ...]


def default_releases(versions: Sequence[Version], entry: Entry) -> list[Version]:
    """The newest release of each of the newest minor series, and the release that found the bug."""
    newest: dict[tuple[int, int], Version] = {}
    for v in versions:
        key = (v.major, v.minor)
        newest[key] = max(newest.get(key, v), v)
    chosen = sorted(newest.values())[-SERIES:]
    if entry.found_by is not None and entry.found_by.mlx:
        found = Version(entry.found_by.mlx)
        if found in versions and found not in chosen:
            chosen.append(found)
    return sorted(chosen)


def releases(entry: Entry, settings: Settings, version_range: str | None) -> list[Version]:
    listing = list_releases(settings.source, settings.target, settings.pre, settings.yanked)
    if version_range:
        wanted = parse_range(version_range)
        chosen = [v for v in listing.versions if wanted.contains(v, prereleases=True)]
    else:
        chosen = default_releases(listing.versions, entry)
    if not chosen:
        raise UsageError(
            f"{listing.empty_reason()}{' within ' + version_range if version_range else ''}"
        )
    return chosen


def failing_finding(
    entry: Entry, settings: Settings, version: Version, progress: Progress
) -> dict[str, Any]:
    """Run a ``gradcheck:`` entry on ``version`` and return what fails (a finding, or a crash's last path)."""
    assert entry.gradcheck is not None
    spec = dict(entry.gradcheck)
    case = Case(entry.id, entry.id, "corpus", str(spec["fn"]), tuple(spec["inputs"]))
    dtype = (spec.get("dtypes") or ["float32"])[0]
    with open_target(None, Release(version), settings, progress) as (command, env):
        executor = Executor(command, env, jobs=1, timeout=entry.timeout)
        (result,) = executor.run([Task(case, dtype, spec)])
    if result.status in (Status.WRONG, Status.CRASH) and result.findings:
        return result.findings[0]
    raise ReleaseError(
        f"{entry.id} does not reproduce on mlx {version} ({result.status.label}"
        f"{': ' + result.message.splitlines()[0] if result.message else ''}); nothing to report there"
    )


def code_script(entry: Entry) -> str:
    """A ``code:`` entry as a standalone script: its code, after the helpers it uses."""
    code = entry.code or ""
    helpers = inline_checks.helpers(code, entry.id)
    return (
        f"# {entry.title}\n# Standalone: needs only MLX and NumPy.\nimport mlx.core as mx\nimport numpy as np\n\n"
        f"print('mlx', mx.__version__, mx.default_device())\n\n{helpers}\n\n{code}"
    )


def script_for(entry: Entry, settings: Settings, version: Version, progress: Progress) -> str:
    if entry.gradcheck is None:
        return code_script(entry)
    finding = failing_finding(entry, settings, version, progress)
    spec = dict(entry.gradcheck)
    return scripts.render(spec, finding, arg_names(str(spec["fn"])), entry.title)


def issue(
    entry: Entry, settings: Settings, versions: Sequence[Version], progress: Progress | None = None
) -> Issue:
    """Reproduce ``entry``, write its script, and run the script on every one of ``versions``."""
    progress = progress or Silent()
    newest = max(versions)
    source = script_for(entry, settings, newest, progress)
    as_entry = Entry(
        id=f"{entry.id}-upstream-script",
        title=entry.title,
        summary=entry.summary,
        upstream=Upstream(None),
        bug=Bug((Outcome.FAIL, Outcome.CRASH), affects=()),
        path="<upstream script>",
        line=0,
        timeout=entry.timeout,
        code=source,
    )
    (run,) = run_release(newest, [as_entry], settings, progress.status)
    if run.problem is not None or not run.runs or run.environment is None:
        raise ReleaseError(f"the script could not run on mlx {newest}: {run.problem or 'no run'}")
    matrix = run_matrix(
        [as_entry], versions, settings, RegressOn.SIGNATURE, jobs=1, status=progress.status
    )
    cells = tuple(matrix.cell(as_entry.id, v) for v in versions)
    return Issue(entry, source, run.runs[0], run.environment, cells)


def _observed(run: Observation) -> str:
    lines = [line for line in run.stdout.strip().splitlines() if not line.startswith("mlx ")]
    text = "\n".join(lines[-40:])
    if run.outcome is Outcome.CRASH:
        text += f"\n{run.reason}"
    elif run.outcome is not Outcome.PASS:
        text += f"\n{run.exc_type or run.outcome.label}: {run.message}".rstrip()
    return text.strip()


def _fence(text: str, info: str = "") -> str:
    """``text`` as a code block whose fence no run of backticks in it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def render(found: Issue) -> str:
    """The issue as Markdown: title, summary, script, observed, releases, where to look, environment.

    What the corpus and the child wrote is shown as written, never as markup: code in
    fences that no line of it can close, the rest escaped (no link, no heading, no
    @mention), control characters as escapes.
    """
    entry, env, run = found.entry, found.environment, found.newest
    table = "\n".join(
        f"| {j.version} | {'reproduces' if j.state is State.BAD else j.state.label}: "
        f"{cell(j.outcome)} |"
        for j in found.releases
    )
    title = entry.title.removeprefix("sweep: ").rstrip(".")
    mlx, backend = cell(str(env.mlx)), cell(str(env.backend))
    finder = entry.found_by.describe() if entry.found_by else "found by mgradcheck"
    return printable(f"""\
## {cell(title, 300)}

{prose(entry.summary)}

### Reproducer

Standalone (MLX and NumPy only); it raises `AssertionError` while the bug is present.

{_fence(found.script.rstrip(), "python")}

### Observed and expected (mlx {mlx}, {backend})

{_fence(_observed(run))}

### Releases

| mlx | this script |
|---|---|
{table}

{mlx_places.section(entry, found.releases, backend)}
### Environment

- mlx {mlx}, backend {backend} ({cell(str(env.device))})
- Python {cell(env.python)}, {cell(env.platform)} ({platform.machine()})
- {cell(finder, 300)}
""")
