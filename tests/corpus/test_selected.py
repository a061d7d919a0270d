"""Loading some entries by id: every file validated, only the named ones checked anew."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mgradcheck.corpus import cache, loader, patterns
from mgradcheck.corpus.document import SourceError
from mgradcheck.corpus.files import corpus_files
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError, UsageError
from mgradcheck.run import stages
from tests.conftest import MINIMAL, write_entry
from tests.corpus.test_cache import SETTLED, settle

RISKY = MINIMAL.replace('match: "the minimal check"', 'match: "(a+)+$"')
assert RISKY != MINIMAL


@pytest.fixture(autouse=True)
def _later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache reads its clock SETTLED seconds on. Its word on a file is trusted only once the
    file's ctime has settled, and no tool sets a ctime back: only the clock can age a file."""
    now = time.time_ns
    monkeypatch.setattr(cache, "time", SimpleNamespace(time_ns=lambda: now() + SETTLED * 10**9))


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the files checked (not taken as clean from the cache), in order."""
    ids: list[str] = []
    check = loader.check_document

    def counted(doc: object, *args: object) -> object:
        entry = check(doc, *args)  # type: ignore[arg-type]
        ids.append(entry.id if entry is not None else "?")
        return entry

    monkeypatch.setattr(loader, "check_document", counted)
    return ids


def corpus(tmp_path: Path, **texts: str) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir(exist_ok=True)
    for name, text in texts.items():
        settle(write_entry(folder, name, text.format(id=name)))
    return folder


def test_only_the_named_entries_are_checked_again(tmp_path: Path, checked: list[str]) -> None:
    folder, root = corpus(tmp_path, a=MINIMAL, b=MINIMAL, c=MINIMAL), tmp_path / "cache"
    everything = load([folder], cache=root)
    assert checked == ["a", "b", "c"]
    ids: list[str] = []
    assert load([folder], cache=root, only={"b"}, ids=ids) == [everything[1]]
    assert checked[3:] == ["b"]
    assert ids == ["a", "b", "c"]


def test_a_changed_file_is_checked_whether_named_or_not(tmp_path: Path, checked: list[str]) -> None:
    folder, root = corpus(tmp_path, a=MINIMAL, b=MINIMAL), tmp_path / "cache"
    load([folder], cache=root)
    bad = write_entry(folder, "a", MINIMAL.format(id="a").replace("outcome: fail", "outcome: nope"))
    settle(bad)
    with pytest.raises(CorpusError) as info:
        load([folder], cache=root, only={"b"})
    assert [str(p) for p in info.value.problems] == [
        f"{bad}:5: bug.outcome: 'nope' is not one of fail, crash, error, timeout"
    ]


def test_a_changed_checker_checks_every_file_again(
    tmp_path: Path, checked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, root = corpus(tmp_path, a=MINIMAL, b=MINIMAL), tmp_path / "cache"
    load([folder], cache=root)
    monkeypatch.setattr(loader, "_checker", lambda: "another")
    load([folder], cache=root, only={"b"})
    assert checked == ["a", "b", "a", "b"]
    load([folder], cache=root, only={"b"})  # and that checker's word is kept
    assert checked[4:] == ["b"]


def test_the_checker_changes_with_the_checking_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = loader._checker()
    assert before is not None and before == loader._checker()
    copy = tmp_path / "patterns.py"
    copy.write_text(Path(patterns.__file__).read_text() + "\n# changed\n")
    monkeypatch.setattr(patterns, "__file__", str(copy))
    assert loader._checker() not in (None, before)


def test_a_duplicate_id_is_found_among_files_not_checked(
    tmp_path: Path, checked: list[str]
) -> None:
    folder, root = corpus(tmp_path, a=MINIMAL, b=MINIMAL), tmp_path / "cache"
    settle(write_entry(folder, "c", MINIMAL.format(id="a")))
    with pytest.raises(CorpusError) as first:
        load([folder], cache=root)
    with pytest.raises(CorpusError) as again:
        load([folder], cache=root, only={"b"})
    assert checked[3:] == ["b"]
    assert (
        [str(p) for p in again.value.problems]
        == [str(p) for p in first.value.problems]
        == [f"{folder / 'c.yaml'}:1: id: duplicate id 'a' (first at {folder / 'a.yaml'}:1)"]
    )


def test_warnings_are_said_of_files_not_named(tmp_path: Path, checked: list[str]) -> None:
    folder, root = corpus(tmp_path, a=RISKY, b=MINIMAL), tmp_path / "cache"
    load([folder], cache=root)  # without warnings: whether it has any is not known
    for _ in range(2):
        warned: list[SourceError] = []
        load([folder], cache=root, only={"b"}, warnings=warned)
        assert [w.field for w in warned] == ["bug.match"]
    assert checked == ["a", "b", "a", "b", "a", "b"]
    load([folder], cache=root, only={"b"})  # a run that wants no warnings trusts it
    assert checked[6:] == ["b"]


def test_an_unknown_id_is_matched_against_every_entry(tmp_path: Path) -> None:
    folder = corpus(tmp_path, alpha=MINIMAL, beta=MINIMAL)
    stages.load_corpus([folder])
    with pytest.raises(UsageError, match="'alpah' \\(did you mean 'alpha'\\?\\)"):
        stages.load_selected([folder], ["beta", "alpah"])
    assert [e.id for e in stages.load_selected([folder], ["beta"])] == ["beta"]


def test_files_are_found_as_rglob_finds_them(tmp_path: Path) -> None:
    root = tmp_path / "c"
    for name in ("a/b.yaml", "a-c.yaml", "a/x/y.yml", "z.yaml", ".hidden.yaml", ".yaml",
                 "n.yaml.", "no.txt", "d.yaml/inner.yaml", "A.yaml"):  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "e.yaml").write_text("")
    os.symlink(root / "elsewhere", root / "linked")  # a link to a directory: not followed
    os.symlink(root / "z.yaml", root / "to-z.yaml")  # a link to a file: a file
    os.symlink(root / "gone.yaml", root / "dangling.yaml")  # a link to nothing: none
    expected = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    found = corpus_files([root])
    assert found == expected
    assert [p.relative_to(root).as_posix() for p in found][:4] == [".hidden.yaml", "A.yaml", "a/b.yaml", "a/x/y.yml"]  # fmt: skip
