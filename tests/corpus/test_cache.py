"""The cache of parsed corpus files: the same entries, problems and warnings as parsing them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.corpus import yamlsource
from mgradcheck.corpus.cache import FORMAT
from mgradcheck.corpus.document import SourceError
from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError
from tests.conftest import MINIMAL, write_entry

SETTLED = 10  # seconds a file's mtime is set back: long settled, as a checked-out corpus is


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files parsed from YAML (not taken from the cache), as they are."""
    names: list[str] = []
    parse = yamlsource.parse_bytes

    def counted(raw: bytes, name: str) -> yamlsource.Document:
        names.append(Path(name).name)
        return parse(raw, name)

    monkeypatch.setattr(yamlsource, "parse_bytes", counted)
    return names


def settle(*paths: Path) -> None:
    for path in paths:
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns - SETTLED * 10**9))


def corpus(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir(exist_ok=True)
    for name in names:
        settle(write_entry(folder, name, MINIMAL.format(id=name)))
    return folder


def cache_files(root: Path) -> list[Path]:
    return sorted(root.glob("*.json"))


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    folder, root = corpus(tmp_path, "one", "two"), tmp_path / "cache"
    first = load([folder], cache=root)
    assert parsed == ["one.yaml", "two.yaml"]
    assert len(cache_files(root)) == 1  # one per directory
    again = load([folder], cache=root)
    assert parsed == ["one.yaml", "two.yaml"]  # nothing more
    assert again == first == load([folder])


def test_the_bundled_corpus_loads_the_same_from_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    warned: list[SourceError] = []
    fresh = load([bundled_corpus()], cache=root, warnings=warned)
    cached: list[SourceError] = []
    assert load([bundled_corpus()], cache=root, warnings=cached) == fresh
    assert fresh == load([bundled_corpus()])
    assert cached == warned


def test_a_changed_file_is_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    folder, root = corpus(tmp_path, "one", "two"), tmp_path / "cache"
    load([folder], cache=root)
    settle(write_entry(folder, "two", MINIMAL.format(id="two-renamed")))
    entries = load([folder], cache=root)
    assert parsed[2:] == ["two.yaml"]
    assert [e.id for e in entries] == ["one", "two-renamed"]


def test_a_file_rewritten_within_its_mtime_is_read_again(tmp_path: Path, parsed: list[str]) -> None:
    """Just written, the same size, the same mtime: only its bytes tell (git's racy entries)."""
    folder, root = tmp_path / "corpus", tmp_path / "cache"
    folder.mkdir()
    path = write_entry(folder, "one", MINIMAL.format(id="aaa"))
    (entry,) = load([folder], cache=root)
    assert entry.id == "aaa"
    mtime = path.stat().st_mtime_ns
    path.write_text(MINIMAL.format(id="bbb"), encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))  # as a clock counting in coarse steps leaves it
    (entry,) = load([folder], cache=root)
    assert entry.id == "bbb"
    assert parsed == ["one.yaml", "one.yaml"]
    (entry,) = load([folder], cache=root)  # unchanged since: its bytes match, nothing parsed
    assert entry.id == "bbb" and len(parsed) == 2


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


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "\x00\xff" + text,  # not JSON
        lambda text: text.replace(f'"format":{FORMAT}', '"format":99'),  # another format
        lambda text: text.replace('"mgradcheck":"', '"mgradcheck":"0.0.0-'),  # another version
        lambda text: text.replace('"directory":"', '"directory":"/elsewhere'),  # another's
        lambda text: text.replace('\\"lines\\":[', '\\"lines\\":[7,'),  # a malformed record
        lambda text: text.replace('\\"data\\":{', '\\"data\\":7,\\"was\\":{'),  # not a mapping
        lambda text: text.replace('"document":"{', '"document":"['),  # not JSON
        lambda text: text.replace('"document":"', '"was":"'),  # no document
    ],
    ids=[
        "truncated",
        "garbage",
        "format",
        "version",
        "directory",
        "lines",
        "data",
        "document",
        "none",
    ],
)
def test_a_corrupt_or_foreign_cache_file_is_ignored(
    tmp_path: Path, parsed: list[str], damage: object
) -> None:
    folder, root = corpus(tmp_path, "one"), tmp_path / "cache"
    expected = load([folder], cache=root)
    (file,) = cache_files(root)
    damaged = damage(file.read_text())  # type: ignore[operator]
    assert damaged != file.read_text()
    file.write_bytes(damaged.encode("utf-8", "surrogateescape"))
    assert load([folder], cache=root) == expected
    assert parsed == ["one.yaml", "one.yaml"]
    assert load([folder], cache=root) == expected  # written anew, and used
    assert len(parsed) == 2


