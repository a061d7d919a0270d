"""``mgradcheck new`` end to end over the fake MLX releases, whose fake grad and vmap are
wrong on some releases and right on others (tests/fake_mlx.py)."""

from __future__ import annotations

import errno
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from packaging.version import Version

import mgradcheck
from mgradcheck.cli import cli
from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from tests import fake_mlx

WRONG_GRAD = '''\
"""The fake grad of x * x at 3 is halved."""
import mlx.core as mx


def main():
    g = mx.grad(lambda x: x * x)(3.0)
    print(f"grad: {g:.3f}")
    assert abs(g - 6.0) < 1e-3, f"grad of x * x at 3 is {g:.3f}, expected 6"


if __name__ == "__main__":
    main()
'''
RAISES = """\
import mlx.core as mx

print(mx.vmap(lambda x: 2 * x)([1.0, 2.0]))
"""
PRINTS = """\
import mlx.core as mx

print(round(mx.grad(lambda x: x * x)(3.0), 3))
"""


def new(wheels: Path, corpus: Path, *args: str) -> Result:
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu", "-q"]
    return CliRunner().invoke(cli, ["new", *args, "--corpus", str(corpus), *source])


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_failed_check_between_two_releases(fake_wheels: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    issue = "https://github.com/ml-explore/mlx/issues/1"
    done = new(fake_wheels, corpus, str(script(tmp_path, "halved_grad.py", WRONG_GRAD)),
               "--issue", issue)  # fmt: skip
    assert done.exit_code == 0, done.output
    (entry,) = load([corpus])
    assert entry.id == "halved-grad" and entry.upstream.report == issue
    assert entry.title == "The fake grad of x * x at 3 is halved."
    assert entry.bug.outcomes == (Outcome.FAIL,)
    assert entry.bug.match == r"grad of x \* x at"  # the words, not the values
    assert entry.bug.introduced_in["cpu"] == Version("1.2.0")
    assert entry.bug.fixed_in["cpu"] == Version("1.4.0")
    assert [(e.mlx, e.outcome) for e in entry.evidence] == [
        ("1.0.0", "pass"), ("1.1.0", "pass"), ("1.2.0", "fail"),
        ("1.3.0", "fail"), ("1.4.0", "pass"), ("1.6.0", "pass"),
    ]  # fmt: skip
    assert "1.5.0: " in entry.notes  # not installable: could not judge
    assert "mlx 1.5.0: unknown: unavailable" in done.output
    assert "good through 1.1.0, bad from 1.2.0; bad through 1.3.0, good from 1.4.0" in done.output
    assert "summary: what goes wrong and why" in done.output and "oracle:" in done.output
    # The entry holds the script as written, and its signature is what the releases showed.
    assert entry.code is not None and WRONG_GRAD in entry.code
    for version, bad in (("1.1.0", False), ("1.2.0", True), ("1.3.0", True), ("1.6.0", False)):
        assert entry.bug.expected(Version(version), "cpu") is bad
    # Its runs are stored under the entry's own hash: run, matrix and bisect reuse them.
    assert fake_mlx.stored(fake_wheels, entry.content_hash, "1.2.0")

    again = new(fake_wheels, corpus, str(tmp_path / "halved_grad.py"))
    assert again.exit_code == 2 and "exists; give --force" in again.output
    taken = new(fake_wheels, corpus, str(script(tmp_path, "other.py", RAISES)), "--id", entry.id)
    assert taken.exit_code == 2 and "exists; give --force" in taken.output


def test_the_entry_goes_where_the_user_is(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = {p: p.read_bytes() for p in bundled_corpus().glob("*.yaml")}
    monkeypatch.chdir(tmp_path)
    source = ["--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q"]
    done = CliRunner().invoke(
        cli, ["new", str(script(tmp_path, "halved_grad.py", WRONG_GRAD)), "--id", "x", *source]
    )
    assert done.exit_code == 0, done.output
    assert "made corpus/ in " in done.output and "wrote corpus/x.yaml\n" in done.output
    (entry,) = load([tmp_path / "corpus"])
    assert entry.id == "x"
    assert {p: p.read_bytes() for p in bundled_corpus().glob("*.yaml")} == bundled
    again = CliRunner().invoke(
        cli, ["new", str(tmp_path / "halved_grad.py"), "--id", "y", "--mlx", "1.2.0", *source]
    )
    assert again.exit_code == 0, again.output
    assert "made corpus/" not in again.output and "wrote corpus/y.yaml\n" in again.output


def test_a_bad_file_reads_the_same_from_new_and_validate(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "by-hand.yaml").write_text("id: by-hand\ntitle: t\nsummary: s\ncode: pass\n")
    monkeypatch.chdir(tmp_path)
    validated = CliRunner().invoke(cli, ["validate", "corpus"])
    made = new(fake_wheels, corpus, str(script(tmp_path, "s.py", RAISES)))  # given absolute
    assert validated.exit_code == made.exit_code == 2
    assert made.output == validated.output
    assert made.output.startswith("mgradcheck: error: corpus/by-hand.yaml:1: ")


def test_the_package_is_never_written(fake_wheels: Path, tmp_path: Path) -> None:
    package = Path(mgradcheck.__file__).parent / "bundled_corpus"
    done = new(fake_wheels, package, str(script(tmp_path, "s.py", RAISES)), "--id", "x")
    assert done.exit_code == 2 and "inside the installed mgradcheck package" in done.output
    assert not (package / "x.yaml").exists()


def test_the_range_tried_is_not_a_requirement(fake_wheels: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    grad = str(script(tmp_path, "halved_grad.py", WRONG_GRAD))
    done = new(fake_wheels, corpus, grad, "--versions", ">=1.2")
    assert done.exit_code == 0, done.output
    (entry,) = load([corpus])
    assert entry.requires.mlx is None  # 1.0 and 1.1 were not tried, not found free of the bug
    assert entry.bug.expected(Version("1.1.0"), "cpu")
    asked = new(fake_wheels, corpus, grad, "--id", "asked", "--versions", ">=1.2",
                "--requires-mlx", ">=1.1")  # fmt: skip
    assert asked.exit_code == 0, asked.output
    entry = next(e for e in load([corpus]) if e.id == "asked")
    assert str(entry.requires.mlx) == ">=1.1"
    assert fake_mlx.stored(fake_wheels, entry.content_hash, "1.2.0")


def test_an_exception_and_a_printed_value(fake_wheels: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    done = new(fake_wheels, corpus, str(script(tmp_path, "vmap.py", RAISES)), "--versions", "<1.5")
    assert done.exit_code == 0, done.output
    (entry,) = load([corpus])
    assert entry.bug.outcomes == (Outcome.ERROR,)
    assert entry.bug.match == r"ValueError: \[vmap\] Not implemented for FakeOp\."
    assert (
        entry.bug.fixed_in["cpu"] == Version("1.3.0") and entry.bug.introduced_in.get("cpu") is None
    )
    assert entry.found_by is not None and entry.found_by.mlx == "1.2.0"  # no --issue: unreported
    assert "the bug raises: catch the exception" in done.output

    prints = script(tmp_path, "prints.py", PRINTS)
    shown = new(fake_wheels, corpus, str(prints), "--mlx", "1.1.0", "--mlx", "1.2.0")
    assert shown.exit_code == 2
    assert "1.1.0 printed '6.0'; 1.2.0 printed '3.0'" in shown.output
    assert "give the right output with --expect TEXT" in shown.output
    checked = new(fake_wheels, corpus, str(prints), "--mlx", "1.1.0", "--mlx", "1.2.0",
                  "--mlx", "1.4.0", "--expect", "6.0")  # fmt: skip
    assert checked.exit_code == 0, checked.output
    entry = next(e for e in load([corpus]) if e.id == "prints")
    assert entry.bug.outcomes == (Outcome.FAIL,)
    assert entry.bug.introduced_in["cpu"] == Version("1.2.0")
    assert entry.bug.fixed_in["cpu"] == Version("1.4.0")
    assert "printed '3.0', expected '6.0'" in entry.evidence[1].note
    assert entry.bug.match == "the printed output is not the expected one: printed"
    assert "releases between 1.2.0 and 1.4.0 were not run" in checked.output  # 1.3.0 left out


@pytest.mark.parametrize(
    ("args", "text", "said"),
    [
        (["missing.py"], None, "missing.py: no such file"),
        (["s.py", "--mlx", "9.9.9"], RAISES, "mlx 9.9.9 is not installable"),
        (["s.py", "--id", "Not_Kebab"], RAISES, "is not kebab-case"),
        (["s.py", "--id", "spoof\n"], RAISES, "'spoof\\n' is not kebab-case"),
        (["s.py", "--issue", "https://x\n"], RAISES, "is not an https:// link"),
        (["s.py", "--issue", "http://x"], RAISES, "is not an https:// link"),
        (["s.py"], "import sys\nsys.exit(1)\n", "s.py:2: the script exits the interpreter"),
        (["s.py"], "def f(:\n", "s.py:1: syntax error"),
        (["s.py"], "# coding: nope\nx = 1\n", "s.py: cannot read it (unknown encoding: nope)"),
    ],
)
def test_bad_input(
    fake_wheels: Path, tmp_path: Path, args: list[str], text: str | None, said: str
) -> None:
    if text is not None:
        script(tmp_path, "s.py", text)
    args = [str(tmp_path / args[0]), *args[1:]]
    done = new(fake_wheels, tmp_path / "corpus", *args)
    assert done.exit_code == 2
    (line,) = done.output.strip().splitlines()
    assert said in line and "Traceback" not in done.output
    assert not (tmp_path / "corpus").exists()


@pytest.mark.parametrize("where", ["read-only directory", "under a file"])
def test_an_unwritable_corpus_is_refused_before_any_release_runs(
    fake_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    corpus = tmp_path / "corpus"
    if where == "under a file":
        (tmp_path / "a-file").write_text("")
        corpus = tmp_path / "a-file" / "corpus"
    else:
        corpus.mkdir()
        real = tempfile.mkstemp

        def read_only(*args: Any, **kwargs: Any) -> tuple[int, str]:
            if Path(kwargs.get("dir") or ".").resolve() == corpus.resolve():  # as chmod 555 is
                raise PermissionError(errno.EACCES, "Permission denied")  # for all but root
            return real(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", read_only)

    def started(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a subprocess was started")

    monkeypatch.setattr(subprocess, "Popen", started)
    done = new(fake_wheels, corpus, str(script(tmp_path, "s.py", RAISES)))
    assert done.exit_code == 2, done.output
    (line,) = done.output.strip().splitlines()
    assert line.startswith("mgradcheck: error: cannot ") and str(corpus) in line


def test_an_id_taken_by_another_file(fake_wheels: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "elsewhere.yaml").write_text(
        "id: taken\ntitle: t\nsummary: s\nupstream: {report: 'https://example.invalid/1'}\n"
        "bug: {outcome: fail}\ncode: pass\n"
    )
    done = new(fake_wheels, corpus, str(script(tmp_path, "s.py", RAISES)), "--id", "taken")
    assert done.exit_code == 2 and "elsewhere.yaml:1: id 'taken' is taken" in done.output


# Scripts Python runs as they are: with a UTF-8 BOM, with a latin-1 coding cookie, with a
# NEL in a string (which YAML reads as a line break). The fake grad is wrong on 1.3.0 only.
ACCENTED = WRONG_GRAD.replace("expected 6", "expected 6 (é)")
NEL = WRONG_GRAD.replace("def main():", 'assert len("a\x85b") == 3  # not a line break\n\n\ndef main():')  # fmt: skip


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        (ACCENTED, b"\xef\xbb\xbf" + ACCENTED.encode("utf-8")),
        (
            "# -*- coding: latin-1 -*-\n" + ACCENTED,
            ("# -*- coding: latin-1 -*-\n" + ACCENTED).encode("latin-1"),
        ),
        (NEL, NEL.encode("utf-8")),
    ],
    ids=["bom", "latin-1", "nel"],
)
def test_a_script_python_runs_is_taken_as_python_reads_it(
    fake_wheels: Path, tmp_path: Path, text: str, raw: bytes
) -> None:
    corpus, path = tmp_path / "corpus", tmp_path / "halved_grad.py"
    path.write_bytes(raw)
    compiled = subprocess.run([sys.executable, "-m", "py_compile", str(path)], check=False)
    assert compiled.returncode == 0  # Python takes it

    def mgradcheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mgradcheck", *args],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    done = mgradcheck("new", str(path), "--corpus", str(corpus), "--versions", ">=1.3,<1.5",
                      "--no-index", "--find-links", str(fake_wheels), "--backend", "cpu", "-q")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    checked = mgradcheck("validate", str(corpus))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (entry,) = load([corpus])
    assert entry.code is not None and text.rstrip() + "\n" in entry.code
    assert entry.bug.fixed_in["cpu"] == Version("1.4.0")
