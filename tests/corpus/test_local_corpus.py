"""A project's own corpus is found as pytest finds a project's tests: what ``new`` wrote runs
by its id, ``list`` shows it, and mgradcheck's own repository still reads the bundled corpus."""

from __future__ import annotations

from pathlib import Path

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from tests.builders import mgradcheck
from tests.conftest import MINIMAL, write_entry
from tests.releases.test_entry_from_script import WRONG_GRAD


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_what_new_wrote_runs_by_its_id(fake_wheels: Path, tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "halved_grad.py").write_text(WRONG_GRAD)
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q"]
    made = mgradcheck("new", "halved_grad.py", "--mlx", "1.2.0", *source, cwd=root)
    assert made.returncode == 0, made.stderr

    listed = mgradcheck("list", cwd=root / "src" / "deep")  # found from below, as pytest finds
    assert listed.returncode == 0, listed.stderr
    assert "halved-grad" in listed.stdout
    assert f"mgradcheck: corpus: {root / 'corpus'} (1 entry)\n" in listed.stderr

    run = mgradcheck("run", "halved-grad", "--mlx", "1.2.0", *source, cwd=root)
    assert "no corpus entry" not in run.stderr
    assert run.returncode == 0, run.stdout + run.stderr  # the bug, as expected, on 1.2.0
    assert run.stderr.count("mgradcheck: corpus: ./corpus (1 entry)\n") == 1
    # So new's last line need not name the corpus.
    assert "Then:\n  mgradcheck validate corpus && mgradcheck run halved-grad\n" in made.stdout


def test_an_unknown_id_names_the_corpus_that_holds_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "corpus").mkdir()
    write_entry(root / "corpus", "mine", MINIMAL.format(id="mine"))
    other = tmp_path / "other"
    other.mkdir()
    write_entry(other, "theirs", MINIMAL.format(id="theirs"))
    shown = mgradcheck("show", "mine", "--corpus", str(other), cwd=root)
    assert shown.returncode == 2
    assert shown.stderr.splitlines() == [
        "mgradcheck: error: no corpus entry with id 'mine'; see 'mgradcheck list' "
        "(./corpus holds it but was not read: --corpus ./corpus)"
    ]


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "corpus").mkdir(parents=True)
    write_entry(outer / "corpus", "outer", MINIMAL.format(id="outer"))
    inner = outer / "checkout"
    (inner / ".git").mkdir(parents=True)
    (inner / "corpus").mkdir()  # empty: not a corpus
    listed = mgradcheck("list", cwd=inner)
    assert listed.returncode == 0, listed.stderr
    assert "outer" not in listed.stdout and "corpus:" not in listed.stderr
    assert len(listed.stdout.splitlines()) > 10  # the bundled corpus


def test_mgradcheck_own_repository_reads_the_bundled_corpus() -> None:
    repository = Path(__file__).resolve().parents[2]
    assert (repository / "corpus").resolve() == bundled_corpus().resolve()
    ids = sorted(e.id for e in load([bundled_corpus()]))
    for where in (repository, repository / "tests"):
        listed = mgradcheck("list", "--json", "-", cwd=where)
        assert listed.returncode == 0, listed.stderr
        assert "corpus:" not in listed.stderr  # the bundled corpus goes without saying
        assert all(f'"{i}"' in listed.stdout for i in ids)
