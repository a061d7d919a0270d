"""What a change to MLX flips: two reports of the same corpus, before (base) and after (head).

An MLX contributor runs the corpus on the commit a branch starts from and on
the branch (``run --mlx``, ``--json``), and this says which entries the change
fixed (the bug no longer reproduces), which it broke (a verdict that needs a
person where the base was as expected, or a pass that became a bug), and
which fail differently (another outcome or reason); entries in one report only
are named as such. A result is matched by its entry and backend, so the two
reports may come from different MLX versions; a report holding one entry
twice on one backend (a merge of releases) is refused: it has no one answer.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import markdown
from mgradcheck.reports.text import one_line
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.wording import count

REASON_CHARS = 160


class Change(enum.Enum):
    """How one entry differs from base to head, in display order."""

    # label, what it means, whether it fails the comparison (exit status 1)
    # fmt: off
    BROKEN = ("broken", "as expected in the base, REGRESSED or UNEXPECTED in the head; "
              "or passed in the base and reproduces a bug in the head", True)
    FIXED = ("fixed", "the bug reproduced in the base and no longer does in the head", False)
    CHANGED = ("changed", "another outcome, verdict or reason in the head", False)
    ONLY_BASE = ("only in base", "in the base report only", False)
    ONLY_HEAD = ("only in head", "in the head report only", False)
    # fmt: on

    def __init__(self, label: str, meaning: str, is_failure: bool) -> None:
        self.label = label
        self.meaning = meaning
        self.is_failure = is_failure


@dataclass(frozen=True)
class Difference:
    """One entry on one backend whose answer differs between the reports."""

    change: Change
    id: str
    backend: str
    base: EntryResult | None
    head: EntryResult | None

    @property
    def reason(self) -> str:
        """Why the head stands as it does, and the base's reason when it said another (the
        base's alone for an entry only there)."""
        if self.head is None or self.base is None:
            shown = self.head or self.base
            return shown.reason if shown is not None else ""
        if self.base.reason == self.head.reason:
            return self.head.reason
        return f"{self.head.reason} (base: {self.base.reason})"


@dataclass(frozen=True)
class Comparison:
    """Everything that differs from ``base`` to ``head``, and how much did not."""

    base: str  # what the base ran on: its environments' labels
    head: str
    differences: tuple[Difference, ...]
    unchanged: int

    @property
    def broke(self) -> bool:
        return any(d.change.is_failure for d in self.differences)

    def of(self, change: Change) -> list[Difference]:
        return [d for d in self.differences if d.change is change]

    def summary_line(self) -> str:
        parts = [f"{len(self.of(c))} {c.label}" for c in Change if self.of(c)]
        parts.append(f"{self.unchanged} unchanged")
        return ", ".join(parts)


Key = tuple[str, str]  # entry id, backend


def _keyed(report: Report, name: str) -> dict[Key, EntryResult]:
    found: dict[Key, EntryResult] = {}
    for result in report.results:
        key = (result.id, result.environment.backend or "?")
        if key in found:
            raise ValueError(
                f"{name}: entry {result.id!r} is there twice on {key[1]} (a merge of several "
                "releases?); compare the report of one run with another's"
            )
        found[key] = result
    return found


def _bug(outcome: Outcome) -> bool:
    return outcome in Outcome.bug_outcomes()


def change(base: EntryResult, head: EntryResult) -> Change | None:
    """How ``head`` differs from ``base`` (the same entry), or None when it does not."""
    judged = base.judgement is not None and head.judgement is not None
    if (judged and head.verdict is Verdict.FIXED and base.verdict is not Verdict.FIXED) or (
        _bug(base.outcome) and head.outcome is Outcome.PASS
    ):
        return Change.FIXED
    if (
        judged
        and base.verdict is Verdict.AS_EXPECTED
        and head.verdict in (Verdict.REGRESSED, Verdict.UNEXPECTED)
    ) or (base.outcome is Outcome.PASS and _bug(head.outcome)):
        return Change.BROKEN
    if (base.standing, base.outcome_text, base.reason) != (
        head.standing,
        head.outcome_text,
        head.reason,
    ):
        return Change.CHANGED
    return None


def _label(report: Report) -> str:
    return ", ".join(e.label for e in report.environments) or "no environment"


def compare(base: Report, head: Report, names: Sequence[str] = ("base", "head")) -> Comparison:
    """Every entry that differs from ``base`` to ``head``; ValueError when they cannot be compared."""
    if base.results and head.results and base.judged != head.judged:
        raise ValueError(
            f"cannot compare {names[0]} with {names[1]}: one is a report of corpus entries, the "
            "other of a suite's tests"
        )
    before, after = _keyed(base, names[0]), _keyed(head, names[1])
    differences = []
    unchanged = 0
    for key in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(key), after.get(key)
        if old is None or new is None:
            kind: Change | None = Change.ONLY_HEAD if old is None else Change.ONLY_BASE
        else:
            kind = change(old, new)
        if kind is None:
            unchanged += 1
        else:
            differences.append(Difference(kind, key[0], key[1], old, new))
    ordered = sorted(differences, key=lambda d: list(Change).index(d.change))
    return Comparison(_label(base), _label(head), tuple(ordered), unchanged)


def _state(result: EntryResult | None) -> str:
    if result is None:
        return "-"
    return f"{result.standing.label} ({result.outcome_text})"


def render_text(comparison: Comparison) -> str:
    """A short table for a terminal or a CI log: one line per entry that differs."""
    lines = [f"base: {comparison.base}", f"head: {comparison.head}"]
    for kind in Change:
        found = comparison.of(kind)
        if not found:
            continue
        lines += ["", f"{kind.label.upper()} ({len(found)}): {kind.meaning}"]
        width = max(len(d.id) for d in found)
        for d in found:
            lines.append(
                f"  {one_line(d.id, 80):<{width}}  {d.backend}  {_state(d.base)} -> "
                f"{_state(d.head)}  {one_line(d.reason, REASON_CHARS)}"
            )
    differ = len(comparison.differences)
    verb = "differs" if differ == 1 else "differ"
    lines += ["", f"{count(differ, 'entry')} {verb}: {comparison.summary_line()}"]
    return "\n".join(lines) + "\n"


def render_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown for a pull request's description: what the reports hold
    (ids, reasons, labels) is escaped, so it shows as written and mentions nobody."""
    lines = [
        f"### mgradcheck: {markdown.cell(comparison.summary_line())}",
        "",
        f"Base: {markdown.cell(comparison.base)}  ",
        f"Head: {markdown.cell(comparison.head)}",
        "",
    ]
    for kind in Change:
        found = comparison.of(kind)
        if not found:
            continue
        lines += [f"#### {kind.label.capitalize()} ({len(found)})", "", f"*{kind.meaning}*", ""]
        lines += ["| entry | backend | base | head | reason |", "|---|---|---|---|---|"]
        lines += [
            f"| {markdown.code(d.id)} | {markdown.cell(d.backend)} | {markdown.cell(_state(d.base))} "
            f"| {markdown.cell(_state(d.head))} | {markdown.cell(d.reason)} |"
            for d in found
        ]
        lines.append("")
    if not comparison.differences:
        lines += ["No entry differs.", ""]
    return "\n".join(lines)


def write_markdown(comparison: Comparison, path: Path) -> None:
    write_text(path, render_markdown(comparison))


__all__ = [
    "Change",
    "Comparison",
    "Difference",
    "change",
    "compare",
    "render_markdown",
    "render_text",
    "write_markdown",
]
