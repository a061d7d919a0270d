"""Text shared by the report writers: cleaned output tails and one entry's failure details.

Crash logs carry NULs, ANSI colour codes and, through JSON, even lone
surrogates; JUnit (XML 1.0) cannot hold them and Markdown would show them as
noise, so every writer passes child output through :func:`clean`.
"""

from __future__ import annotations

import re

from mgradcheck.run.display import escape_character
from mgradcheck.run.observation import Observation
from mgradcheck.run.results import EntryResult

# CSI sequences (colours, cursor moves), OSC sequences (titles, links), then lone escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?")
# Everything outside the XML 1.0 character set (tab, newline and CR are kept), listed: its
# complement ("[^\t\n\r\x20-\ud7ff...]") takes ten times as long to compile, at every start.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

TAIL_CHARS = 4000


def clean(text: str) -> str:
    """``text`` without ANSI escapes or characters illegal in XML 1.0."""
    return _ILLEGAL.sub("", _ANSI.sub("", text))


def xml_document(text: str) -> str:
    """A serialised XML document made well-formed whatever its text holds.

    ElementTree writes control characters and lone surrogates as they are, and
    XML 1.0 forbids them anywhere: an id, a path, an environment string or a
    label that carries one (ESC, BEL) would make the whole file unreadable. Each
    becomes a visible escape (``\\x1b``), legal in text and attributes alike.
    """
    return _ILLEGAL.sub(escape_character, text)


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``, saying how much was cut."""
    text = clean(text)
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} characters not shown ...]\n" + text[-limit:]


def one_line(text: str, width: int) -> str:
    """``text`` as one cleaned line of at most ``width`` characters."""
    line = " ".join(clean(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def telling_run(result: EntryResult) -> Observation | None:
    """The run that gave the entry its outcome (the first crash among passes, say)."""
    return next((r for r in result.runs if r.outcome is result.outcome), None)


def details(result: EntryResult, limit: int = TAIL_CHARS, streams: bool = True) -> str:
    """What a CI log or a pytest failure should show about one entry: why, and what it printed.

    ``streams=False`` leaves out stdout and stderr, for formats that hold them elsewhere.
    """
    env = result.environment
    judgement = result.judgement
    lines = [
        f"{result.standing.label}: {clean(result.reason)}",
        f"{'entry' if judgement is not None else 'test'}: {result.id} ({result.path})",
        f"outcome: {result.outcome_text}" + (" (flaky)" if result.flaky else ""),
    ]
    if judgement is not None:
        lines.append(
            f"bug signature: {result.signature or '?'}; bug expected here: "
            + ("yes" if judgement.bug_expected else "no")
        )
    lines.append(f"environment: {env.label} on {env.device or '?'} ({env.platform})")
    run = telling_run(result)
    if run is not None:
        if run.signal:
            lines.append(f"signal: {run.signal}")
        if run.exit_status is not None:
            lines.append(f"exit status: {run.exit_status}")
        texts = [("traceback", run.traceback)]
        if streams:
            texts += [("stderr", run.stderr), ("stdout", run.stdout)]
        for name, text in texts:
            if text.strip():
                lines += [f"--- {name} (tail) ---", tail(text.rstrip(), limit)]
    return "\n".join(lines)
