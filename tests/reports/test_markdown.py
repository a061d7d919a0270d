"""The Markdown summary: counts, the verdicts that need a person first, every entry, within 1 MiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import markdown
from mgradcheck.reports import outputs as outputs_
from mgradcheck.reports.formats import BY_NAME, Output
from tests.builders import every_outcome, every_verdict, report, result


def test_counts_then_unexpected_then_all() -> None:
    rep = every_verdict()
    text = markdown.render(rep)
    assert text.startswith(f"## mgradcheck: {rep.summary_line()}\n")
    for v in Verdict:
        assert f"| {v.label} | 1 | {v.meaning} |" in text
    attention = text.index("### Needs attention (4)")
    everything = text.index("<details><summary>All 6 entries</summary>")
    assert attention < everything
    needs = text[attention:everything]
    for name in ("`regressed`", "`unexpected`", "`fixed`", "`not-run`"):
        assert name in needs
    assert "`as-expected`" not in needs and "`skipped`" not in needs
    assert text.count("| `as-expected` |") == 1


def test_nothing_to_attend_to_has_no_attention_table() -> None:
    text = markdown.render(report(result("a"), result("b", flaky=True)))
    assert "Needs attention" not in text
    assert "fail (flaky)" in text


def test_cells_cannot_break_the_table() -> None:
    nasty = "a | b\nsecond line <script>alert(1)</script> \x1b[31mred\x1b[0m\x00"
    text = markdown.render(report(result("x", Verdict.REGRESSED, Outcome.FAIL, reason=nasty)))
    row = next(line for line in text.splitlines() if line.startswith("| `x`"))
    assert "a \\| b second line &lt;script&gt;" in row
    assert "\x1b" not in text and "\x00" not in text and "<script>" not in text


def test_a_long_reason_is_shortened() -> None:
    text = markdown.render(report(result("x", reason="why " * 500)))
    row = next(line for line in text.splitlines() if line.startswith("| `x`"))
    assert len(row) < 400 and row.rstrip(" |").endswith("…")


def test_stays_within_the_limit_and_says_what_it_dropped() -> None:
    many = report(
        *(result(f"entry-{i:05d}", Verdict.REGRESSED, reason="r" * 150) for i in range(3000))
    )
    text = markdown.render(many, limit=100_000)
    assert len(text.encode("utf-8")) <= 100_000
    assert "rows not shown to stay within the summary size limit" in text
    full = markdown.render(many)
    assert len(full.encode("utf-8")) <= markdown.GITHUB_LIMIT


def test_partial_and_interrupted_are_flagged() -> None:
    partial = markdown.render(
        report(result("a"), interrupted=True, partial={"finished": 1, "planned": 4})
    )
    assert "**Partial:** 1 of 4 entries" in partial
    interrupted = markdown.render(report(result("a", Verdict.NOT_RUN), interrupted=True))
    assert "**Interrupted:**" in interrupted


def test_step_summary_is_appended_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# Earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outputs = outputs_.report_outputs()
    assert [o.path for o in outputs.chosen] == [summary]
    rep = report(result("a"))
    outputs_.write(rep, outputs)
    outputs_.write(rep, outputs)  # rewritten as entries finish: appended once, not twice
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# Earlier step\n## mgradcheck: ")
    assert text.count("## mgradcheck:") == 1


def test_an_explicit_summary_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "github.md"))
    outputs = outputs_.report_outputs(summary=tmp_path / "mine.md")
    assert outputs.get("summary") == Output(BY_NAME["summary"], tmp_path / "mine.md")


def test_no_summary_outside_github() -> None:
    assert outputs_.report_outputs().get("summary") is None


def test_a_suites_tests_count_outcomes_and_say_how_they_map() -> None:
    text = markdown.render(every_outcome())
    assert text.startswith("## mgradcheck: 7 tests: 1 pass, 1 fail, 1 crash, 1 error,")
    assert "| outcome | tests | meaning | JUnit |" in text
    assert f"| crash | 1 | {Outcome.CRASH.test_meaning} | error |" in text
    assert "| pass | 1 | the test passed | passed |" in text
    assert "### Needs attention (5)" in text and "| test | environment | outcome | reason |" in text
    assert "| `test_x.py::TestX::test_crash` | mlx 0.32.4 cpu py3.11.7 | **crash** |" in text
    assert "verdict" not in text
