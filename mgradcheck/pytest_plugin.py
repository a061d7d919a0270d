"""pytest plugin: ``pytest --mgradcheck`` collects corpus entries as test items.

Without ``--mgradcheck`` the plugin only registers its options and changes nothing.

With it, every corpus entry (the bundled corpus, or ``--mgradcheck-corpus``)
becomes an item ``mgradcheck::<entry-id>``, selectable with ``-k`` by id or
tag. Each item runs its entry through the same pipeline as ``mgradcheck run``
(its own child process, probed interpreter, timeout and repeats), and the
verdict becomes the pytest outcome: as expected passes, or xfails when a known
bug reproduced as the corpus says it does here; skipped skips; REGRESSED,
FIXED, UNEXPECTED fail, with the crash details as the failure report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from mgradcheck.corpus.entry import Entry
    from mgradcheck.run.child_process import ChildCommand
    from mgradcheck.run.observation import Environment
    from mgradcheck.run.results import EntryResult

ROOT = "mgradcheck"  # the collector's node id: items are "mgradcheck::<entry-id>"

# The probed interpreter, shared by every item of a session, or why probing failed.
_TARGET = pytest.StashKey["tuple[ChildCommand, Environment] | str"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mgradcheck")
    group.addoption(
        "--mgradcheck", action="store_true", default=False, help="Run the MLX bug corpus as tests."
    )
    group.addoption(
        "--mgradcheck-corpus",
        action="append",
        default=[],
        metavar="PATH",
        help="Corpus file or directory (repeatable). Default: the bundled corpus.",
    )


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they see the entries
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("mgradcheck"):
        return
    paths = [Path(p) for p in config.getoption("mgradcheck_corpus")]
    corpus = Corpus.from_parent(session, name=ROOT, nodeid=ROOT, paths=paths)
    # Through genitems, as pytest's own collection goes, so that collection counts,
    # --collect-only and a bad corpus (a collection error) all look as usual.
    items.extend(session.genitems(corpus))


class Corpus(pytest.Collector):
    """The corpus as one collector; its children are the entries."""

    def __init__(self, *, paths: list[Path], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.paths = paths

    def collect(self) -> list[EntryItem]:
        from mgradcheck.errors import CorpusError
        from mgradcheck.run import stages

        try:
            entries = stages.load_corpus(self.paths)
        except CorpusError as exc:
            problems = "\n".join(str(p) for p in exc.problems)
            raise self.CollectError(f"the mgradcheck corpus has problems:\n{problems}") from None
        return [EntryItem.from_parent(self, name=e.id, entry=e) for e in entries]


class EntryFailed(Exception):
    """An entry whose verdict fails (REGRESSED, FIXED, UNEXPECTED, not run)."""

    def __init__(self, result: EntryResult) -> None:
        super().__init__(result.judgement.reason)
        self.result = result


def _target(config: pytest.Config) -> tuple[ChildCommand, Environment]:
    """Probe the running interpreter once per session; fail every item the same way if it cannot run entries."""
    if _TARGET not in config.stash:
        from mgradcheck.errors import MgradcheckError
        from mgradcheck.run import stages

        try:
            config.stash[_TARGET] = stages.prepare(sys.executable)
        except MgradcheckError as exc:
            config.stash[_TARGET] = str(exc)
    target = config.stash[_TARGET]
    if isinstance(target, str):
        pytest.fail(f"mgradcheck: {target}", pytrace=False)
    return target


class EntryItem(pytest.Item):
    """One corpus entry, run in its own child process."""

    def __init__(self, *, entry: Entry, **kwargs: Any) -> None:
        super().__init__(path=Path(entry.path).resolve(), **kwargs)
        self.entry = entry
        self.extra_keyword_matches.update(entry.tags)

    def runtest(self) -> None:
        from mgradcheck.run import stages
        from mgradcheck.run.display import Silent
        from mgradcheck.run.runner import RunOptions

        command, env = _target(self.config)
        report, interrupted = stages.execute([self.entry], command, env, RunOptions(), Silent())
        if interrupted is not None:
            raise KeyboardInterrupt  # Ctrl-C reached the run: stop pytest too
        (result,) = report.results
        self.user_properties += [
            ("verdict", result.verdict.label),
            ("outcome", result.outcome_text),
            ("reason", result.judgement.reason),
        ]
        element = result.verdict.junit_element(result.outcome)
        if element == "skipped":
            pytest.skip(result.judgement.reason)
        if element:
            raise EntryFailed(result)
        if result.judgement.bug_expected:
            pytest.xfail(f"known bug reproduced as expected: {result.judgement.reason}")

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, EntryFailed):
            from mgradcheck.reports.text import details

            return details(excinfo.value.result)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.entry.line - 1, f"{ROOT}::{self.entry.id}"
