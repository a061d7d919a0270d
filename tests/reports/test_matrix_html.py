"""``matrix --html``: one self-contained page, through a real ``python -m mgradcheck matrix`` over
fake MLX releases, with hostile text in an entry and in its child's message; and the page
rendered by headless Chromium (marked ``browser``: not in CI)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.reports.matrix_html import HEAD, outcome_of
from tests import fake_mlx

MGRADCHECK = [sys.executable, "-m", "mgradcheck"]
WAIT = 300.0  # installs of fake releases on a loaded 2-core machine; never a timing assertion
HOSTILE_TITLE = "Title <script>alert(\"t\")</script> & 'quotes' \x1b[31mred\u202e"
HOSTILE_MESSAGE = '<img src=x onerror=alert(1)> & "quoted" \x1b]0;retitled\x07 </script>'
HOSTILE = f"""\
id: hostile-text
title: {json.dumps(HOSTILE_TITLE)}
summary: A fixture whose title and message hold markup, quotes and control characters.
upstream: {{report: "https://example.invalid/hostile-text"}}
tags: [jvp, "<b>&amp;"]
bug: {{outcome: fail, match: "onerror", fixed_in: "1.4.0"}}
timeout: 20
code: |
  v = tuple(int(p) for p in mx.__version__.split(".")[:2])
  assert_true(v >= (1, 4), {HOSTILE_MESSAGE!r})
"""
VOID = {"meta", "input", "br", "hr", "img", "link"}


class Balanced(HTMLParser):
    """Checks that every element is closed in order, and collects what the page would load."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.loads: list[str] = []
        self.groups: list[str] = []
        self.cells: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            if found.get(name):
                self.loads.append(f"{tag} {name}={found[name]}")
        if tag == "tbody" and "data-group" in found:
            self.groups.append(str(found["data-group"]))
        if tag == "td":
            self.cells.append(found)
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.problems.append(f"<{tag} /> is not a void element")
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def parsed(page: str) -> Balanced:
    parser = Balanced()
    parser.feed(page)
    parser.close()
    assert parser.problems == [] and parser.open == []
    return parser


