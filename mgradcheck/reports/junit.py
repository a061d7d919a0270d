"""JUnit XML, the format every CI system reads.

One ``<testsuite>`` per environment (a merged report has several), one
``<testcase>`` per entry. Which child element a testcase gets comes from the
enums (:meth:`Verdict.junit_element`): a REGRESSED, FIXED or UNEXPECTED
verdict fails the testcase, as an ``<error>`` when the child crashed or hung;
a skip says why; an entry that behaved as the corpus expects passes, even when
that means a known bug crashed. A test of a suite (``mgradcheck tests``) has
no verdict and maps by its outcome (:meth:`Outcome.junit_element`): pass
passes, fail and error are a ``<failure>``, crash, timeout and not run an
``<error>``, skip is ``<skipped>`` with its reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.reports.text import clean, details, one_line, tail, telling_run, xml_document
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import EntryResult, Report

MESSAGE_CHARS = 500


def _classname(env: Environment) -> str:
    # CI systems split class names on dots, so the version's dots become underscores.
    version = (env.mlx or "unknown").replace(".", "_")
    return f"mgradcheck.{env.backend or 'unknown'}.mlx-{version}"


def _properties(parent: ET.Element, values: dict[str, str]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=clean(value))


def _testcase(suite: ET.Element, result: EntryResult) -> str:
    """Add one testcase; return its child element's tag ("" when it passed)."""
    case = ET.SubElement(
        suite,
        "testcase",
        name=clean(result.id),
        classname=_classname(result.environment),
        file=clean(result.path),
        time=f"{result.duration:.3f}",
    )
    values = {"outcome": result.outcome_text, "flaky": str(result.flaky).lower()}
    if result.judgement is not None:
        values = {
            "verdict": result.judgement.verdict.label,
            **values,
            "bug_expected": str(result.judgement.bug_expected).lower(),
        }
    _properties(case, values)
    standing = result.standing
    kind = standing.junit_element(result.outcome)
    message = one_line(f"{standing.label}: {result.reason}", MESSAGE_CHARS)
    if kind == "skipped":
        ET.SubElement(case, "skipped", message=one_line(result.reason, MESSAGE_CHARS))
    elif kind:
        element = ET.SubElement(case, kind, message=message, type=standing.label)
        element.text = details(result, streams=False)
        run = telling_run(result)
        if run is not None and run.stdout.strip():
            ET.SubElement(case, "system-out").text = tail(run.stdout)
        if run is not None and run.stderr.strip():
            ET.SubElement(case, "system-err").text = tail(run.stderr)
    return kind


def _count(element: ET.Element, kinds: Counter[str], tests: int, seconds: float) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(kinds["failure"]))
    element.set("errors", str(kinds["error"]))
    element.set("skipped", str(kinds["skipped"]))
    element.set("time", f"{seconds:.3f}")


def render(report: Report) -> str:
    root = ET.Element("testsuites", name="mgradcheck")
    groups: dict[str, list[EntryResult]] = {}
    for result in report.results:
        groups.setdefault(result.environment.label, []).append(result)
    total: Counter[str] = Counter()
    for label, results in groups.items():
        env = results[0].environment
        suite = ET.SubElement(
            root, "testsuite", name=f"mgradcheck {label}", timestamp=clean(report.started)
        )
        info = {
            "mlx": env.mlx or "",
            "backend": env.backend or "",
            "device": env.device or "",
            "python": env.python,
            "platform": env.platform,
            "interpreter": env.interpreter,
            "mgradcheck": env.mgradcheck or report.mgradcheck,
        }
        if report.interrupted:
            info["interrupted"] = "true"
        partial = report.meta.get("partial")
        if isinstance(partial, dict):
            info["partial"] = (
                f"{partial.get('finished')} of {partial.get('planned')} entries finished"
            )
        _properties(suite, info)
        kinds = Counter(_testcase(suite, r) for r in results)
        _count(suite, kinds, len(results), sum(r.duration for r in results))
        total += kinds
    _count(root, total, len(report.results), sum(r.duration for r in report.results))
    ET.indent(root)
    document = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_document(document) + "\n"


def write(report: Report, path: Path) -> None:
    write_text(path, render(report))
