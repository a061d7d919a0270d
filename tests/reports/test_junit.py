"""JUnit XML: one testcase per entry, verdicts mapped from the enums, text that any parser takes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import junit
from tests.builders import every_outcome, every_verdict, report, result
from tests.conftest import environment

# Characters XML 1.0 forbids, and the escape that starts ANSI sequences.
ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def parse(text: str) -> ET.Element:
    assert not ILLEGAL.search(text)
    return ET.fromstring(text.encode("utf-8"))


def case(root: ET.Element, name: str) -> ET.Element:
    (found,) = [c for c in root.iter("testcase") if c.get("name") == name]
    return found


def child_tags(element: ET.Element) -> list[str]:
    return [c.tag for c in element if c.tag != "properties"]


def test_each_verdict_gets_its_element() -> None:
    root = parse(junit.render(every_verdict()))
    assert child_tags(case(root, "regressed"))[0] == "error"  # a crash
    assert child_tags(case(root, "unexpected"))[0] == "error"  # a timeout
    assert child_tags(case(root, "fixed")) == ["failure"]  # passed, but the bug was expected
    assert child_tags(case(root, "as-expected")) == []
    assert child_tags(case(root, "skipped")) == ["skipped"]
    assert child_tags(case(root, "not-run")) == ["error"]


def test_a_regression_that_fails_a_check_is_a_failure() -> None:
    root = parse(junit.render(report(result("r", Verdict.REGRESSED, Outcome.FAIL))))
    failure = case(root, "r").find("failure")
    assert failure is not None
    assert failure.get("type") == "REGRESSED"
    assert failure.get("message", "").startswith("REGRESSED: ")


@pytest.mark.parametrize("verdict", list(Verdict))
@pytest.mark.parametrize("outcome", list(Outcome))
def test_failing_testcases_are_exactly_the_failing_verdicts(
    verdict: Verdict, outcome: Outcome
) -> None:
    root = parse(junit.render(report(result("e", verdict, outcome))))
    tags = child_tags(case(root, "e"))
    failed = bool({"failure", "error"} & set(tags))
    assert failed == verdict.is_failure
    assert ("skipped" in tags) == (verdict is Verdict.SKIPPED)


def test_counts_agree_with_the_report() -> None:
    rep = every_verdict()
    root = parse(junit.render(rep))
    failing = sum(r.verdict.is_failure for r in rep.results)
    assert int(root.get("tests", "")) == len(rep.results)
    assert int(root.get("failures", "")) + int(root.get("errors", "")) == failing
    assert int(root.get("skipped", "")) == rep.tally()[Verdict.SKIPPED]
    (suite,) = root.iter("testsuite")
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        k: root.get(k) for k in ("tests", "failures", "errors", "skipped")
    }


def test_crash_carries_signal_and_output_tails() -> None:
    crash = result(
        "seg",
        Verdict.REGRESSED,
        Outcome.CRASH,
        signal="SIGSEGV",
        exit_status=-11,
        stderr="Fatal Python error: Segmentation fault\n" + "x" * 20_000 + "\nLAST LINE",
        stdout="printed before dying",
        reason="the bug is back: SIGSEGV (1/1 runs)",
    )
    root = parse(junit.render(report(crash)))
    testcase = case(root, "seg")
    error = testcase.find("error")
    assert error is not None and error.text is not None
    assert "SIGSEGV" in (error.get("message") or "")
    assert "signal: SIGSEGV" in error.text
    err = testcase.findtext("system-err") or ""
    assert err.endswith("LAST LINE") and "characters not shown" in err and len(err) < 5000
    assert testcase.findtext("system-out") == "printed before dying"


def test_skip_says_why() -> None:
    skip = result("metal-only", Verdict.SKIPPED, reason="needs metal; this run is on cpu")
    skipped = case(parse(junit.render(report(skip))), "metal-only").find("skipped")
    assert skipped is not None and skipped.get("message") == "needs metal; this run is on cpu"


def test_illegal_characters_and_ansi_codes_are_stripped(tmp_path: Path) -> None:
    dirty = '\x00NUL\x1b[31mred\x1b[0m \x07bell <tag> & "quoted" ]]> \ud800 \x1b]0;title\x07end'
    crash = result(
        "dirty", Verdict.UNEXPECTED, Outcome.CRASH, stderr=dirty, stdout=dirty, reason=dirty
    )
    path = tmp_path / "junit.xml"
    junit.write(report(crash), path)
    raw = path.read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\x00" not in raw
    testcase = case(parse(raw), "dirty")
    err = testcase.findtext("system-err") or ""
    assert err == 'NULred bell <tag> & "quoted" ]]>  end'
    assert "<tag>" in (testcase.find("error").get("message") or "")  # type: ignore[union-attr]


def test_one_suite_per_environment() -> None:
    cpu, cuda = environment(backend="cpu"), environment(mlx="0.31.1", backend="cuda")
    rep = report(result("a", env=cpu), result("a", env=cuda), result("b", Verdict.FIXED, env=cuda))
    root = parse(junit.render(rep))
    suites = root.findall("testsuite")
    assert [s.get("tests") for s in suites] == ["1", "2"]
    props = {p.get("name"): p.get("value") for p in suites[1].iter("property")}
    assert props["backend"] == "cuda" and props["mlx"] == "0.31.1"
    classnames = {c.get("classname") for c in root.iter("testcase")}
    assert classnames == {"mgradcheck.cpu.mlx-0_32_4", "mgradcheck.cuda.mlx-0_31_1"}


def test_a_partial_report_says_so() -> None:
    rep = report(result("a"), interrupted=True, partial={"finished": 1, "planned": 5})
    props = {p.get("name"): p.get("value") for p in parse(junit.render(rep)).iter("property")}
    assert props["interrupted"] == "true"
    assert props["partial"] == "1 of 5 entries finished"


def test_an_empty_report_is_valid() -> None:
    root = parse(junit.render(report()))
    assert root.get("tests") == "0" and not root.findall("testsuite")


def test_a_suites_tests_map_by_outcome() -> None:
    root = parse(junit.render(every_outcome()))
    elements = {c.get("name", "").rsplit("_", 1)[-1]: child_tags(c) for c in root.iter("testcase")}
    assert {name: tags[:1] for name, tags in elements.items()} == {
        "pass": [],
        "fail": ["failure"],
        "crash": ["error"],
        "error": ["failure"],
        "timeout": ["error"],
        "skip": ["skipped"],
        "run": ["error"],  # not run
    }
    props = {p.get("name") for p in root.iter("property")}
    assert "verdict" not in props and "outcome" in props
    failed = case(root, "test_x.py::TestX::test_fail").find("failure")
    assert failed is not None and failed.get("message") == "fail: fail"
