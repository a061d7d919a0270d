"""A Markdown summary for a CI job page (GitHub's job summary, or any Markdown viewer).

Counts first, then a table of the verdicts that need a person (the same rows
that make the exit status 1), then every entry in a collapsed table. A report
of a suite's tests has no verdicts: it counts outcomes, says how each maps
onto JUnit, and lists the tests that did not pass or skip. GitHub
refuses a step summary over 1 MiB, so rows that do not fit are dropped from
the end with a note saying how many.
"""

from __future__ import annotations

import re
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports.text import one_line
from mgradcheck.run.results import EntryResult, Report
from mgradcheck.wording import count

GITHUB_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary
REASON_CHARS = 160
_RESERVE = 600  # bytes kept back for the closing lines and the truncation note


_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
# Markdown's own punctuation: emphasis, links, images, code, strike-through, table cells.
_MARKDOWN = re.compile(r"([\\`*_\[\]~!|])")


# What starts a block at the start of a line: a heading, a list, a setext underline (a quote's
# ">" is an entity by then, a "*" escaped).
_BLOCK = re.compile(r"^(?:\d+[.)]|[#+=-])")
# An @mention notifies whoever it names (a user, a team): a zero-width joiner after the @
# shows the same text and names nobody. An e-mail address (a letter before the @) names nobody.
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")


def _literal(line: str) -> str:
    for char, escaped in _ENTITIES:
        line = line.replace(char, escaped)
    return _MENTION.sub("@\u200d", _MARKDOWN.sub(r"\\\1", line))


def cell(text: str, width: int = REASON_CHARS) -> str:
    """One line (a table cell) of text a child or a corpus controls: shown as written, never as markup."""
    return _literal(one_line(text, width))


def prose(text: str) -> str:
    """Paragraphs of text a child or a corpus controls, shown as written: no markup, no mention."""
    lines = (_literal(" ".join(line.split())) for line in text.strip().splitlines())
    return "\n".join(
        _BLOCK.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], line) for line in lines
    )


def code(text: str) -> str:
    """A code span in a table cell (backslashes are literal there: no backtick, no bare pipe)."""
    return "`" + one_line(text, REASON_CHARS).replace("`", "'").replace("|", "\\|") + "`"


def _row(r: EntryResult, columns: tuple[str, ...]) -> str:
    outcome = cell(r.outcome_text + (" (flaky)" if r.flaky else ""))
    if r.judgement is None and r.standing.is_failure:
        outcome = f"**{outcome}**"
    values = {
        "entry": code(r.id),
        "test": code(r.id),
        "environment": cell(r.environment.label),
        "outcome": outcome,
        "verdict": f"**{r.standing.label}**" if r.standing.is_failure else r.standing.label,
        "time": f"{r.duration:.1f}s",
        "reason": cell(r.reason),
    }
    return "| " + " | ".join(values[c] for c in columns) + " |"


def _header(columns: tuple[str, ...]) -> list[str]:
    align = {"time": "--:"}
    return [
        "| " + " | ".join(columns) + " |",
        "|" + "|".join(align.get(c, "---") for c in columns) + "|",
    ]


def render(report: Report, limit: int = GITHUB_LIMIT) -> str:
    """The summary, at most ``limit`` bytes of UTF-8."""
    tally = report.tally()
    lines = [f"## mgradcheck: {report.summary_line()}", ""]
    partial = report.meta.get("partial")
    if isinstance(partial, dict):
        lines += [
            f"> **Partial:** {partial.get('finished')} of {partial.get('planned')} {report.nouns} had "
            "finished when this was written; the run did not complete.",
            "",
        ]
    elif report.interrupted:
        lines += [f"> **Interrupted:** {report.nouns} marked *not run* did not finish.", ""]
    if report.judged:
        lines += ["| verdict | entries | meaning |", "|---|--:|---|"]
        lines += [f"| {v.label} | {tally[v]} | {v.meaning} |" for v in Verdict if tally[v]]
    else:
        lines += ["| outcome | tests | meaning | JUnit |", "|---|--:|---|---|"]
        lines += [
            f"| {o.label} | {tally[o]} | {o.test_meaning} | {o.junit_element() or 'passed'} |"
            for o in Outcome
            if tally[o]
        ]
    envs = ", ".join(
        f"{code(e.label)} ({cell(e.hardware or e.device or '?')}, {cell(e.platform)})"
        for e in report.environments
    )
    lines += ["", f"Environments: {envs or 'none'}", ""]

    budget = limit - _RESERVE - len("\n".join(lines).encode("utf-8"))
    dropped = 0

    def table(rows: list[EntryResult], columns: tuple[str, ...]) -> list[str]:
        nonlocal budget, dropped
        out = _header(columns)
        budget -= len("\n".join(out).encode("utf-8")) + 1
        for i, r in enumerate(rows):
            row = _row(r, columns)
            size = len(row.encode("utf-8")) + 1
            if size > budget:
                dropped += len(rows) - i
                break
            out.append(row)
            budget -= size
        return out

    unexpected = [r for r in report.results if r.standing.is_failure]
    short: tuple[str, ...] = ("entry", "environment", "outcome", "verdict", "reason")
    full: tuple[str, ...] = ("entry", "environment", "outcome", "verdict", "time", "reason")
    if not report.judged:
        short = ("test", "environment", "outcome", "reason")
        full = ("test", "environment", "outcome", "time", "reason")
    if unexpected:
        lines += [f"### Needs attention ({len(unexpected)})", ""]
        lines += table(unexpected, short)
        lines.append("")
    lines += [f"<details><summary>All {count(len(report.results), report.noun)}</summary>", ""]
    lines += table(list(report.results), full)
    lines += ["", "</details>", ""]
    if dropped:
        lines += [
            f"*{dropped} rows not shown to stay within the summary size limit; see the JSON report.*",
            "",
        ]
    return "\n".join(lines)


def write(report: Report, path: Path, prefix: str = "") -> None:
    """Write the summary after ``prefix`` (what an appended-to file held before), within the limit."""
    limit = GITHUB_LIMIT - len(prefix.encode("utf-8"))
    write_text(path, prefix + render(report, limit))
