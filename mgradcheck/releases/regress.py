"""What counts as "bad" when comparing releases, as one user-facing Enum that documents itself.

``judge`` turns the runs of one entry on one release into bad / good /
unknown. Unknown means the runs cannot say (a timeout where none is expected,
our own error, an unmet requirement, a misbehaviour that is not the one asked
about): bisect routes around it, matrix shows it as such.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mgradcheck.outcomes import Outcome

# Kept light, here and in judge(): the command line builds its --help from RegressOn.
if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.corpus.entry import Entry
    from mgradcheck.releases.on_release import ReleaseRun
    from mgradcheck.releases.store import Runnable
    from mgradcheck.run.observation import Observation


class RegressOn(enum.Enum):
    SIGNATURE = (
        "signature",
        "the entry's bug signature reproduces: its outcome, and its regex if any",
    )
    CRASH = ("crash", "a run crashes: killed by a signal, or exits without a result")
    NON_PASS = ("non-pass", "a run fails, crashes or raises: anything but a pass")
    MATCH = ("match", "a run's exception, message, traceback or stderr matches --match REGEX")
    PASS = ("pass", "every run passes: the inverse, for when the bug is the normal state")

    def __init__(self, label: str, meaning: str) -> None:
        self.label = label
        self.meaning = meaning

    @classmethod
    def from_label(cls, label: str) -> RegressOn:
        for member in cls:
            if member.label == label:
                return member
        raise ValueError(f"unknown --regress-on value {label!r}")

    @classmethod
    def epilog(cls) -> str:
        """The values of ``--regress-on`` and what each means, for ``--help``."""
        width = max(len(m.label) for m in cls)
        rows = [
            f"  {m.label:<{width}}  {m.meaning}" + (" (default)" if m is cls.SIGNATURE else "")
            for m in cls
        ]
        return "\b\nWhat counts as bad (--regress-on):\n" + "\n".join(rows)


class State(enum.Enum):
    BAD = ("bad", "red")
    GOOD = ("good", "green")
    UNKNOWN = ("unknown", "yellow")

    def __init__(self, label: str, colour: str) -> None:
        self.label = label
        self.colour = colour


def _unresolved(runs: Sequence[Observation]) -> str | None:
    """Why these runs cannot be judged at all, or None."""
    if not runs:
        return "no runs"
    for run in runs:
        if run.harness_error:
            return f"mgradcheck error: {run.reason}"
        if run.outcome is Outcome.NOT_RUN:
            return "the run was stopped"
        if run.outcome is Outcome.SKIP:
            return f"skipped: {run.reason}"
    return None


def judge(
    entry: Runnable, runs: Sequence[Observation], regress_on: RegressOn, pattern: str | None = None
) -> tuple[State, str]:
    """Bad, good or unknown for these runs, and a short reason. Pure.

    One bad run makes the release bad (bugs can be intermittent; ``repeat``
    exists for them). A timeout is unknown unless it is what is asked about.
    Only a corpus entry has a signature; anything else is judged by outcome.
    """
    from mgradcheck.corpus.entry import Entry
    from mgradcheck.run.verdict import MatchTimeout, matches, search

    why = _unresolved(runs)
    if why is not None:
        return State.UNKNOWN, why
    first = runs[0].reason or runs[0].outcome.label
    hits: list[Observation]
    if regress_on is RegressOn.SIGNATURE:
        if not isinstance(entry, Entry):
            raise ValueError(f"{entry.id} has no bug signature to regress on")
        try:
            hits = [r for r in runs if matches(entry.bug, r)]
        except MatchTimeout as exc:
            return State.UNKNOWN, str(exc)
        if hits:
            return State.BAD, hits[0].reason or entry.bug.signature_label()
        odd = next((r for r in runs if r.outcome is not Outcome.PASS), None)
        if odd is None:
            return State.GOOD, "passes"
        return State.UNKNOWN, f"{odd.outcome.label}, not the bug's signature: {odd.reason}"
    if regress_on is RegressOn.PASS:
        if all(r.outcome is Outcome.PASS for r in runs):
            return State.BAD, "passes"
        odd = next(r for r in runs if r.outcome is not Outcome.PASS)
        if odd.outcome is Outcome.TIMEOUT:
            return State.UNKNOWN, odd.reason
        return State.GOOD, odd.reason or odd.outcome.label
    if regress_on is RegressOn.CRASH:
        hits = [r for r in runs if r.outcome is Outcome.CRASH]
    elif regress_on is RegressOn.NON_PASS:
        hits = [r for r in runs if r.outcome.kin]  # a misbehaviour; a timeout is unknown
    else:
        if pattern is None:
            raise ValueError("--regress-on match needs --match REGEX")
        try:
            hits = [r for r in runs if search(pattern, r.evidence_text)]
        except MatchTimeout as exc:
            return State.UNKNOWN, str(exc)
    if hits:
        return State.BAD, hits[0].reason or hits[0].outcome.label
    timeout = next((r for r in runs if r.outcome is Outcome.TIMEOUT), None)
    if timeout is not None:
        return State.UNKNOWN, timeout.reason
    return State.GOOD, first


@dataclass(frozen=True)
class Judged:
    """One entry's runs on one release, judged: a bisect's probe, a matrix's cell."""

    version: Version
    state: State
    outcome: str  # "fail", "pass 3/3", "unavailable", "skip", "not run"
    reason: str
    cached: bool = False
    seconds: float | None = None  # what its runs took (stored ones too); None: none ran

    def to_json(self) -> dict[str, Any]:
        """The judgement; the release is the key it is filed under (a matrix cell) or added (a probe)."""
        return {
            "state": self.state.label,
            "outcome": self.outcome,
            "reason": self.reason,
            "cached": self.cached,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
        }


def judge_run(
    entry: Runnable, run: ReleaseRun, regress_on: RegressOn, pattern: str | None = None
) -> Judged:
    """A release run, judged; a release that could not run at all is unknown."""
    seconds = sum(r.duration for r in run.runs) if run.runs else None
    if run.problem is not None:
        return Judged(
            run.version, State.UNKNOWN, run.outcome_text, run.problem, run.cached, seconds
        )
    state, reason = judge(entry, run.runs, regress_on, pattern)
    return Judged(run.version, state, run.outcome_text, reason, run.cached, seconds)


@dataclass(frozen=True)
class Recorded:
    """What the corpus records about a change found between two releases, and whether it agrees."""

    key: str  # fixed_in or introduced_in
    version: Version
    agrees: bool


def recorded(
    entry: Entry, backend: str, now_good: bool, older: Version, newer: Version
) -> Recorded | None:
    """The entry's own record of a change that turns good (its fix) or bad (its introduction)."""
    key = "fixed_in" if now_good else "introduced_in"
    version = (entry.bug.fixed_in if now_good else entry.bug.introduced_in).get(backend)
    if version is None:
        return None
    return Recorded(key, version, older < version <= newer)
