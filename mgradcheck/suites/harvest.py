"""``tests --matrix --emit DIR``: a corpus entry for each test that flips between the releases run.

The entry's code is the test made self-contained (:mod:`mgradcheck.suites.inline`);
its bug is what the test did where it did not pass (its outcomes), with
``fixed_in`` (the release it starts passing on) and ``introduced_in`` (the
release it starts failing on) from the matrix; its provenance is the upstream
test id and the revision it was taken from, and, for MLX's own tests
(``--mlx-tests``), the commit and pull request that added the test, which is
as a rule the fix. Each entry is first written to the run's private scratch
directory, validated by the corpus loader and run as an entry on every release
of the matrix; only one that behaves as its test did on each of them (bad where
the test failed, good where it passed) is then written into the directory, so
a draft that does not reproduce, or a harvest interrupted, leaves nothing
there. An entry's name holds its test's file, class (unless the file names it
already: ``test_autograd.py``'s ``TestAutograd``) and name, and is unique among
the tests collected; a file of that name already in the directory is never
replaced unless ``force``, and never removed. What is written is a draft: its
summary is the test's own comment, to be rewritten in our words before the
entry joins the bundled corpus (corpus/README.md).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.atomic import write_text
from mgradcheck.backends import family
from mgradcheck.corpus.dump import dump
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError, UsageError
from mgradcheck.outcomes import Outcome
from mgradcheck.paths import run_scratch
from mgradcheck.releases.on_release import run_release
from mgradcheck.releases.regress import RegressOn, State, judge_run
from mgradcheck.releases.release_matrix import Matrix
from mgradcheck.releases.settings import Settings
from mgradcheck.run.display import Progress
from mgradcheck.suites.collect import SuiteTest
from mgradcheck.suites.inline import NotInlinable, inline
from mgradcheck.suites.mlx_tests import TESTS, Checkout, added_by
from mgradcheck.suites.source import Source, shown
from mgradcheck.upstream import commit_url

TIMEOUT = 120


@dataclass(frozen=True)
class History:
    """Where a test's state changes over the releases run: at most a break and a fix."""

    fixed_in: Version | None
    introduced_in: Version | None
    bad: tuple[Version, ...]  # the releases it fails on


def history(matrix: Matrix, test_id: str) -> History | None:
    """Fixed (bad, then good), broken (good, then bad), or broken then fixed; else None."""
    flips = matrix.flips(test_id)
    shape = "".join(f.now.label[0] for f in flips)  # "g": starts passing, "b": starts failing
    fixed = next((f.after for f in flips if f.now is State.GOOD), None)
    broken = next((f.after for f in flips if f.now is State.BAD), None)
    if shape not in ("g", "b", "bg"):
        return None
    bad = tuple(v for v in matrix.versions if matrix.cell(test_id, v).state is State.BAD)
    return History(fixed, broken, bad)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def entry_id(test: SuiteTest) -> str:
    """``test_autograd.py::TestAutograd::test_sort_grad`` -> ``mlx-test-autograd-sort-grad``;
    ``test_x.py::TestA::test_foo`` -> ``mlx-test-x-a-foo`` (the class, where the file's name
    does not say it)."""
    stem = test.file.stem.removeprefix("test_")
    cls = (test.cls or "").removeprefix("Test")
    parts = [stem, *([cls] if _slug(cls) not in ("", _slug(stem)) else [])]
    return "mlx-test-" + _slug("-".join([*parts, test.name.removeprefix("test_")]))


def entry_names(tests: Sequence[SuiteTest]) -> dict[str, str]:
    """Each test's entry id, unique among ``tests``: two that would share one (``test_a_b``
    and ``test_a__b``) both get a short hash of their test id added."""
    plain = {t.id: entry_id(t) for t in tests}
    shared = {name for name, n in Counter(plain.values()).items() if n > 1}
    return {
        i: f"{name}-{hashlib.sha256(i.encode()).hexdigest()[:8]}" if name in shared else name
        for i, name in plain.items()
    }


