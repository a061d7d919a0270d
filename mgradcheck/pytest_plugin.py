"""pytest plugin: ``pytest --mgradcheck`` runs the corpus's entries as pytest items.

Without ``--mgradcheck`` the plugin only registers its options and its marker,
and collects nothing.

With it, each entry of the corpus (the bundled one, or ``--mgradcheck-corpus``)
is an item whose node id is ``mgradcheck::<id>``, whichever file holds it: one
short id that reads the same in a downstream project, in a checkout and in the
bundled corpus inside site-packages, and that pytest's progress shows as one
line of dots (``mgradcheck ....``), not a line per corpus file. The id works
back on the command line (``pytest --mgradcheck mgradcheck::where-jvp-zero-
tangent``: the plugin names the file that holds it to pytest), and so does a
corpus file's path (``corpus/x.yaml``, ``corpus/x.yaml::x``). Items carry the
``mgradcheck`` marker (``-m mgradcheck``) and their tags as keywords (``-k
jvp``). A corpus outside the directories pytest walks is added to a run that
names no paths; a run that names paths collects what it names.

Each item runs its entry through the same pipeline as ``mgradcheck run`` (its
own child process, probed interpreter, timeout and repeats), and the verdict
becomes the pytest outcome, as in ``mgradcheck run --junit``: as expected
passes, a known bug reproducing where the corpus says it lives included
(the item's ``bug_expected`` property says so); skipped skips; REGRESSED,
FIXED, UNEXPECTED fail, with the crash details as the failure report. Items
are independent, so ``pytest -n N`` (pytest-xdist) runs them N at a time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.pathlib import bestrelpath

from mgradcheck.corpus.files import CORPUS_SUFFIXES, bundled_corpus, corpus_files
from mgradcheck.errors import CorpusError, MgradcheckError

# pytest loads this plugin in every session wherever mgradcheck is installed, so the run
# machinery, most of the package, is imported only inside the hooks that --mgradcheck reaches.
if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from mgradcheck.corpus.entry import Entry
    from mgradcheck.run.child_process import ChildCommand
    from mgradcheck.run.observation import Environment
    from mgradcheck.run.results import EntryResult

MARKER = "mgradcheck"
PREFIX = f"{MARKER}::"  # every item's node id: mgradcheck::<entry id>

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


def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    """``mgradcheck::ID`` on the command line becomes ``FILE::ID``, the path pytest can resolve.

    Done here, before pytest resolves its arguments as paths; an id no corpus file holds is
    left for pytest to refuse as it refuses any node id it cannot find."""
    named = [i for i, a in enumerate(args) if a.startswith(PREFIX)]
    if not named or not getattr(early_config.known_args_namespace, "mgradcheck", False):
        return
    from mgradcheck.run import stages

    given = early_config.known_args_namespace.mgradcheck_corpus
    roots = _resolved(given, Path(early_config.invocation_params.dir))
    try:
        holders = {e.id: e.path for e in stages.load_corpus(roots)}
    except CorpusError:
        return  # collection reports the corpus's problems, file by file
    for i in named:
        ident = args[i][len(PREFIX) :]
        if ident in holders:
            args[i] = f"{holders[ident]}::{ident}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: an entry of the mgradcheck corpus (collected with --mgradcheck)"
    )


def _resolved(given: list[str], where: Path) -> list[Path]:
    """The corpus files and directories named (relative to ``where``), or the bundled corpus."""
    paths = [Path(p) for p in given]
    return [(p if p.is_absolute() else where / p).resolve()
            for p in paths] or [bundled_corpus().resolve()]  # fmt: skip


def _roots(config: pytest.Config) -> list[Path]:
    """The corpus files and directories of this session, resolved."""
    return _resolved(config.getoption("mgradcheck_corpus"), config.invocation_params.dir)


def _in_corpus(path: Path, roots: list[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in roots)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CorpusFile | None:
    config = parent.config
    if not config.getoption("mgradcheck") or file_path.suffix not in CORPUS_SUFFIXES:
        return None
    if not (parent.session.isinitpath(file_path) or _in_corpus(file_path, _roots(config))):
        return None
    return CorpusFile.from_parent(parent, path=file_path, nodeid=MARKER)


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they see the entries
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the corpus files pytest's own walk did not reach, unless the user named what to run."""
    if not config.getoption("mgradcheck") or config.args_source is pytest.Config.ArgsSource.ARGS:
        return  # paths on the command line: collect what they name, as pytest does
    reached = {item.path.resolve() for item in items if isinstance(item, EntryItem)}
    reached |= {path.resolve() for path in session.stash.get(_FAILED, set())}
    for file in corpus_files(_roots(config)):
        if file.resolve() not in reached:
            node = CorpusFile.from_parent(session, path=file, nodeid=MARKER)
            # Through genitems, as pytest's own collection goes, so that collection counts,
            # --collect-only and a bad corpus file (a collection error) all look as usual.
            items.extend(session.genitems(node))


class CorpusFile(pytest.File):
    """One corpus file; its children are its entries (one, in the bundled corpus).

    Every corpus file's node id is ``mgradcheck``, so its entries' are ``mgradcheck::<id>``
    (ids are unique across a corpus), and pytest shows them all as one file."""

    def collect(self) -> list[EntryItem]:
        from mgradcheck.run import stages

        try:
            entries = stages.load_corpus([self.path])
        except CorpusError as exc:
            self.session.stash.setdefault(_FAILED, set()).add(self.path)
            problems = "\n".join(str(p) for p in exc.problems)
            # Every corpus file is the node "mgradcheck": the message names which one failed.
            where = bestrelpath(self.config.invocation_params.dir, self.path)
            raise self.CollectError(f"{where}: not a valid corpus file:\n{problems}") from None
        return [EntryItem.from_parent(self, name=e.id, entry=e) for e in entries]


class EntryFailed(Exception):
    """An entry whose verdict fails (REGRESSED, FIXED, UNEXPECTED, not run)."""

    def __init__(self, result: EntryResult) -> None:
        super().__init__(result.reason)
        self.result = result


def _target(config: pytest.Config) -> tuple[ChildCommand, Environment]:
    """Probe the running interpreter once per session; fail every item the same way if it cannot run entries."""
    if _TARGET not in config.stash:
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
