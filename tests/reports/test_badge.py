"""The status badge: message and colour from the verdicts, an accessible SVG, a valid endpoint."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mgradcheck.errors import UsageError
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.reports import badge
from mgradcheck.reports import outputs as outputs_
from tests.builders import report, result, suite_result
from tests.conftest import environment

SVG = "{http://www.w3.org/2000/svg}"


def test_all_as_expected_is_green() -> None:
    b = badge.summarise(report(*(result(f"e{i}") for i in range(7))))
    assert (b.label, b.message, b.tone) == ("mlx 0.32.4 (cpu)", "7/7 as expected", "green")


@pytest.mark.parametrize(
    ("verdicts", "tone"),
    [
        ([Verdict.AS_EXPECTED, Verdict.REGRESSED, Verdict.FIXED], "red"),
        ([Verdict.AS_EXPECTED, Verdict.UNEXPECTED], "red"),
        ([Verdict.AS_EXPECTED, Verdict.FIXED], "amber"),
        ([Verdict.AS_EXPECTED, Verdict.SKIPPED], "green"),
        ([Verdict.SKIPPED], "grey"),
        ([], "grey"),
    ],
)
def test_the_worst_verdict_sets_the_colour(verdicts: list[Verdict], tone: str) -> None:
    b = badge.summarise(report(*(result(f"e{i}", v) for i, v in enumerate(verdicts))))
    assert b.tone == tone


def test_message_counts_what_ran() -> None:
    rep = report(
        result("a"), result("b"), result("c", Verdict.REGRESSED), result("d", Verdict.SKIPPED)
    )
    assert badge.summarise(rep).message == "2/3 as expected, 1 REGRESSED"
    assert badge.summarise(report(result("s", Verdict.SKIPPED))).message == "nothing ran"


def test_flaky_or_incomplete_is_amber() -> None:
    flaky = badge.summarise(report(result("a", flaky=True)))
    assert (flaky.tone, flaky.message) == ("amber", "1/1 as expected, 1 flaky")
    partial = badge.summarise(report(result("a"), interrupted=True))
    assert (partial.tone, partial.message) == ("amber", "1/1 as expected, incomplete")


def test_label_names_every_release() -> None:
    envs = [environment(mlx=v) for v in ("0.32.4", "0.30.0", "0.31.1")]
    rep = report(*(result("a", env=e) for e in envs))
    assert badge.summarise(rep).label == "mlx 0.30.0, 0.31.1, 0.32.4 (cpu)"
    more = report(*(result("a", env=environment(mlx=f"0.{n}.0")) for n in range(26, 33)))
    assert badge.summarise(more).label == "mlx 0.26.0 to 0.32.0 (cpu)"
    assert badge.summarise(rep, label="pytensor-mlx").label == "pytensor-mlx"


def test_svg_is_accessible_and_escaped() -> None:
    b = badge.Badge("mlx <0.32> & co", "7/7 as expected", "green")
    root = ET.fromstring(badge.render_svg(b))
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("aria-label") == "mlx <0.32> & co: 7/7 as expected"
    assert root.findtext(f"{SVG}title") == "mlx <0.32> & co: 7/7 as expected"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "mlx <0.32> & co" in texts and "7/7 as expected" in texts
    fills = {r.get("fill") for r in root.iter(f"{SVG}rect")}
    assert f"#{badge.TONES['green']}" in fills


def test_wider_text_makes_a_wider_badge() -> None:
    short = ET.fromstring(badge.render_svg(badge.Badge("mlx", "ok", "green")))
    long = ET.fromstring(
        badge.render_svg(badge.Badge("mlx 0.32.4", "17/23 as expected, 4 REGRESSED", "red"))
    )
    assert int(long.get("width", "0")) > int(short.get("width", "0")) > 20


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("colour", [*badge.TONES.values(), badge.LABEL_COLOUR])
def test_white_text_is_readable_on_every_colour(colour: str) -> None:
    assert 1.05 / (_luminance(colour) + 0.05) >= 4.5  # WCAG AA contrast with white


def test_every_verdict_tone_has_a_colour() -> None:
    assert {v.tone for v in Verdict} <= set(badge.TONES)


def test_endpoint_has_only_what_shields_accepts(tmp_path: Path) -> None:
    svg, endpoint = tmp_path / "badge.svg", tmp_path / "badge.shields.json"
    badge.write(report(result("a"), result("b", Verdict.FIXED)), svg, endpoint)
    data = json.loads(endpoint.read_text())
    assert set(data) == {"schemaVersion", "label", "message", "color"}
    assert data["schemaVersion"] == 1
    assert data["message"] == "1/2 as expected, 1 FIXED"
    assert data["color"] == badge.TONES["amber"]
    assert all(isinstance(data[k], str) and data[k] for k in ("label", "message", "color"))
    assert ET.parse(svg).getroot().get("aria-label") == f"{data['label']}: {data['message']}"


def test_badge_file_naming() -> None:
    assert badge.svg_path(Path("out/badge")) == Path("out/badge.svg")
    assert badge.svg_path(Path("out/badge.svg")) == Path("out/badge.svg")
    assert badge.endpoint_beside(Path("out/badge.svg")) == Path("out/badge.shields.json")


def test_run_badge_option_names_both_files(tmp_path: Path) -> None:
    outputs = outputs_.report_outputs(badge=tmp_path / "status")
    assert outputs.paths() == [tmp_path / "status.svg", tmp_path / "status.shields.json"]
    clash = outputs_.report_outputs(json=tmp_path / "r.shields.json", badge=tmp_path / "r.svg")
    with pytest.raises(UsageError, match="named for two different reports"):
        clash.check()


def test_a_suites_tests_count_passes_and_fail_red() -> None:
    passing = badge.summarise(
        report(suite_result("a", Outcome.PASS), suite_result("b", Outcome.SKIP))
    )
    assert (passing.message, passing.tone) == ("1/1 pass", "green")
    failing = badge.summarise(
        report(
            *(
                suite_result(i, o)
                for i, o in (("a", Outcome.PASS), ("b", Outcome.FAIL), ("c", Outcome.CRASH))
            )
        )
    )
    assert (failing.message, failing.tone) == ("1/3 pass, 1 fail, 1 crash", "red")