def check_targets(tests: Sequence[SuiteTest], directory: Path) -> None:
    """Refuse, before anything runs, a directory that holds a file an entry would be written to
    (a draft edited by hand since, say): UsageError naming it; ``--force`` replaces them."""
    taken = [p for n in entry_names(tests).values() if (p := directory / f"{n}.yaml").exists()]
    if taken:
        more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
        raise UsageError(
            f"{shown(taken[0])}{more}: already there, and --emit would write a test's entry there; "
            "move it away, or give --force to replace it"
        )


def _relative(test: SuiteTest) -> str:
    return test.id.split("::")[0]


def entry_data(
    test: SuiteTest,
    code: str,
    comment: str,
    past: History,
    matrix: Matrix,
    checkout: Checkout | None,
    name: str | None = None,
) -> dict[str, Any]:
    """The draft corpus entry of a flipping test, keys in the corpus's usual order (its id
    ``name``, by default :func:`entry_id`'s)."""
    outcomes = sorted(
        {matrix.cell(test.id, v).outcome.split(" ")[0] for v in past.bad},
        key=lambda label: list(Outcome).index(Outcome.from_label(label)),
    )
    changes = []
    if past.introduced_in is not None:
        changes.append(f"starts failing on {past.introduced_in}")
    if past.fixed_in is not None:
        changes.append(f"passes from {past.fixed_in}")
    where = f"MLX {checkout.revision}'s {TESTS}/{test.id}" if checkout else test.id
    summary = [
        f"Harvested from {where}, which fails on mlx {', '.join(map(str, past.bad))} "
        f"({' or '.join(outcomes)}) and {' and '.join(changes)} on {matrix.backend}.",
    ]
    if comment:
        summary.append(f"The test says: {' '.join(comment.split())}")
    summary.append("Draft: rewrite this summary in our words before adding it to the corpus.")
    backend = family(matrix.backend)  # the corpus names cuda13 cuda
    bug: dict[str, Any] = {
        "outcome": outcomes[0] if len(outcomes) == 1 else outcomes,
        "affects": [backend],
        "fixed_in": str(past.fixed_in) if past.fixed_in else None,
    }
    if past.introduced_in is not None:
        bug["introduced_in"] = str(past.introduced_in)
    data: dict[str, Any] = {
        "id": name or entry_id(test),
        "title": f"{test.title} of {_relative(test)} ({', '.join(changes)})",
        "summary": " ".join(summary),
    }
    notes = [f"Harvested by mgradcheck tests --emit from {where}"]
    origin = added_by(checkout, _relative(test), test.name) if checkout else None
    if checkout is not None:
        url = checkout.file_url(_relative(test), test.line)
        upstream: dict[str, Any] = {"report": origin.url if origin else url}
        if origin is not None:
            upstream["fix"] = commit_url(origin.commit)
            upstream["related"] = [url]
            notes.append(f"the test was added by {origin.commit[:12]} ({origin.subject})")
        data["upstream"] = upstream
    else:
        first_bad = past.bad[0]
        data["found_by"] = {
            "tool": "mgradcheck tests",
            "mlx": str(first_bad),
            "backend": backend,
            "date": _dt.date.today().isoformat(),
            "case": test.id,
        }
    data["origin"] = f"{checkout.revision} {TESTS}/{test.id}" if checkout else test.id
    stem = _relative(test).rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
    data["tags"] = ["upstream-test", stem]
    data["bug"] = bug
    data["timeout"] = TIMEOUT
    data["notes"] = (
        "; ".join(notes) + ". The code is the test's body made self-contained: its self.assert* "
        "calls mapped onto the check helpers (or the small functions defined above the body), "
        "its class's helper methods inlined as functions."
    )
    data["code"] = code
    return data


def _evidence(runs: Sequence[tuple[Version, str, str]], backend: str) -> list[dict[str, Any]]:
    return [
        {"mlx": str(v), "backend": backend, "outcome": outcome, "note": note[:120]}
        for v, outcome, note in runs
    ]


