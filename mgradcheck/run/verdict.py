"""The one place where an expectation turns outcomes into a verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck.corpus.entry import Bug, Entry, Requirements
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.observation import Environment, Observation


@dataclass(frozen=True)
class Judgement:
    """What a group of runs of one entry means against the corpus's expectation."""

    verdict: Verdict
    reason: str
    bug_expected: bool
    flaky: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.label,
            "reason": self.reason,
            "bug_expected": self.bug_expected,
            "flaky": self.flaky,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Judgement:
        return cls(
            Verdict.from_label(data["verdict"]),
            data.get("reason", ""),
            bool(data.get("bug_expected", False)),
            bool(data.get("flaky", False)),
        )


def unmet_requirement(requires: Requirements, env: Environment) -> str | None:
    """Why ``env`` cannot run an entry with these requirements, or None."""
    if env.mlx is None:
        return "MLX is not installed in this interpreter"
    if requires.backends is not None and env.backend not in requires.backends:
        wanted = " or ".join(requires.backends) or "no backend"
        return f"needs {wanted}; this run is on {env.backend}"
    if requires.mlx is not None:
        try:
            ok = requires.mlx.contains(Version(env.mlx), prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            return f"needs mlx {requires.mlx}; this is {env.mlx}"
    if requires.float64 and not env.float64:
        return "needs float64, which this MLX lacks"
    return None


def bug_expected(bug: Bug, env: Environment) -> bool:
    """Whether the bug should reproduce under ``env`` (an unreadable version counts as newest)."""
    backend = env.backend or "cpu"
    try:
        version = Version(env.mlx) if env.mlx else None
    except InvalidVersion:
        version = None
    if version is None:
        return backend in bug.affects and bug.fixed_in.get(backend) is None
    return bug.expected(version, backend)


MATCH_CHARS = 64 * 1024  # of the evidence a regex searches: its head and tail
MATCH_SECONDS = 1.0


class MatchTimeout(Exception):
    """A regex ran past :data:`MATCH_SECONDS`: the pattern's fault (catastrophic backtracking)."""


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` occurs in ``text``, at a bounded cost whatever either holds.

    Only the first and last :data:`MATCH_CHARS` characters are searched, and the
    search stops after :data:`MATCH_SECONDS` (raising :class:`MatchTimeout`). The
    ``regex`` module enforces the time limit inside its matcher, on every
    platform, without a thread or a process per search; its default syntax is
    ``re``'s.
    """
    import regex  # only for a signature: a run whose entries have none never loads it

    if len(text) > MATCH_CHARS:
        head = MATCH_CHARS // 4
        text = text[:head] + "\n" + text[-(MATCH_CHARS - head) :]
    try:
        return regex.search(pattern, text, timeout=MATCH_SECONDS) is not None
    except TimeoutError:
        raise MatchTimeout(
            f"the regex {pattern!r} ran past its {MATCH_SECONDS:g}s limit on "
            f"{len(text)} characters (catastrophic backtracking? see 'mgradcheck validate')"
        ) from None


def matches(bug: Bug, run: Observation) -> bool:
    """Whether one run shows the bug's signature: its outcome, and its regex if any."""
    if run.outcome not in bug.outcomes:
        return False
    return bug.match is None or search(bug.match, run.evidence_text)


def counts(runs: Sequence[Observation]) -> str:
    """``crash 3/10, pass 7/10`` for repeats, the bare label for one run."""
    tally = Counter(r.outcome for r in runs)
    if len(runs) == 1:
        return runs[0].outcome.label
    ordered = [o for o in Outcome if o in tally]
    return ", ".join(f"{o.label} {tally[o]}/{len(runs)}" for o in ordered)


def classify(entry: Entry, runs: Sequence[Observation], env: Environment) -> Judgement:
    """Turn the runs of one entry into a verdict. Pure: no I/O, no clock."""
    expected = bug_expected(entry.bug, env)
    if not runs or any(r.outcome is Outcome.NOT_RUN for r in runs):
        return Judgement(
            Verdict.NOT_RUN, "the run was stopped before this entry finished", expected
        )
    if all(r.outcome is Outcome.SKIP for r in runs):
        return Judgement(Verdict.SKIPPED, runs[0].reason, expected)
    harness = [r for r in runs if r.harness_error]
    if harness:
        return Judgement(Verdict.UNEXPECTED, f"mgradcheck error: {harness[0].reason}", expected)
    flaky = len({r.outcome for r in runs}) > 1
    try:
        hits = [r for r in runs if matches(entry.bug, r)]
    except MatchTimeout as exc:
        return Judgement(Verdict.UNEXPECTED, f"corpus error: bug.match: {exc}", expected, flaky)
    others = [r for r in runs if r.outcome is not Outcome.PASS and r not in hits]
    tally = counts(runs)
    signature = entry.bug.signature_label()

    if others:
        odd = others[0]
        what = f"{odd.outcome.label}: {odd.reason}" if odd.reason else odd.outcome.label
        return Judgement(
            Verdict.UNEXPECTED,
            f"{what} (the bug's signature is {signature}; {tally})",
            expected,
            flaky,
        )
    if expected:
        if hits:
            shown = hits[0].reason
            note = f"reproduced {len(hits)}/{len(runs)}: " if len(runs) > 1 else ""
            return Judgement(Verdict.AS_EXPECTED, f"{note}{shown}", expected, flaky)
        fixed = _fixed_in_text(entry.bug, env)
        return Judgement(
            Verdict.FIXED,
            f"expected {signature} here{fixed}, but every run passed ({tally})",
            expected,
            flaky,
        )
    if hits:
        return Judgement(
            Verdict.REGRESSED,
            f"the bug is back: {hits[0].reason} ({len(hits)}/{len(runs)} runs)",
            expected,
            flaky,
        )
    return Judgement(
        Verdict.AS_EXPECTED, "bug absent" + (f" ({tally})" if len(runs) > 1 else ""), expected
    )


def _fixed_in_text(bug: Bug, env: Environment) -> str:
    fixed = bug.fixed_in.get(env.backend or "cpu")
    return f" (its fix is recorded in {fixed})" if fixed else " (no fix recorded)"
