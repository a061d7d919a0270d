"""Load and validate corpus files into :class:`~mgradcheck.corpus.entry.Entry` objects.

Validation is complete, not first-error-wins: every problem in every file is
collected and reported on its own line naming file, line and field. Loading
never executes anything from the corpus.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from packaging.version import Version

from mgradcheck.corpus.document import Document, SourceError
from mgradcheck.corpus.entry import (
    BACKENDS,
    Bug,
    Change,
    Entry,
    Evidence,
    FoundBy,
    Requirements,
    Upstream,
)
from mgradcheck.corpus.entry_format import (
    BUG,
    BUG_OUTCOME,
    CHANGE,
    ENTRY,
    EVIDENCE,
    EVIDENCE_OUTCOME,
    FOUND_BY,
    ID_RE,
    LINK_RE,
    REPEAT,
    REQUIRES,
    TIMEOUT,
    UPSTREAM,
    Number,
)
from mgradcheck.corpus.fields import Checker, Key
from mgradcheck.corpus.files import corpus_names
from mgradcheck.corpus.gradcheck_block import check_gradcheck
from mgradcheck.corpus.patterns import danger
from mgradcheck.corpus.signatures import one_fault, too_broad
from mgradcheck.errors import CorpusError
from mgradcheck.outcomes import Outcome
from mgradcheck.upstream import is_commit


def _upstream(c: Checker, unreported: bool) -> Upstream:
    """The upstream links; ``report`` may be missing only for a bug found here (``found_by``)."""
    if "upstream" not in c.doc.data:
        if not unreported:
            c.error((), "missing required key 'upstream' (or 'found_by' for an unreported bug)")
        return Upstream(None)
    data = c.mapping(("upstream",), UPSTREAM.fields, required=() if unreported else ("report",))
    for name in ("report", "fix"):
        if name in data and c.text(("upstream", name), data[name], optional=True):
            _check_url(c, ("upstream", name), data[name])
    related = c.strings(("upstream", "related"), data.get("related", []))
    for i, url in enumerate(related):
        _check_url(c, ("upstream", "related", i), url)
    return Upstream(report=data.get("report"), fix=data.get("fix"), related=related)


def _found_by(c: Checker) -> FoundBy | None:
    """Who found a bug that has no upstream report yet: tool, release and date."""
    if "found_by" not in c.doc.data:
        return None
    key: Key = ("found_by",)
    data = c.mapping(key, FOUND_BY.fields, FOUND_BY.required)
    tool = c.text((*key, "tool"), data.get("tool", "x")) or ""
    version = c.version((*key, "mlx"), data.get("mlx"))
    when = data.get("date")
    if isinstance(when, str):
        try:
            _dt.date.fromisoformat(when)
        except ValueError:
            c.error((*key, "date"), f"{when!r} is not a date (YYYY-MM-DD)")
    elif "date" in data:
        c.typed((*key, "date"), when, str, "a date (YYYY-MM-DD)")
    backend = data.get("backend")
    if backend is not None:
        c.choice((*key, "backend"), backend, BACKENDS)
    case = c.text((*key, "case"), data.get("case"), optional=True)
    return FoundBy(tool, str(version or ""), str(when or ""), backend, case)


def _check_url(c: Checker, key: Key, value: str) -> None:
    if not LINK_RE.fullmatch(value):
        c.error(key, f"{value!r} is not an https:// link")


def _bug(c: Checker, warnings: list[SourceError] | None) -> Bug:
    data = c.mapping(("bug",), BUG.fields, BUG.required)
    labels = c.one_or_more(("bug", "outcome"), data.get("outcome", "fail"), BUG_OUTCOME.kind.values)
    outcomes = tuple(Outcome.from_label(label) for label in labels) or (Outcome.FAIL,)
    match = c.text(("bug", "match"), data.get("match"), optional=True)
    worries: list[str | None] = []
    if match is not None:
        try:
            re.compile(match)
        except re.error as exc:
            c.error(("bug", "match"), f"invalid regex: {exc}")
            match = None
        else:
            why = danger(match) if warnings is not None else None
            worries.append(
                why
                and f"may take exponential time to search: {why}; its searches are cut off after 1 s"
            )
    # An invalid match has its error already; a missing one is too broad.
    if warnings is not None and (match is not None or "match" not in data):
        worries.append(too_broad(match, outcomes))
    if warnings is not None:
        line = c.doc.line(("bug", "match"))
        warnings += [SourceError(c.doc.path, line, "bug.match", why) for why in worries if why]
    affects = c.strings(("bug", "affects"), data.get("affects", list(BACKENDS)), BACKENDS)
    reported = c.strings(("bug", "reported_on"), data.get("reported_on", []), BACKENDS)
    fixed = c.per_backend(("bug", "fixed_in"), data.get("fixed_in"))
    introduced = c.per_backend(("bug", "introduced_in"), data.get("introduced_in"))
    for backend in BACKENDS:
        start, end = introduced.get(backend), fixed.get(backend)
        if start is not None and end is not None and start >= end:
            c.error(
                ("bug", "fixed_in"), f"{backend}: fixed_in {end} is not after introduced_in {start}"
            )
    fixed_by = _change(c, "fixed_by", data, fixed)
    introduced_by = _change(c, "introduced_by", data, introduced)
    return Bug(outcomes, match, affects, fixed, introduced, reported, fixed_by, introduced_by)


def _change(
    c: Checker, name: str, data: dict[str, Any], releases: dict[str, Version | None]
) -> Change | None:
    """``fixed_by``/``introduced_by``: the commit (and pull request) inside the release range."""
    if name not in data:
        return None
    key: Key = ("bug", name)
    fields = c.mapping(key, CHANGE.kind.fields, CHANGE.kind.required)
    commit = fields.get("commit")
    if commit is None:
        return None  # said by the mapping's check
    if not (isinstance(commit, str) and is_commit(commit)):
        c.error((*key, "commit"), f"{commit!r} is not a commit hash (7 to 40 lowercase hex digits)")
        return None
    pr = fields.get("pr")
    if pr is not None and (isinstance(pr, bool) or not isinstance(pr, int) or pr < 1):
        c.error((*key, "pr"), f"{pr!r} is not a pull request number")
        return None
    if not any(releases.values()):
        release = name.replace("_by", "_in")
        c.error(key, f"{name} names the commit inside a release range: give {release} too")
        return None
    return Change(commit, pr)


def _requires(c: Checker) -> Requirements:
    if "requires" not in c.doc.data:
        return Requirements()
    data = c.mapping(("requires",), REQUIRES.fields)
    backends = None
    if "backends" in data:
        backends = c.strings(("requires", "backends"), data["backends"], BACKENDS)
    spec = None
    if "mlx" in data and c.typed(("requires", "mlx"), data["mlx"], str, "a version specifier"):
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # costly: only when used

        try:
            spec = SpecifierSet(data["mlx"])
        except InvalidSpecifier:
            c.error(("requires", "mlx"), f"{data['mlx']!r} is not a valid version specifier")
    float64 = data.get("float64", False)
    c.typed(("requires", "float64"), float64, bool, "true or false")
    return Requirements(backends, spec, bool(float64))


def _evidence(c: Checker) -> tuple[Evidence, ...]:
    value = c.doc.data.get("evidence", [])
    if not c.typed(("evidence",), value, list, "a list"):
        return ()
    out = []
    for i in range(len(value)):
        key: Key = ("evidence", i)
        item = c.mapping(key, EVIDENCE.fields, EVIDENCE.required)
        if not item:
            continue
        c.version((*key, "mlx"), item.get("mlx"))
        c.choice((*key, "backend"), item.get("backend"), BACKENDS)
        c.choice((*key, "outcome"), item.get("outcome"), EVIDENCE_OUTCOME.values)
        note = c.text((*key, "note"), item.get("note", ""), optional=True) if "note" in item else ""
        out.append(
            Evidence(
                str(item.get("mlx")), str(item.get("backend")), str(item.get("outcome")), note or ""
            )
        )
    return tuple(out)


def _number(c: Checker, key: str, default: float, number: Number) -> Any:
    value = c.doc.data.get(key, default)
    kind: tuple[type, ...] = (int,) if number.integer else (int, float)
    if not c.typed((key,), value, kind, "a whole number" if number.integer else "a number"):
        return default
    if not number.holds(value):
        c.error((key,), f"{value} is outside {number.span()}")
        return default
    return value


def check_document(
    doc: Document, problems: list[SourceError], warnings: list[SourceError] | None = None
) -> Entry | None:
    """Validate one parsed file; append its problems (and, if asked, warnings); return the entry if it had no problem."""
    c = Checker(doc, problems)
    before = len(problems)
    problems.extend(doc.problems)
    data = c.mapping((), ENTRY.fields, ENTRY.required)
    if not data and not isinstance(doc.data, dict):
        return None
    entry_id = c.text(("id",), data.get("id", "x")) or ""
    if entry_id and not ID_RE.fullmatch(entry_id):
        c.error(
            ("id",), f"{entry_id!r} is not kebab-case (lowercase letters, digits, single dashes)"
        )
    title = c.text(("title",), data.get("title", "x")) or ""
    if "\n" in title.strip():
        c.error(("title",), "must be one line")
    summary = c.text(("summary",), data.get("summary", "x")) or ""
    if warnings is not None:  # what `new` leaves for a person to write
        why = "still the TODO that 'mgradcheck new' wrote"
        fields = (("title", title), ("summary", summary))
        warnings += [SourceError(doc.path, doc.line((k,)), k, why) for k, text in fields
                     if text.lstrip().startswith("TODO")]  # fmt: skip
    found_by = _found_by(c)
    upstream = _upstream(c, unreported=found_by is not None)
    bug = _bug(c, warnings) if "bug" in data else Bug((Outcome.FAIL,))
    origin = c.text(("origin",), data.get("origin"), optional=True)
    tags = c.strings(("tags",), data.get("tags", []))
    fault = one_fault(bug.match, tuple(tags))
    if fault and warnings is not None:
        warnings.append(SourceError(doc.path, doc.line(("bug", "match")), "bug.match", fault))
    requires = _requires(c)
    timeout = _number(c, "timeout", 60.0, TIMEOUT)
    repeat = _number(c, "repeat", 1, REPEAT)
    code = c.text(("code",), data.get("code"), optional=True)
    gradcheck = None
    if "gradcheck" in data:
        gradcheck = check_gradcheck(c)
    if (code is None) == (gradcheck is None):
        c.error((), "needs exactly one of 'code' or 'gradcheck'")
    if code is not None:
        try:
            compile(code, doc.path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            line = doc.line(("code",)) + (1 if ("code",) in doc.block_scalars else 0)
            problems.append(
                SourceError(
                    doc.path, line + (exc.lineno or 1) - 1, "code", f"syntax error: {exc.msg}"
                )
            )
    evidence = _evidence(c)
    notes = c.text(("notes",), data.get("notes"), optional=True) or ""
    if len(problems) > before:
        problems[before:] = sorted(problems[before:], key=lambda p: p.line)  # as the file reads
        return None
    code_line = doc.line(("code",)) + (1 if ("code",) in doc.block_scalars else 0)
    return Entry(
        id=entry_id, title=title.strip(), summary=summary.strip(), upstream=upstream, bug=bug,
        path=doc.path, line=doc.line(("id",)), origin=origin, tags=tags, requires=requires,
        timeout=float(timeout), repeat=int(repeat), code=code, code_line=code_line,
        gradcheck=gradcheck, evidence=evidence, notes=notes.strip(), found_by=found_by,
    )  # fmt: skip


def load(
    paths: Sequence[Path],
    display: Callable[[Path], str] = str,
    warnings: list[SourceError] | None = None,
    only: Collection[str] | None = None,
    ids: list[str] | None = None,
) -> list[Entry]:
    """Load every entry under ``paths``; raise :class:`CorpusError` listing every problem.

    ``warnings``, when given, receives what is valid but risky (a regex that may backtrack).
    ``only``, when given, names the entries wanted: every file is still validated, and only
    the entries named are returned. ``ids``, when given, receives the id of every entry, in
    the order of the files.
    """
    problems: list[SourceError] = []
    entries: list[Entry] = []
    files = corpus_names(paths)
    if not files:
        raise CorpusError(
            [SourceError(", ".join(map(display, paths)), 0, "", "no corpus files (*.yaml) found")]
        )
    seen: dict[str, tuple[str, int]] = {}  # each id's first file, and the id's line there
    for named in files:
        file = Path(named)
        try:
            doc = _parse(file, display(file))
        except SourceError as exc:
            problems.append(exc)
            continue
        entry = check_document(doc, problems, warnings)
        if entry is None:
            continue
        if entry.id in seen:
            first, first_line = seen[entry.id]
            problems.append(
                SourceError(
                    display(file),
                    entry.line,
                    "id",
                    f"duplicate id {entry.id!r} (first at {display(Path(first))}:{first_line})",
                )
            )
            continue
        seen[entry.id] = (named, entry.line)
        if only is None or entry.id in only:
            entries.append(entry)
        if ids is not None:
            ids.append(entry.id)
    if problems:
        raise CorpusError(problems)
    return entries


def _parse(path: Path, name: str) -> Document:
    from mgradcheck.corpus import yamlsource

    return yamlsource.read(path, name)
