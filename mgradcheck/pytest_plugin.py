"""pytest plugin: ``pytest --mgradcheck`` collects corpus files as pytest collects test files.

Without ``--mgradcheck`` the plugin only registers its options and its marker,
and collects nothing.

With it, each corpus file (the bundled corpus, or ``--mgradcheck-corpus``) is
collected by :func:`pytest_collect_file`, and each entry in it is an item whose
node id is the file's and the entry's: ``corpus/where-jvp-zero-tangent.yaml::
where-jvp-zero-tangent``, which works on the command line like any node id.
Items carry the ``mgradcheck`` marker (``-m mgradcheck``) and their tags as
keywords (``-k jvp``). A corpus outside the directories pytest walks (the
bundled one inside the installed package, say) is added to a run that names
no paths; a run that names paths collects what it names.

Each item runs its entry through the same pipeline as ``mgradcheck run`` (its
own child process, probed interpreter, timeout and repeats), and the verdict
becomes the pytest outcome, as in ``mgradcheck run --junit``: as expected
passes, a known bug reproducing where the corpus says it lives included
(the item's ``bug_expected`` property says so); skipped skips; REGRESSED,
FIXED, UNEXPECTED fail, with the crash details as the failure report.
"""

from __future__ import annotations

import os
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

MARKER = "mgradcheck"
SUFFIXES = (".yaml", ".yml")

# The probed interpreter, shared by every item of a session, or why probing failed.
_TARGET = pytest.StashKey["tuple[ChildCommand, Environment] | str"]()
# Corpus files whose collection failed (each already reported as a collection error).
_FAILED = pytest.StashKey[set[Path]]()


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: an entry of the mgradcheck corpus (collected with --mgradcheck)"
    )


def _roots(config: pytest.Config) -> list[Path]:
    """The corpus files and directories of this session, resolved."""
    from mgradcheck.corpus.files import bundled_corpus

    given = [Path(p) for p in config.getoption("mgradcheck_corpus")]
    return [(p if p.is_absolute() else config.invocation_params.dir / p).resolve()
            for p in given] or [bundled_corpus().resolve()]  # fmt: skip


def _in_corpus(path: Path, roots: list[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in roots)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CorpusFile | None:
    config = parent.config
    if not config.getoption("mgradcheck") or file_path.suffix not in SUFFIXES:
        return None
    if not (parent.session.isinitpath(file_path) or _in_corpus(file_path, _roots(config))):
        return None
    return CorpusFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they see the entries
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the corpus files pytest's own walk did not reach, unless the user named what to run."""
    if not config.getoption("mgradcheck") or config.args_source is pytest.Config.ArgsSource.ARGS:
        return  # paths on the command line: collect what they name, as pytest does
    from mgradcheck.corpus.files import corpus_files

    reached = {item.path.resolve() for item in items if isinstance(item, EntryItem)}
    reached |= {path.resolve() for path in session.stash.get(_FAILED, set())}
    for file in corpus_files(_roots(config)):
        if file.resolve() not in reached:
            # A path relative to the root directory, with '..' if it lies outside (the bundled
            # corpus in site-packages): a node id that also works on the command line.
            nodeid = os.path.relpath(file.resolve(), config.rootpath).replace(os.sep, "/")
            node = CorpusFile.from_parent(session, path=file, nodeid=nodeid)
            # Through genitems, as pytest's own collection goes, so that collection counts,
            # --collect-only and a bad corpus file (a collection error) all look as usual.
            items.extend(session.genitems(node))


class CorpusFile(pytest.File):
    """One corpus file; its children are its entries (one, in the bundled corpus)."""

    def collect(self) -> list[EntryItem]:
        from mgradcheck.errors import CorpusError
        from mgradcheck.run import stages

        try:
            entries = stages.load_corpus([self.path])
        except CorpusError as exc:
            self.session.stash.setdefault(_FAILED, set()).add(self.path)
            problems = "\n".join(str(p) for p in exc.problems)
            raise self.CollectError(f"the mgradcheck corpus has problems:\n{problems}") from None
        return [EntryItem.from_parent(self, name=e.id, entry=e) for e in entries]


class EntryFailed(Exception):
    """An entry whose verdict fails (REGRESSED, FIXED, UNEXPECTED, not run)."""

    def __init__(self, result: EntryResult) -> None:
        super().__init__(result.reason)
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
        super().__init__(**kwargs)
        self.entry = entry
        self.add_marker(MARKER)
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
            ("bug_expected", str(bool(result.judgement and result.judgement.bug_expected)).lower()),
            ("reason", result.reason),
        ]
        element = result.verdict.junit_element(result.outcome)
        if element == "skipped":
            # Reported at the entry's file and line, as a skip marker's skip is.
            raise pytest.skip.Exception(result.reason, _use_item_location=True)
        if element:
            raise EntryFailed(result)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, EntryFailed):
            from mgradcheck.reports.text import details

            return details(excinfo.value.result)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.entry.line - 1, f"mgradcheck entry {self.entry.id}"
