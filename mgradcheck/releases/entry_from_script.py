"""A corpus entry made from a reproducer script: its bug, and where it flips, read off its runs on releases.

draft (the script as ``code``, any misbehaviour counting as the bug) -> the
matrix machinery runs it on the releases chosen first (:mod:`script_releases`; cached
environments, the results store) -> the bug's signature is read off the runs (the
outcome of the newest release that misbehaves, and the text its messages share) ->
every release run is judged against that signature, each flip is bisected, and
where it flips gives ``introduced_in`` and ``fixed_in`` -> the entry, with
evidence, is validated by the loader. What only a person can write (title,
summary, a review of the oracle) is listed, not guessed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.atomic import write_text
from mgradcheck.clock import now
from mgradcheck.corpus import files, loader, yamlsource
from mgradcheck.corpus.dump import dump
from mgradcheck.corpus.entry import Bug, Entry
from mgradcheck.corpus.scaffold import Script, entry_code
from mgradcheck.corpus.yamlsource import SourceError
from mgradcheck.errors import CorpusError, HarnessError, UsageError, WriteError
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import Judged, RegressOn, State, judge
from mgradcheck.releases.release_matrix import Flip, Matrix, run_matrix, run_shown
from mgradcheck.releases.script_releases import (
    Chosen,
    bisect_flips,
    boundaries,
    signature,
    stored_runs,
)
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.outputs import check_directory, refuse_input
from mgradcheck.run.display import Progress
from mgradcheck.run.observation import Observation
from mgradcheck.wording import count

TIMEOUT = 60


@dataclass(frozen=True)
class Request:
    """What ``new`` was asked for, checked."""

    script: Script
    entry_id: str
    corpus: Path  # the directory the entry joins
    issue: str | None = None
    expect: str | None = None
    force: bool = False
    requires_mlx: str | None = None  # only when asked for: the releases tried are not a requirement

    @property
    def path(self) -> Path:
        return self.corpus / f"{self.entry_id}.yaml"


@dataclass(frozen=True)
class NewEntry:
    """The entry ``new`` wrote (or would write), what it saw, and what a person must still do."""

    path: Path
    text: str
    entry: Entry
    cells: tuple[Judged, ...]  # every release run, oldest first, judged on the entry's signature
    flips: tuple[Flip, ...]
    todo: tuple[str, ...]
    interrupted: bool = False
    signum: int = 0


def check_target(request: Request) -> None:
    """Refuse before anything runs: an entry file or id that exists (unless --force overwrites that file)."""
    package = Path(__file__).resolve().parent.parent
    if request.corpus.resolve().is_relative_to(package):  # an upgrade would take the entry away
        raise UsageError(
            f"{request.corpus} is inside the installed mgradcheck package; "
            "give --corpus DIR, a corpus directory of your own"
        )
    if request.path.exists() and not request.force:
        raise UsageError(f"{request.path} exists; give --force to overwrite it, or another --id")
    if request.corpus.exists() and not request.corpus.is_dir():
        raise UsageError(f"--corpus: {request.corpus} is not a directory")
    refuse_input(request.path, [request.script.path])  # --force or not
    _check_round_trip(request)
    check_directory(request.corpus)  # found out now, not after every release has run
    if request.path.is_dir():
        raise WriteError(f"cannot write {request.path}: it is a directory")
    if not request.corpus.is_dir():
        return
    if not files.corpus_files([request.corpus]):
        return
    for entry in loader.load([request.corpus]):
        if entry.id == request.entry_id and Path(entry.path).resolve() != request.path.resolve():
            raise UsageError(
                f"{entry.path}:{entry.line}: id {request.entry_id!r} is taken; give another --id"
            )


def _check_round_trip(request: Request) -> None:
    """Refuse now, not after every release has run it, code that would not read back from the
    entry's YAML as the script it is (YAML takes some characters for line breaks)."""
    code = entry_code(request.script, request.expect)
    try:
        back = yamlsource.parse(dump({"code": code}, records_inline=True), str(request.path))
    except SourceError:
        back = None
    if back is None or back.data.get("code") != code:
        raise UsageError(
            f"{request.script.path}: its code cannot be written as an entry's YAML unchanged"
        )