@dataclass(frozen=True)
class _Target:
    """Where a harvest writes: the directory, and whether it may replace a file found there."""

    directory: Path
    scratch: Path  # the run's own, where each draft is checked before it is written
    force: bool


def harvest(
    matrix: Matrix,
    tests: Sequence[SuiteTest],
    checkout: Checkout | None,
    settings: Settings,
    directory: Path,
    progress: Progress,
    force: bool = False,
    on_line: Callable[[str], None] | None = None,
) -> list[str]:
    """Write an entry for each test that flips and reproduces; one line per test (each also
    given to ``on_line`` as it is known, so that an interrupt does not hide what was written)."""
    by_id = {t.id: t for t in tests}
    names = entry_names(tests)
    flipping = [by_id[e.id] for e in matrix.entries if e.id in by_id and matrix.flips(e.id)]
    lines: list[str] = []

    def tell(line: str) -> None:
        lines.append(line)
        if on_line is not None:
            on_line(line)

    if not flipping:
        tell("no test flips between the releases run: nothing to harvest")
        return lines
    directory.mkdir(parents=True, exist_ok=True)
    sources: dict[Path, Source] = {}
    progress.start(f"harvest: {len(flipping)} tests that flip", total=len(flipping))
    try:
        with run_scratch() as scratch:
            target = _Target(directory, scratch, force)
            for test in flipping:
                progress.status(test.id)
                tell(_one(test, names[test.id], matrix, checkout, settings, target, sources))
                progress.advance()
    finally:
        progress.stop()
    return lines


def _one(
    test: SuiteTest,
    name: str,
    matrix: Matrix,
    checkout: Checkout | None,
    settings: Settings,
    target: _Target,
    sources: dict[Path, Source],
) -> str:
    past = history(matrix, test.id)
    if past is None:
        shape = ", ".join(f.sentence() for f in matrix.flips(test.id))
        return f"not harvested: {test.id}: flips more than a break and a fix ({shape})"
    try:
        source = sources.get(test.file) or Source.parse(test.file)
        inlined = inline(source, test.cls, test.name, sources)
    except NotInlinable as exc:
        return f"not harvested: {test.id}: {exc}"
    comment = inlined.comment or (inlined.docstring or "")
    data = entry_data(test, inlined.code, comment, past, matrix, checkout, name)
    path = target.directory / f"{name}.yaml"
    draft = target.scratch / f"{name}.yaml"  # checked there; only a verified entry is written
    header = "# Emitted by mgradcheck tests --emit; review before adding to the corpus.\n"
    write_text(draft, header + dump(data))
    try:
        (entry,) = load([draft])
    except CorpusError as exc:
        return f"not harvested: {test.id}: the entry does not validate: {exc.lines()[0]}"
    seen = []
    for version in matrix.versions:
        wanted = matrix.cell(test.id, version).state
        if wanted is State.UNKNOWN:
            continue
        (run,) = run_release(version, [entry], settings)
        judged = judge_run(entry, run, RegressOn.SIGNATURE)
        seen.append((version, judged.outcome, judged.reason))
        if judged.state is not wanted:
            test_outcome = matrix.cell(test.id, version).outcome
            return (
                f"not harvested: {test.id}: as an entry it is {judged.state.label} on {version} "
                f"({judged.outcome}: {judged.reason}) where the test is {wanted.label} ({test_outcome})"
            )
    data["evidence"] = _evidence(seen, family(matrix.backend))
    text = header + dump(data)
    write_text(draft, text)
    load([draft])  # still valid with its evidence
    if path.exists() and not target.force:  # put there while this harvest ran
        return f"not harvested: {test.id}: {path} is already there (--force replaces it)"
    write_text(path, text)
    fixed = f", fixed in {past.fixed_in}" if past.fixed_in else ""
    broken = f", broken in {past.introduced_in}" if past.introduced_in else ""
    return f"wrote {path}: {test.id}{broken}{fixed}; reproduces as an entry on {len(seen)} releases"


__all__ = [
    "History",
    "check_targets",
    "entry_data",
    "entry_id",
    "entry_names",
    "harvest",
    "history",
]
