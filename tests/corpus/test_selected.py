"""Loading some entries by id: every file validated, only the named ones returned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.corpus.document import SourceError
from mgradcheck.corpus.files import corpus_files
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError, UsageError
from mgradcheck.run import stages
from tests.conftest import MINIMAL, write_entry

RISKY = MINIMAL.replace('match: "the minimal check"', 'match: "(a+)+$"')
assert RISKY != MINIMAL


def settle(path: Path) -> None:
    """Set the file's mtime ten seconds back, as a checked-out corpus's is."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns - 10 * 10**9))


def corpus(tmp_path: Path, **texts: str) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir(exist_ok=True)
    for name, text in texts.items():
        settle(write_entry(folder, name, text.format(id=name)))
    return folder


def test_only_the_named_entries_are_returned(tmp_path: Path) -> None:
    folder = corpus(tmp_path, a=MINIMAL, b=MINIMAL, c=MINIMAL)
    everything = load([folder])
    ids: list[str] = []
    assert load([folder], only={"b"}, ids=ids) == [everything[1]]
    assert ids == ["a", "b", "c"]


def test_a_changed_file_is_checked_whether_named_or_not(tmp_path: Path) -> None:
    folder = corpus(tmp_path, a=MINIMAL, b=MINIMAL)
    load([folder])
    bad = write_entry(folder, "a", MINIMAL.format(id="a").replace("outcome: fail", "outcome: nope"))
    settle(bad)
    with pytest.raises(CorpusError) as info:
        load([folder], only={"b"})
    assert [str(p) for p in info.value.problems] == [
        f"{bad}:5: bug.outcome: 'nope' is not one of fail, crash, error, timeout"
    ]


def test_a_duplicate_id_is_found_among_files_not_named(tmp_path: Path) -> None:
    folder = corpus(tmp_path, a=MINIMAL, b=MINIMAL)
    settle(write_entry(folder, "c", MINIMAL.format(id="a")))
    with pytest.raises(CorpusError) as first:
        load([folder])
    with pytest.raises(CorpusError) as again:
        load([folder], only={"b"})
    assert (
        [str(p) for p in again.value.problems]
        == [str(p) for p in first.value.problems]
        == [f"{folder / 'c.yaml'}:1: id: duplicate id 'a' (first at {folder / 'a.yaml'}:1)"]
    )


def test_warnings_are_said_of_files_not_named(tmp_path: Path) -> None:
    folder = corpus(tmp_path, a=RISKY, b=MINIMAL)
    load([folder])
    warned: list[SourceError] = []
    load([folder], only={"b"}, warnings=warned)
    assert [w.field for w in warned] == ["bug.match"]


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


@pytest.mark.parametrize("ids", [[], ["one"]], ids=["all", "named"])
def test_a_file_edited_in_place_with_its_mtime_put_back_is_run_anew(
    tmp_path: Path, ids: list[str]
) -> None:
    """``cp -p`` and ``rsync --inplace -t`` keep the size and inode and put the mtime back."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    path = write_entry(folder, "one", MINIMAL.format(id="one").replace("True", "1 > 0"))
    settle(path)
    before = path.stat()

    def outcome() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(folder), *ids,
             "-q", "-j1", "--json", "-"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        (result,) = json.loads(done.stdout)["results"]
        return str(result["outcome"])

    assert outcome() == "pass"
    path.write_text(path.read_text().replace("1 > 0", "1 < 0"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)  # fmt: skip
    assert outcome() == "fail"


# Root reads a file whatever its mode; without CAP_DAC_OVERRIDE and
# CAP_DAC_READ_SEARCH (setpriv drops them across exec) it meets the mode as
# anyone else does, so the test runs as root too.
DROP_DAC = "-dac_override,-dac_read_search"
LOAD = """
import json, sys
from pathlib import Path
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError
try:
    load([Path(sys.argv[1])])
except CorpusError as e:
    print(json.dumps([str(p) for p in e.problems]))
"""


def load_in_child(folder: Path) -> list[str]:
    """The problems that loading ``folder`` reports in a child that reads files as a user does."""
    argv = [sys.executable, "-c", LOAD, str(folder)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root reads a file whatever its mode, and setpriv is missing")
        argv = [setpriv, f"--bounding-set={DROP_DAC}", f"--inh-caps={DROP_DAC}", *argv]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=True)
    problems: list[str] = json.loads(done.stdout or "[]")
    return problems


def test_a_file_made_unreadable_is_reported(tmp_path: Path) -> None:
    folder = corpus(tmp_path, one=MINIMAL)
    load([folder])
    path = folder / "one.yaml"
    path.chmod(0)
    try:
        problems = load_in_child(folder)
    finally:
        path.chmod(0o644)
    assert problems == [f"{path}: cannot read: Permission denied"]