def test_a_bad_file_is_reported_with_its_line_and_never_cached(
    tmp_path: Path, parsed: list[str]
) -> None:
    folder, root = corpus(tmp_path, "good"), tmp_path / "cache"
    bad = write_entry(folder, "bad", MINIMAL.format(id="bad").replace("{outcome: fail,", "{outcome: nope,"))  # fmt: skip
    settle(bad)
    messages = []
    for _ in range(2):
        with pytest.raises(CorpusError) as info:
            load([folder], cache=root)
        messages.append([str(p) for p in info.value.problems])
    assert messages[0] == messages[1]
    assert messages[0] == [
        f"{bad}:5: bug.outcome: 'nope' is not one of fail, crash, error, timeout"
    ]
    assert parsed == ["bad.yaml", "good.yaml", "bad.yaml"]  # the good one from the cache
    (file,) = cache_files(root)
    assert set(json.loads(file.read_text())["files"]) == {"good.yaml"}


def test_a_file_that_does_not_parse_is_reported_as_before(tmp_path: Path) -> None:
    folder, root = corpus(tmp_path, "good"), tmp_path / "cache"
    broken = write_entry(folder, "broken", "id: [unclosed\n")
    for cached in (None, root, root):
        with pytest.raises(CorpusError) as info:
            load([folder], cache=cached)
        (problem,) = info.value.problems
        assert str(problem).startswith(f"{broken}:2: invalid YAML: ")


def test_a_removed_file_leaves_the_cache_file(tmp_path: Path) -> None:
    folder, root = corpus(tmp_path, "one", "two"), tmp_path / "cache"
    load([folder], cache=root)
    (folder / "two.yaml").unlink()
    settle(write_entry(folder, "one", MINIMAL.format(id="uno")))  # something to write
    load([folder], cache=root)
    (file,) = cache_files(root)
    assert set(json.loads(file.read_text())["files"]) == {"one.yaml"}


def test_an_unwritable_cache_costs_only_the_parse(tmp_path: Path, parsed: list[str]) -> None:
    folder = corpus(tmp_path, "one")
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    for _ in range(2):
        assert [e.id for e in load([folder], cache=blocker / "corpus")] == ["one"]
    assert parsed == ["one.yaml", "one.yaml"]


def test_records_name_files_by_directory(tmp_path: Path) -> None:
    """Two directories, two cache files; each holds its own directory's files alone."""
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, name in ((first, "one"), (second, "two")):
        folder.mkdir()
        settle(write_entry(folder, name, MINIMAL.format(id=name)))
    root = tmp_path / "cache"
    load([first, second], cache=root)
    stored = {json.loads(f.read_text())["directory"]: json.loads(f.read_text())["files"]
              for f in cache_files(root)}  # fmt: skip
    assert {d: set(files) for d, files in stored.items()} == {
        str(first): {"one.yaml"},
        str(second): {"two.yaml"},
    }


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
    load([Path(sys.argv[1])], cache=Path(sys.argv[2]))
except CorpusError as e:
    print(json.dumps([str(p) for p in e.problems]))
"""


def load_in_child(folder: Path, root: Path) -> list[str]:
    """The problems that loading ``folder`` reports in a child that reads files as a user does."""
    argv = [sys.executable, "-c", LOAD, str(folder), str(root)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root reads a file whatever its mode, and setpriv is missing")
        argv = [setpriv, f"--bounding-set={DROP_DAC}", f"--inh-caps={DROP_DAC}", *argv]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=True)
    problems: list[str] = json.loads(done.stdout or "[]")
    return problems


def test_a_file_made_unreadable_is_reported_as_before(tmp_path: Path) -> None:
    folder, root = corpus(tmp_path, "one"), tmp_path / "cache"
    load([folder], cache=root)
    path = folder / "one.yaml"
    path.chmod(0)
    try:
        problems = load_in_child(folder, root)
    finally:
        path.chmod(0o644)
    assert problems == [f"{path}: cannot read: Permission denied"]