def _document(data: dict[str, Any], path: Path) -> tuple[str, Entry]:
    """The entry's YAML, validated by the loader as ``validate`` would; a problem is our bug."""
    text = dump(data, records_inline=True)
    problems: list[SourceError] = []
    try:
        entry = loader.check_document(yamlsource.parse(text, str(path)), problems)
    except SourceError as exc:
        problems.append(exc)
        entry = None
    if entry is None:
        raise HarnessError(f"the entry made for {path} does not validate: {CorpusError(problems)}")
    return text, entry


def draft_data(request: Request, versions: Sequence[Version], backend: str) -> dict[str, Any]:
    """The entry before any run: every misbehaviour counts as the bug."""
    script = request.script
    upstream: dict[str, Any] = (
        {"upstream": {"report": request.issue}}
        if request.issue
        else {"found_by": _found_by(versions[-1], backend)}  # the release is settled after the runs
    )
    return {
        "id": request.entry_id,
        "title": script.title or "TODO: one line saying what goes wrong.",
        "summary": "TODO: what goes wrong and why, in your own words (corpus/README.md).",
        **upstream,
        "tags": script.tags,
        "bug": {"outcome": [o.label for o in (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH)]},
        # The same in the entry written as here: what the child sees, and so the content
        # hash the results are stored under, does not change between the two.
        **({"requires": {"mlx": request.requires_mlx}} if request.requires_mlx else {}),
        "timeout": TIMEOUT,
        "code": entry_code(script, request.expect),
    }


def _evidence(
    cell: Judged, runs: Sequence[Observation], entry: Entry, backend: str
) -> dict[str, str]:
    hit = next(
        (r for r in runs if cell.state is State.BAD and r.outcome in entry.bug.outcomes), None
    )
    outcome = (hit or runs[0]).outcome
    tally = sum(r.outcome is outcome for r in runs)
    note = f"{outcome.label} {tally}/{len(runs)} runs" + (f"; {hit.reason}" if hit else "")
    if len(note) > 200:
        note = note[:197] + "..."
    return {"mlx": str(cell.version), "backend": backend, "outcome": outcome.label, "note": note}


def _between(versions: Sequence[Version], flip: Flip) -> list[Version]:
    return [v for v in versions if flip.before < v < flip.after]


