"""The bug a reproducer shows, read off its runs on several releases, and where it flips.

Pure. The signature is what the newest release that misbehaves did: its outcome
(with its kin: a memory-unsafe bug crashes on one release and fails a check on
another) and the words its messages share; an older release that misbehaves
otherwise (an API it lacks) is not taken for the bug.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.version import Version

from mgradcheck.corpus.entry import Bug
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import State
from mgradcheck.releases.release_matrix import Flip
from mgradcheck.run.observation import Observation

MIN_MATCH = 8  # shorter shared text says nothing about the bug
MAX_MATCH = 80
FALLBACK = {Outcome.CRASH: "killed by SIG"}


def _misbehaved(runs: Sequence[Observation]) -> Observation | None:
    return next((r for r in runs if r.outcome.kin), None)


def _shared_text(lines: Sequence[str]) -> str:
    """The head the lines share, cut back to a whole word when they differ after it."""
    first, last = min(lines), max(lines)  # the lines' shared head is these two's
    size = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    prefix = first[:size]
    if any(line != prefix for line in lines):
        prefix = re.sub(r"[\w.+-]*$", "", prefix)
    # The numbers a message shows (observed values, sizes) vary with the release and the
    # input; the words before them name the bug.
    number = re.search(r"(?<![\w.])[-+]?\.?\d", prefix)
    if number is not None and number.start() >= MIN_MATCH:
        prefix = prefix[: number.start()].rstrip(" [(,'\"")
    prefix = prefix.rstrip()
    if len(prefix) > MAX_MATCH:
        prefix = prefix[:MAX_MATCH].rsplit(" ", 1)[0]
    prefix = prefix.rstrip()
    return prefix if len(prefix) >= MIN_MATCH else ""


def _escape(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")  # spaces need no escape outside verbose mode


def _said(run: Observation) -> str:
    """The line of a run that ``match`` will find again: an error's last traceback line
    (``ValueError: ...``), else its message (a failed check's, or ``killed by SIGSEGV``)."""
    if run.outcome is Outcome.ERROR:
        return run.reason
    return run.message.strip().splitlines()[0] if run.message.strip() else ""


def signature(runs_by_release: Sequence[Sequence[Observation]]) -> Bug | None:
    """The bug as the newest misbehaving release shows it: its outcome (and its kin), and the
    text the messages of every such run share; None when no release misbehaves."""
    seen = [r for runs in runs_by_release if (r := _misbehaved(runs)) is not None]
    if not seen:
        return None
    newest = seen[-1]
    kin = [
        r
        for r in seen
        if r.outcome in newest.outcome.kindred()
        and (newest.outcome is not Outcome.ERROR or r.exc_type == newest.exc_type)
    ]
    outcomes = tuple(o for o in Outcome.bug_outcomes() if any(r.outcome is o for r in kin))
    parts = []
    for outcome in outcomes:
        text = _shared_text([_said(r) for r in kin if r.outcome is outcome])
        if text:
            parts.append(_escape(text))
        elif outcome in FALLBACK:
            parts.append(FALLBACK[outcome])
        elif outcome is Outcome.ERROR and newest.exc_type:
            parts.append(_escape(newest.exc_type))
        else:
            return Bug(outcomes)  # nothing shared to match on: the outcome alone
    return Bug(outcomes, "|".join(parts))


def boundaries(flips: Sequence[Flip]) -> tuple[Version | None, Version | None, str | None]:
    """(introduced_in, fixed_in, why neither can be told) from where the entry flips."""
    steps = [f.now for f in flips]
    if steps == [State.GOOD]:
        return None, flips[0].after, None
    if steps == [State.BAD]:
        return flips[0].after, None, None
    if steps == [State.BAD, State.GOOD]:
        return flips[0].after, flips[1].after, None
    if not steps:
        return None, None, None
    said = "; ".join(f.sentence() for f in flips)
    return None, None, f"the signature flips {len(flips)} times ({said}): flaky? set repeat"
