"""``mgradcheck list --markdown``: the corpus as the manual's table, grouped by what each bug
is about, with where it stands on Linux as the entries' own evidence says.

The manual builds its corpus page from this at every build, so the page says what the
YAML says and never more: a range of releases is the releases an entry's evidence ran,
and "fixed in" is the entry's ``bug.fixed_in``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import groupby

from packaging.version import InvalidVersion, Version

from mgradcheck.corpus.entry import Entry, Evidence
from mgradcheck.outcomes import Outcome
from mgradcheck.reports.markdown import cell

# An entry goes to the first section whose tags it carries, so the narrower subjects come
# before the transforms nearly every entry uses (a shapeless-compile bug is tagged compile,
# often grad or vmap too). A guard (a bug on no backend) goes last, whatever its tags.
SECTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("Export", frozenset({"export"})),
    ("Threads", frozenset({"threads"})),
    ("Shapeless compile", frozenset({"shapeless"})),
    (
        "Transformed functions and their arguments",
        frozenset({"python-api", "python", "containers", "leak", "lazy-graph"}),
    ),
    ("mx.compile", frozenset({"compile"})),
    ("vmap", frozenset({"vmap"})),
    ("Convolutions", frozenset({"convolution", "conv", "convolve"})),
    ("Views", frozenset({"views"})),
    ("Forward mode (jvp)", frozenset({"jvp", "forward-mode"})),
    ("Reverse mode and second order", frozenset({"vjp", "grad", "second-order"})),
)
OTHER = "Other"
GUARDS = "Guards: bugs MLX should never have"

# What each failing outcome of the evidence is called in a row.
_VERBS = {o.label: o.verb for o in Outcome.bug_outcomes()}
# More runs of alternating outcomes than this read as one range ("crashes/fails 0.26.1-0.31.2").
_MAX_RUNS = 2
RANGE_DASH = "\u2013"  # an en dash, as a range of releases is printed
_ISSUE = re.compile(r"https://github\.com/[^/]+/([^/]+)/(?:issues|pull)/(\d+)")


def section(entry: Entry) -> str:
    """The heading an entry is listed under."""
    if not entry.bug.affects:
        return GUARDS
    tags = set(entry.tags)
    return next((title for title, wanted in SECTIONS if tags & wanted), OTHER)


def _version(evidence: Evidence) -> Version:
    try:
        return Version(evidence.mlx)
    except InvalidVersion:  # a commit run by hand: not a release the ranges can place
        return Version("0")


def _span(versions: Sequence[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}{RANGE_DASH}{versions[-1]}"


def _failing(evidence: Iterable[Evidence]) -> str:
    """``fails 0.26.1-0.31.2``: the bad runs of ``evidence`` as ranges of what it ran.

    A range ends at a release that passed; one that was not run does not break it.
    """
    ran = sorted((e for e in evidence if e.outcome != "skip"), key=_version)
    parts: list[str] = []
    for bad, group in groupby(ran, key=lambda e: e.outcome in _VERBS):
        if not bad:
            continue
        runs = [
            (outcome, [e.mlx for e in same])
            for outcome, same in groupby(group, key=lambda e: e.outcome)
        ]
        if len(runs) > _MAX_RUNS:
            verbs = "/".join(sorted({_VERBS[outcome] for outcome, _ in runs}))
            parts.append(f"{verbs} {_span([v for _, vs in runs for v in vs])}")
        else:
            parts += [f"{_VERBS[outcome]} {_span(versions)}" for outcome, versions in runs]
    return ", ".join(parts)


def standing(entry: Entry) -> str:
    """Where the entry stands on Linux: ``fails 0.26.1-0.31.2, fixed in 0.32.0``."""
    cpu = [e for e in entry.evidence if e.backend == "cpu"]
    if not entry.bug.affects:
        passed = [e.mlx for e in sorted(cpu, key=_version) if e.outcome == "pass"]
        return f"a guard: passes {_span(passed)}" if passed else "a guard"
    cuda = _failing(e for e in entry.evidence if e.backend == "cuda")
    on_cuda = f" (on CUDA: {cuda})" if cuda else ""
    if "cpu" not in entry.bug.affects:
        return f"not on the CPU backend (a bug of {', '.join(entry.bug.affects)}){on_cuda}"
    failing = _failing(cpu)
    words = [failing] if failing else []
    start, fixed = entry.bug.introduced_in.get("cpu"), entry.bug.fixed_in.get("cpu")
    if start is not None:
        words.append(f"introduced in {start}")
    if fixed is not None:
        words.append(f"fixed in {fixed}")
    elif cpu:
        words.append(f"open in {max(cpu, key=_version).mlx}")
    else:
        words.append("open")
    return ", ".join(words) + on_cuda


def _link(url: str) -> str:
    found = _ISSUE.fullmatch(url)
    return f"[{found[1]}#{found[2]}]({url})" if found else f"<{url}>"


def bug_text(entry: Entry) -> str:
    """The title, as written, and where it was reported or who found it."""
    text = cell(entry.title.rstrip("."), len(entry.title))
    if entry.upstream.report is not None:
        return f"{text} ({_link(entry.upstream.report)})"
    found = f"{entry.found_by.tool}, " if entry.found_by is not None else ""
    return f"{text} (found by {found}not reported upstream yet)"


def render(entries: Sequence[Entry]) -> str:
    """The entries as one Markdown table, a bold row per section, sections in :data:`SECTIONS`'s
    order and entries in the corpus's within each."""
    order = [title for title, _ in SECTIONS] + [OTHER, GUARDS]
    lines = ["| id | bug | on Linux (CPU unless CUDA is named) |", "|---|---|---|"]
    for title in order:
        members = [e for e in entries if section(e) == title]
        if members:
            lines.append(f"| **{title}** | | |")
            lines += [f"| {e.id} | {bug_text(e)} | {standing(e)} |" for e in members]
    return "\n".join(lines) + "\n"


def figures(entries: Sequence[Entry]) -> dict[str, str]:
    """The counts the manual's corpus page gives in its prose, and its table, by name."""
    guards = sum(1 for e in entries if not e.bug.affects)
    fixed = sum(1 for e in entries if e.bug.affects and any(e.bug.fixed_in.values()))
    # 0.25.2 is the last release before 0.26 with Linux wheels.
    needs_026 = sum(
        1 for e in entries if e.requires.mlx is not None and "0.25.2" not in e.requires.mlx
    )
    return {
        "entries": str(len(entries)),
        "fixed": str(fixed),
        "open": str(len(entries) - fixed - guards),
        "guards": str(guards),
        "needs_026": str(needs_026),
        "before_026": str(len(entries) - needs_026),
        "corpus_table": render(entries).rstrip("\n"),
    }


_PLACEHOLDER = re.compile(r"\{\{ *([a-z_0-9]+) *\}\}")


def fill(page: str, entries: Sequence[Entry]) -> str:
    """``page`` with each ``{{ name }}`` replaced by its figure (or, for ``corpus_table``, the
    table); an unknown name is an error, so that a page never shows a placeholder."""
    known = figures(entries)

    def figure(found: re.Match[str]) -> str:
        if found[1] not in known:
            raise KeyError(f"no figure named {found[1]!r}; known: {', '.join(sorted(known))}")
        return known[found[1]]

    return _PLACEHOLDER.sub(figure, page)