def make(
    request: Request,
    settings: Settings,
    chosen: Chosen,
    jobs: int,
    progress: Progress,
) -> NewEntry:
    """Run the draft on the releases, bisect where it flips, and build the entry (nothing written)."""
    listing, versions = chosen.listing, list(chosen.first)
    backend = settings.target.device
    data = draft_data(request, versions, backend)
    _, draft = _document(data, request.path)
    title = f"new: judging {request.script.path.name} on {count(len(versions), 'release')}"
    matrix = run_shown(
        [draft], versions, settings, RegressOn.NON_PASS, None, jobs, progress, title=title
    )
    runs = stored_runs(draft, versions, settings)
    bug = signature([runs[v] for v in versions if v in runs])
    if bug is None:
        if matrix.interrupted:
            return NewEntry(request.path, "", draft, (), (), (), True, matrix.signum)
        raise UsageError(_no_bug(request, versions, runs, matrix))
    entry = dataclasses.replace(draft, bug=bug)
    judged = _judged(entry, matrix, runs)
    flips = tuple(judged.flips(draft.id))
    if not matrix.interrupted:
        probed = bisect_flips(entry, flips, chosen, settings, progress)
        if not probed <= set(versions):
            # Every probe is stored: this matrix only reads the store.
            versions = sorted({*versions, *probed})
            matrix = run_matrix([draft], versions, settings, RegressOn.NON_PASS, None, jobs)
            runs = stored_runs(draft, versions, settings)
            judged = _judged(entry, matrix, runs)
            flips = tuple(judged.flips(draft.id))
    state = {v: judged.cell(draft.id, v).state for v in versions}
    known = [v for v in versions if state[v] is not State.UNKNOWN]
    bad = [v for v in known if state[v] is State.BAD]
    if not bad:
        raise HarnessError(f"the signature read off the runs of {draft.id} matches none of them")
    introduced, fixed, ambiguous = boundaries(flips)
    data["bug"] = _bug_data(bug, backend, introduced, fixed)
    if request.issue is None:
        data["found_by"] = _found_by(bad[-1], backend)
    shown = sorted({known[0], known[-1], *(v for f in flips for v in (f.before, f.after))})
    data["evidence"] = [_evidence(judged.cell(draft.id, v), runs[v], entry, backend) for v in shown]
    gaps = {f: _between(listing.versions, f) for f in flips}
    data["notes"] = _notes(judged, entry, flips, gaps, settings) + "\n"
    text, entry = _document({k: data[k] for k in _ORDER if k in data}, request.path)
    todo = _todo(request, entry, gaps, ambiguous, backend)
    if request.requires_mlx is None and known[0] > versions[0]:
        todo += (
            f"requires.mlx: none; releases before {known[0]} could not be judged: if they lack "
            f"an API the script uses, run again with --requires-mlx '>={known[0]}'",
        )
    cells = tuple(judged.cell(draft.id, v) for v in versions)
    return NewEntry(
        request.path, text, entry, cells, flips, todo, matrix.interrupted, matrix.signum
    )


def _judged(entry: Entry, matrix: Matrix, runs: dict[Version, tuple[Observation, ...]]) -> Matrix:
    """The matrix again, each release's runs judged on the entry's signature instead of any misbehaviour."""
    cells = {}
    for version in matrix.versions:
        cell = matrix.cell(entry.id, version)
        if version in runs:
            state, reason = judge(entry, runs[version], RegressOn.SIGNATURE)
            cell = dataclasses.replace(cell, state=state, reason=reason)
        cells[(entry.id, version)] = cell
    return dataclasses.replace(
        matrix, regress_on=RegressOn.SIGNATURE, entries=(entry,), cells=cells
    )


def _bug_data(
    bug: Bug, backend: str, introduced: Version | None, fixed: Version | None
) -> dict[str, Any]:
    data: dict[str, Any] = {"outcome": [o.label for o in bug.outcomes]}
    if len(bug.outcomes) == 1:
        data["outcome"] = bug.outcomes[0].label
    if bug.match:
        data["match"] = bug.match
    data["affects"] = [backend]
    if introduced is not None:
        data["introduced_in"] = str(introduced)
    if fixed is not None:
        data["fixed_in"] = str(fixed)
    return data


_ORDER = ("id", "title", "summary", "found_by", "upstream", "tags", "bug", "requires", "timeout",
          "evidence", "notes", "code")  # fmt: skip


def _found_by(version: Version, backend: str) -> dict[str, str]:
    return {"tool": "mgradcheck new", "mlx": str(version), "backend": backend, "date": now()[:10]}


def _no_bug(
    request: Request,
    versions: Sequence[Version],
    runs: dict[Version, tuple[Observation, ...]],
    matrix: Matrix,
) -> str:
    """Why no entry can be made: the script showed nothing; what it printed, if that differed."""
    name = request.script.path
    if not runs:
        reasons = sorted({matrix.cell(request.entry_id, v).reason for v in versions})
        return f"{name}: no release could run it ({'; '.join(reasons)[:300]})"
    printed: dict[str, list[str]] = {}
    for version, seen in runs.items():
        printed.setdefault(seen[0].stdout.strip(), []).append(str(version))
    where = "; ".join(f"{', '.join(vs)} printed {text[:80]!r}" for text, vs in printed.items())
    hint = (
        f" ({where}): give the right output with --expect TEXT"
        if len(printed) > 1 and request.expect is None
        else ""
    )
    return f"{name}: the script raised nothing and failed no check on any release run{hint}"