def self_contained(page: str) -> None:
    """Nothing fetched: no remote address after an attribute that loads, no CSS that imports."""
    assert not re.search(r"\b(?:src|href|srcset|action)\s*=\s*[\"']?\s*(?:https?:)?//", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert not re.search(r"<(?:link|iframe|object|embed|img)\b", page, re.I)


def corpus(tmp_path: Path) -> Path:
    directory = tmp_path / "corpus"
    directory.mkdir()
    for name in ("fixed-in-1-3", "broke-in-1-4"):
        shutil.copy(fake_mlx.FIXTURES / f"{name}.yaml", directory)
    (directory / "hostile-text.yaml").write_text(HOSTILE, encoding="utf-8")
    return directory


def matrix(wheels: Path, *args: str) -> subprocess.CompletedProcess[str]:
    source = ["--no-index", "--find-links", str(wheels), "--backend", "cpu", "-q"]
    return subprocess.run(
        [*MGRADCHECK, "matrix", *args, *source, "--versions", ">=1.2,<1.5"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=WAIT,
    )


def test_the_page_of_a_real_matrix(fake_wheels: Path, tmp_path: Path) -> None:
    entries = corpus(tmp_path)
    page_path = tmp_path / "matrix.html"
    done = matrix(fake_wheels, "--corpus", str(entries), "--html", str(page_path))
    assert done.returncode == 0, done.stderr
    page = page_path.read_text(encoding="utf-8")
    assert page.startswith(HEAD)
    found = parsed(page)
    assert found.loads == []
    self_contained(page)

    # Hostile text is shown, escaped and printable, never markup.
    assert "<script>alert" not in page and "<img" not in page and "<b>" not in page
    assert "\x1b" not in page and "\u202e" not in page and "\x07" not in page
    assert (
        "Title &lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &#x27;quotes&#x27;" in page
    )
    assert "\\x1b[31mred\\u202e" in page
    assert page.count("</script>") == 1  # the page's own
    (hostile,) = [c for c in found.cells if c["data-entry"] == "hostile-text" and
                  c["data-version"] == "1.2.0"]  # fmt: skip
    assert '<img src=x onerror=alert(1)> & "quoted" \\x1b]0;retitled\\x07' in str(
        hostile["data-reason"]
    )  # attribute values, once parsed, are the message as written
    assert hostile["data-outcome"] == "fail" and hostile["data-state"] == "bad"
    assert str(hostile["data-seconds"]).endswith(" s")

    # Grouped by first tag, the untagged last; flips marked on the release they happen.
    assert found.groups == ["fixture", "jvp"]
    flips = {(c["data-entry"], c["data-version"]): c for c in found.cells if c.get("data-flip")}
    assert sorted(flips) == [
        ("broke-in-1-4", "1.4.0"),
        ("fixed-in-1-3", "1.3.0"),
        ("hostile-text", "1.4.0"),
    ]
    fixed = flips[("fixed-in-1-3", "1.3.0")]
    assert "flip" in str(fixed["class"]).split() and "o-pass" in str(fixed["class"]).split()
    assert str(fixed["data-flip"]).startswith(
        "bad through 1.2.0, good from 1.3.0 (corpus: fixed_in"
    )
    assert "→ pass" in page

    # Run again: its own earlier page is rewritten; someone's file, or an input, never is.
    again = matrix(fake_wheels, "--corpus", str(entries), "--html", str(page_path))
    assert again.returncode == 0, again.stderr
    notes = tmp_path / "notes.html"
    notes.write_text("<!DOCTYPE html>\n<p>my notes</p>\n")
    refused = matrix(fake_wheels, "--corpus", str(entries), "--html", str(notes))
    assert refused.returncode == 2 and "is not an mgradcheck report" in refused.stderr
    assert notes.read_text() == "<!DOCTYPE html>\n<p>my notes</p>\n"
    entry = entries / "fixed-in-1-3.yaml"
    before = entry.read_bytes()
    named = matrix(fake_wheels, "--corpus", str(entries), "--html", str(entry))
    assert named.returncode == 2 and "which this command reads" in named.stderr
    assert entry.read_bytes() == before
    assert "Traceback" not in refused.stderr + named.stderr


def test_a_page_of_reports_made_elsewhere(tmp_path: Path) -> None:
    """--from-report: the page of runs made on other machines, nothing installed or run."""
    from mgradcheck.outcomes import Outcome
    from mgradcheck.reports import json_report
    from tests.builders import report, result
    from tests.conftest import environment

    files = []
    for version, outcome, message in (
        ("1.2.0", Outcome.FAIL, "broken before 1.3 (this is 1.2.0)"),
        ("1.3.0", Outcome.PASS, ""),
    ):
        path = tmp_path / f"run-{version}.json"
        env = environment(mlx=version)
        ran = result("fixed-in-1-3", outcome=outcome, env=env, message=message)
        json_report.write(report(ran), path)
        files.append(path)
    args = ["matrix", "fixed-in-1-3", "--corpus", str(fake_mlx.FIXTURES), "--html", "-"]
    done = CliRunner().invoke(cli, [*args, *(f"--from-report={f}" for f in files)])
    assert done.exit_code == 0, done.output
    page = done.stdout
    assert page.startswith(HEAD) and "from 2 reports" in page
    found = parsed(page)
    assert [c["data-version"] for c in found.cells if c.get("data-flip")] == ["1.3.0"]


def test_the_outcome_a_cell_is_coloured_by() -> None:
    assert outcome_of("fail").label == "fail"  # type: ignore[union-attr]
    assert outcome_of("pass 31/40, crash 9/40").label == "crash"  # type: ignore[union-attr]
    assert outcome_of("not run").label == "not run"  # type: ignore[union-attr]
    assert outcome_of("n/a") is None


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         "--virtual-time-budget=5000", *args],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")
def test_the_page_in_a_browser(fake_wheels: Path, tmp_path: Path) -> None:
    """What Chromium shows once the page's script has run: every cell, the filter, the popup."""
    entries = corpus(tmp_path)
    page_path = tmp_path / "matrix.html"
    done = matrix(fake_wheels, "--corpus", str(entries), "--html", str(page_path))
    assert done.returncode == 0, done.stderr
    url = page_path.as_uri()

    shown = chromium("--dump-dom", url)
    assert 'data-ready=""' in shown.stdout, shown.stderr  # the script ran to its end
    dom = parsed_dom(shown.stdout)
    assert len(dom.cells) == 3 * 3
    assert "3 of 3 shown" in shown.stdout

    filtered = chromium("--dump-dom", url + "#filter=jvp")
    rows = re.findall(
        r'<tr class="item" data-search="([a-z0-9-]+)[^"]*"( hidden="")?', filtered.stdout
    )
    assert {name: bool(hidden) for name, hidden in rows} == {
        "fixed-in-1-3": True,
        "broke-in-1-4": True,
        "hostile-text": False,
    }
    assert '<tbody data-group="fixture" hidden="">' in filtered.stdout
    assert "1 of 3 shown" in filtered.stdout

    popped = chromium("--dump-dom", url + "#cell=hostile-text@1.2.0")
    detail = re.search(r'<div id="detail-text">(.*?)</div>', popped.stdout, re.S)
    assert detail is not None
    text = html.unescape(detail.group(1))
    assert "hostile-text on MLX 1.2.0\noutcome: fail\njudged: bad" in text
    assert '<img src=x onerror=alert(1)> & "quoted"' in text and "duration: " in text
    assert '<div id="detail" role="status" aria-live="polite">' in popped.stdout  # not hidden

    picture = tmp_path / "matrix.png"
    chromium(f"--screenshot={picture}", "--window-size=1400,900", url)
    assert picture.stat().st_size > 10_000


def parsed_dom(text: str) -> Balanced:
    """The DOM Chromium dumps: HTML serialised, its void elements unclosed."""
    parser = Balanced()
    parser.feed(text)
    parser.close()
    return parser
