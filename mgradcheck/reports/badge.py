"""A status badge: an SVG drawn here (no network), and a shields.io endpoint JSON.

The colour is the worst verdict's tone (:attr:`Verdict.tone`): green when
every entry behaved as the corpus expects, amber for a FIXED bug, a flaky
entry or an incomplete run, red for a REGRESSED or UNEXPECTED one, grey when
nothing ran. A suite's tests (no verdicts) take their outcomes' tones: green
when every test passed or skipped, red when one failed, crashed or hung. The colours are darker than shields.io's own so that white text
keeps a 4.5:1 contrast, and the SVG names itself to screen readers
(``role="img"``, ``aria-label``, ``<title>``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from mgradcheck.atomic import write_text, written_through
from mgradcheck.outcomes import Outcome, counts_as_run, is_success
from mgradcheck.reports import json_report
from mgradcheck.reports.text import one_line, xml_document
from mgradcheck.run.results import Report

# Tones from least to most severe, and the colour each is drawn in (hex, no '#',
# as the shields.io endpoint takes it).
TONES = {"grey": "6e7781", "green": "1a7f37", "amber": "9a6700", "red": "cf222e"}
LABEL_COLOUR = "555555"
ENDPOINT_SUFFIX = ".shields.json"

# Advance widths of Verdana at 11px, the badge font; other characters count as 7.
_NARROW = dict.fromkeys(" .,:;!|'ijlI", 3.5) | dict.fromkeys("frt()[]/-", 4.6)
_WIDE = dict.fromkeys("mwMW", 10.0) | dict.fromkeys("ABCDGHKNOQRUVXY", 7.8)
_LOWER = dict.fromkeys("acesvxyz", 6.2) | dict.fromkeys("bdghknopqu", 6.8)
_WIDTHS = _NARROW | _WIDE | _LOWER


@dataclass(frozen=True)
class Badge:
    label: str
    message: str
    tone: str

    @property
    def colour(self) -> str:
        return TONES[self.tone]

    @property
    def text(self) -> str:
        """What a screen reader says."""
        return f"{self.label}: {self.message}"


def _versions_label(report: Report) -> str:
    seen = {e.mlx for e in report.environments if e.mlx} | {
        r.environment.mlx for r in report.results if r.environment.mlx
    }

    def key(v: str) -> tuple[int, Version | str]:
        try:
            return (0, Version(v))
        except InvalidVersion:
            return (1, v)

    versions = sorted(seen, key=key)
    backends = sorted(
        {
            e.backend
            for e in (*report.environments, *(r.environment for r in report.results))
            if e.backend
        }
    )
    on = f" ({'+'.join(backends)})" if backends else ""
    if not versions:
        return "mlx" + on
    if len(versions) <= 3:
        return "mlx " + ", ".join(versions) + on
    return f"mlx {versions[0]} to {versions[-1]}{on}"


def summarise(report: Report, label: str | None = None) -> Badge:
    """The badge's label, message and tone for a report (a merged one included).

    For a corpus run the message counts verdicts (``7/9 as expected, 1 FIXED``);
    for a suite's tests it counts outcomes (``50/53 pass, 2 fail, 1 crash``).
    """
    ran = [r for r in report.results if counts_as_run(r.standing)]
    label = label if label is not None else _versions_label(report)
    if not ran:
        return Badge(label, "nothing ran", "grey")
    tally = report.tally()
    vocabulary = report.vocabulary
    good = next(v for v in vocabulary if is_success(v))
    parts = [f"{tally[good]}/{len(ran)} {good.label}"]
    parts += [f"{tally[v]} {v.label}" for v in vocabulary if v.is_failure and tally[v]]
    flaky = sum(r.flaky for r in report.results)
    if flaky:
        parts.append(f"{flaky} flaky")
    stopped = any(r.outcome is Outcome.NOT_RUN for r in report.results)
    if report.interrupted and not stopped:
        parts.append("incomplete")
    order = list(TONES)
    tones = [r.standing.tone for r in report.results]
    if flaky or report.interrupted:
        tones.append("amber")
    return Badge(label, ", ".join(parts), max(tones, key=order.index))


def _width(text: str) -> int:
    return round(sum(_WIDTHS.get(c, 7.0) for c in text)) + 10


def render_svg(badge: Badge) -> str:
    label, message = one_line(badge.label, 80), one_line(badge.message, 120)
    lw, mw = _width(label), _width(message)
    width = lw + mw
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": str(width),
            "height": "20",
            "role": "img",
            "aria-label": badge.text,
        },
    )
    ET.SubElement(svg, "title").text = badge.text
    gradient = ET.SubElement(svg, "linearGradient", {"id": "s", "x2": "0", "y2": "100%"})
    ET.SubElement(gradient, "stop", {"offset": "0", "stop-color": "#bbb", "stop-opacity": ".1"})
    ET.SubElement(gradient, "stop", {"offset": "1", "stop-opacity": ".1"})
    clip = ET.SubElement(svg, "clipPath", {"id": "r"})
    ET.SubElement(clip, "rect", {"width": str(width), "height": "20", "rx": "3", "fill": "#fff"})
    shapes = ET.SubElement(svg, "g", {"clip-path": "url(#r)"})
    for left, w, fill in ((0, lw, LABEL_COLOUR), (lw, mw, badge.colour)):
        ET.SubElement(
            shapes, "rect", {"x": str(left), "width": str(w), "height": "20", "fill": f"#{fill}"}
        )
    ET.SubElement(shapes, "rect", {"width": str(width), "height": "20", "fill": "url(#s)"})
    texts = ET.SubElement(
        svg,
        "g",
        {
            "fill": "#fff",
            "text-anchor": "middle",
            "font-family": "Verdana,Geneva,DejaVu Sans,sans-serif",
            "font-size": "11",
            "aria-hidden": "true",  # the aria-label above already says it all, once
        },
    )
    for text, x in ((label, lw / 2), (message, lw + mw / 2)):
        shadow = {"x": f"{x:g}", "y": "15", "fill": "#010101", "fill-opacity": ".3"}
        ET.SubElement(texts, "text", shadow).text = text
        ET.SubElement(texts, "text", {"x": f"{x:g}", "y": "14"}).text = text
    return xml_document(ET.tostring(svg, encoding="unicode")) + "\n"


def endpoint(badge: Badge) -> dict[str, Any]:
    """The shields.io endpoint document: only the keys its schema accepts."""
    return {
        "schemaVersion": 1,
        "label": badge.label,
        "message": badge.message,
        "color": badge.colour,
    }


def endpoint_beside(svg: Path) -> Path:
    """Where ``run --badge`` puts the endpoint JSON: ``badge.svg`` -> ``badge.shields.json``."""
    return svg.with_name(svg.stem + ENDPOINT_SUFFIX)


def svg_path(path: Path) -> Path:
    """``--badge FILE`` names the SVG; ``.svg`` is added when FILE lacks it, unless FILE is
    written through (``-``, standard output; a device, a FIFO)."""
    return (
        path
        if path.suffix == ".svg" or written_through(path)
        else path.with_name(path.name + ".svg")
    )


def files(path: Path) -> tuple[Path, Path | None]:
    """The SVG and the endpoint JSON that ``--badge FILE`` names (none beside a FILE written
    through: ``/dev/null.shields.json`` would be a new file in ``/dev``)."""
    svg = svg_path(path)
    return svg, None if written_through(svg) else endpoint_beside(svg)


def write(
    report: Report, svg: Path | None, endpoint_json: Path | None, label: str | None = None
) -> None:
    badge = summarise(report, label)
    if svg is not None:
        write_text(svg, render_svg(badge))
    if endpoint_json is not None:
        write_text(endpoint_json, json_report.dumps(endpoint(badge)))