def _notes(
    matrix: Matrix,
    entry: Entry,
    flips: Sequence[Flip],
    gaps: dict[Flip, list[Version]],
    settings: Settings,
) -> str:
    versions = matrix.versions
    judged = [v for v in versions if matrix.cell(entry.id, v).state is not State.UNKNOWN]
    said = "; ".join(f.sentence() for f in flips) or (
        f"{matrix.cell(entry.id, judged[0]).state.label} on every release judged"
    )
    lines = [
        f"Seen by mgradcheck new on {settings.target.describe()}, {len(versions)} releases from "
        f"{versions[0]} to {versions[-1]} ({entry.repeat} run each): {said}."
    ]
    unknown = [v for v in versions if v not in judged]
    if unknown:
        why = "; ".join(f"{v}: {_first_clause(matrix.cell(entry.id, v).reason)}" for v in unknown)
        lines.append(f"Could not judge: {why}.")
    for flip, between in gaps.items():
        if between:
            lines.append(
                f"Not run between {flip.before} and {flip.after}: "
                f"{', '.join(map(str, between))}; bisect to confirm."
            )
    return " ".join(lines)


def _first_clause(reason: str) -> str:
    line = reason.strip().splitlines()[0] if reason.strip() else "no reason given"
    return line.split(" (")[0][:150]


def _todo(
    request: Request,
    entry: Entry,
    gaps: dict[Flip, list[Version]],
    ambiguous: str | None,
    backend: str,
) -> tuple[str, ...]:
    todo = []
    if request.script.title is None:
        todo.append("title: one line saying what goes wrong")
    else:
        todo.append("title: taken from the script's docstring; check that it names the bug")
    todo.append(
        "summary: what goes wrong and why, in your own words, for people who never read the thread"
    )
    todo.append(
        "oracle: check that the script's check is independent of the path under test and covers "
        "the variants (corpus/README.md, 'What makes a good oracle')"
    )
    if Outcome.ERROR in entry.bug.outcomes:
        todo.append(
            "the bug raises: catch the exception around the call under test only, raise CheckFailed "
            "naming it, and make the outcome fail (so that an API an old release lacks stays an error)"
        )
    if entry.bug.match is None:
        todo.append("bug.match: the messages share no text; write a regex that names the bug")
    else:
        todo.append(
            f"bug.match: {entry.bug.match!r} is the text the messages share; make it name the bug"
        )
    if request.issue is None:
        todo.append(
            "upstream.report: none given (--issue), so the entry is marked unreported (found_by); "
            "add the report once it is filed"
        )
    else:
        todo.append("upstream.fix: the pull request that fixed it, if there is one")
    for flip, between in gaps.items():
        if between:
            todo.append(
                f"releases between {flip.before} and {flip.after} were not run: "
                f"confirm with 'mgradcheck bisect {entry.id}'"
            )
    if ambiguous:
        todo.append(f"fixed_in / introduced_in left out: {ambiguous}")
    todo.append(f"affects: seen on {backend} only; name every backend the bug lives in")
    todo.append("notes: what you checked by hand, and the upstream history of the fix")
    return tuple(todo)


def write(result: NewEntry, force: bool) -> None:
    """Write the entry atomically; an entry that appeared meanwhile is kept unless ``force``."""
    if result.path.exists() and not force:
        raise UsageError(f"{result.path} exists; give --force to overwrite it")
    try:
        result.path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"cannot make {result.path.parent}: {exc.strerror or exc}") from None
    write_text(result.path, result.text)
