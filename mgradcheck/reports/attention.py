"""What a run shows when it ends: the results that need attention, each whole, and one summary.

As pytest ends a run: what passed is counted, not listed; what needs a person
(a REGRESSED, FIXED or UNEXPECTED verdict, a test that failed, a flaky result,
a timeout) is shown with its whole reason, wrapped at the width when one is
known and never cut, so a CI log holds every word of it. A FIXED entry says
what to do next. Entries an interrupt kept from running are one line, not a
row each. ``-v`` shows the table of every result instead (:mod:`.table`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import table
from mgradcheck.reports.text import telling_run
from mgradcheck.run.display import known_width, plain_stream, printable
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.wording import wrap

INDENT = "    "


def standing_failed(result: EntryResult) -> bool:
    """Whether the result's run is the failure that needs reading (not a FIXED entry's pass)."""
    return result.standing in (Verdict.REGRESSED, Verdict.UNEXPECTED) or (
        isinstance(result.standing, Outcome) and result.standing.is_failure
    )


def needs_attention(result: EntryResult) -> bool:
    """Whether a person should read this result: a failing standing, a flaky or a timed-out
    one. What did not run is counted on a line of its own (:func:`.table.not_run_line`)."""
    standing = result.standing
    if standing in (Verdict.NOT_RUN, Outcome.NOT_RUN):
        return False
    return standing.is_failure or result.flaky or result.outcome is Outcome.TIMEOUT


def _fixed_in_line(path: str) -> int | None:
    """The line of ``fixed_in:`` (else of ``bug:``) in the entry's file, if it can be read."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for key in ("fixed_in:", "bug:"):
        for number, line in enumerate(lines, 1):
            if line.strip().startswith(key):
                return number
    return None


def next_steps(result: EntryResult, corpus: Sequence[Path]) -> list[str]:
    """For a FIXED entry: where its record changes, and the command that finds the release.
    Paths and commands stand whole on lines of their own, for copying."""
    if result.judgement is None or result.verdict is not Verdict.FIXED:
        return []
    line = _fixed_in_line(result.path)
    where = f"{result.path}:{line}" if line else result.path
    import shlex  # only here: a run with no FIXED entry never loads it

    corpus_args = "".join(f" --corpus {shlex.quote(str(p))}" for p in corpus)
    return [
        "next: record the first release where the bug is gone as bug.fixed_in, here:",
        f"{INDENT}{where}",
        "and find that release with:",
        f"{INDENT}mgradcheck bisect {result.id}{corpus_args}",
    ]


def block(result: EntryResult, width: int | None, corpus: Sequence[Path] = ()) -> list[str]:
    """One result that needs attention: its standing, id, outcome and time on the first line,
    then its whole reason and, for a FIXED entry, what to do next."""
    standing = result.standing
    flaky = " (flaky)" if result.flaky else ""
    head = f"{standing.label} {printable(result.id)}  {result.outcome_text}{flaky}, "
    lines = [f"{head}{result.duration:.1f}s"]
    lines += wrap(printable(result.reason).rstrip() or "(no reason given)", width, INDENT)
    # The reason holds the first line of what the child said; the rest (a check's observed and
    # expected values, a traceback's last lines) follows it, so the log has every word of it.
    run = telling_run(result)
    more = run.message.strip().splitlines()[1:] if run is not None and run.message else []
    if more and standing_failed(result):
        lines += wrap(printable("\n".join(more)), width, INDENT + "  ")
    for step in next_steps(result, corpus):
        # A command or a path is never wrapped: a terminal's soft wrap still copies whole.
        lines += [INDENT + step] if step.startswith(INDENT) else wrap(step, width, INDENT)
    return lines


def show(
    report: Report, stderr: bool = False, verbose: bool = False, corpus: Sequence[Path] = ()
) -> None:
    """Print the end of a run on standard output (``stderr``: on standard error): with
    ``verbose`` the table of every result, else those that need attention; then how many did
    not run, and the summary line."""
    if verbose:
        table.show(report, stderr=stderr)
        return
    stream = sys.stderr if stderr else sys.stdout
    width = known_width(stream)
    colour = not plain_stream(stream)  # a terminal's, or asked for (FORCE_COLOR), as Rich does
    shown = [r for r in report.results if needs_attention(r)]
    for result in shown:
        first, *rest = block(result, width, corpus)
        label = result.standing.label
        click.echo(
            _styled(label, result.standing.colour) + first[len(label) :], file=stream, color=colour
        )
        for line in rest:
            click.echo(line, file=stream)
    *before, summary = table.summary(report)
    for line in before:
        click.echo(line, file=stream)
    # The summary takes the colour of the first that needs attention (the enums' order puts
    # the worst first), as pytest's closing line turns red; green when nothing does.
    order = {standing: n for n, standing in enumerate([*Verdict, *Outcome])}
    worst = min(shown, key=lambda r: order[r.standing], default=None)
    tone = worst.standing.colour if worst is not None else "green"
    click.echo(_styled(summary, tone), file=stream, color=colour)


def _styled(text: str, colour: str) -> str:
    return click.style(text, fg=None if colour == "dim" else colour, bold=True)


__all__ = ["block", "needs_attention", "next_steps", "show"]
