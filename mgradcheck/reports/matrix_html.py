"""A matrix as one HTML page: entries down, releases across, each cell coloured, with a filter.

The page is self-contained (inline CSS and script, no fonts, images or links it loads), so it
can be mailed, attached to a CI run or opened from disk offline. Cells are coloured as the
terminal table colours them: the fill by the cell's state (bad, good, unknown), the text by
its outcome (:attr:`Outcome.colour`); the release where an entry flips is marked with an
arrow and a bar. Entries are grouped by their first tag, which in the corpus names the
transform the bug lives in (``compile``, ``vjp``, ``vmap``...).

Everything that comes from an entry or a child (ids, titles, tags, reasons) is made
printable and then HTML-escaped, and reaches the page's script only through ``data-``
attributes it reads as text: no text of theirs is ever markup or code. The script shows a
cell's outcome, reason and duration on a click or a tap (a ``title`` shows them on hover)
and hides the rows a filter does not match; ``#filter=TEXT`` and ``#cell=ID@VERSION`` in
the address apply one on load.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from mgradcheck.outcomes import Outcome
from mgradcheck.reports.badge import TONES
from mgradcheck.reports.matrix import Cell, Item, MatrixView, flip_lines
from mgradcheck.run.display import printable

# The first line of every page: what tells an earlier page of ours from someone's file.
HEAD = "<!DOCTYPE html>\n<!-- mgradcheck matrix -->\n"
UNGROUPED = "untagged"

# The terminal colours the enums carry, drawn in the badge's tones (readable on white), and
# the two the badge has no tone for.
_HEX = {
    "green": TONES["green"],
    "red": TONES["red"],
    "yellow": TONES["amber"],
    "dim": TONES["grey"],
    "magenta": "8250df",
    "blue": "0969da",
}
_TITLE_CHARS = 300  # of a reason in a hover's tooltip; a click shows it whole
_COUNT = re.compile(r" \d+/\d+$")


def _text(text: str) -> str:
    """Text of an entry or a child, safe as element text and as a quoted attribute value."""
    return html.escape(printable(text), quote=True)


def _slug(label: str) -> str:
    return label.replace(" ", "-")


def outcome_of(text: str) -> Outcome | None:
    """The outcome a cell shows: ``fail``; of ``pass 31/40, crash 9/40`` the failing one."""
    found = []
    for part in text.split(", "):
        try:
            found.append(Outcome.from_label(_COUNT.sub("", part)))
        except ValueError:
            continue  # "n/a": not installable, no outcome
    failing = [o for o in found if o.is_failure]
    return next(iter(failing or found), None)


def _duration(seconds: float | None) -> str:
    return "none ran" if seconds is None else f"{seconds:.2f} s"


def _css() -> str:
    outcomes = "\n".join(f".o-{_slug(o.label)} {{ color: #{_HEX[o.colour]}; }}" for o in Outcome)
    fills = "\n".join(f".fill-{name} {{ background: #{code}1f; }}" for name, code in _HEX.items())
    return _STYLE + outcomes + "\n" + fills + "\n"


_STYLE = """\
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1f2328; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
h2 { font-size: 1.1em; }
.scroll { display: inline-block; max-width: 100%; overflow: auto; max-height: 75vh;
  border: 1px solid #d0d7de; }
table { border-collapse: separate; border-spacing: 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eaeef2; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #f6f8fa; z-index: 2; font-weight: 600; }
thead th:first-child { text-align: left; left: 0; z-index: 3; }
th[scope=row] { position: sticky; left: 0; background: #fff; text-align: left; z-index: 1;
  font-weight: normal; max-width: 28em; overflow: hidden; text-overflow: ellipsis; }
th[scope=row] .title { color: #59636e; font-size: .85em; overflow: hidden;
  text-overflow: ellipsis; }
tr.group th { background: #eaeef2; text-align: left; font-weight: 600; position: sticky;
  left: 0; }
td.cell { text-align: center; cursor: pointer; font-weight: 600; }
td.cell:focus, td.cell.selected { outline: 2px solid #0969da; outline-offset: -2px; }
td.flip, .legend .flip { box-shadow: inset 4px 0 0 #1f2328; }
td.unknown { font-style: italic; font-weight: normal; }
#detail { position: fixed; right: 1em; bottom: 1em; max-width: 40em; max-height: 40vh;
  overflow: auto; background: #fff; border: 1px solid #8c959f; border-radius: 6px;
  padding: .6em 2.2em .6em .8em; box-shadow: 0 4px 12px #0003; white-space: pre-wrap;
  z-index: 3; }
#detail button { position: absolute; top: .3em; right: .3em; }
.legend span { display: inline-block; padding: 0 .5em; margin: 0 .3em .3em 0; }
code { font-family: ui-monospace, monospace; }
"""

_SCRIPT = """\
(function () {
  var box = document.getElementById("filter");
  var shown = document.getElementById("shown");
  var detail = document.getElementById("detail");
  var body = document.getElementById("detail-text");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.item"));
  var groups = document.querySelectorAll("tbody[data-group]");
  var selected = null;

  function apply(query) {
    var words = query.toLowerCase().split(/\\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search");
      var hit = words.every(function (w) { return text.indexOf(w) !== -1; });
      row.hidden = !hit;
      if (hit) { count += 1; }
    });
    Array.prototype.forEach.call(groups, function (group) {
      group.hidden = !group.querySelector("tr.item:not([hidden])");
    });
    shown.textContent = count + " of " + rows.length + " shown";
  }

  function show(cell) {
    var lines = [
      cell.getAttribute("data-entry") + " on MLX " + cell.getAttribute("data-version"),
      "outcome: " + cell.getAttribute("data-outcome"),
      "judged: " + cell.getAttribute("data-state"),
      "reason: " + (cell.getAttribute("data-reason") || "none given"),
      "duration: " + cell.getAttribute("data-seconds")
    ];
    if (cell.hasAttribute("data-flip")) { lines.push("flip: " + cell.getAttribute("data-flip")); }
    body.textContent = lines.join("\\n");
    if (selected) { selected.classList.remove("selected"); }
    selected = cell;
    cell.classList.add("selected");
    detail.hidden = false;
  }

  function hide() {
    detail.hidden = true;
    if (selected) { selected.classList.remove("selected"); selected = null; }
  }

  var table = document.getElementById("matrix");
  table.addEventListener("click", function (event) {
    var cell = event.target.closest("td.cell");
    if (cell) { show(cell); }
  });
  table.addEventListener("keydown", function (event) {
    var cell = event.target.closest("td.cell");
    if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); show(cell); }
  });
  document.getElementById("detail-close").addEventListener("click", hide);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { hide(); }
  });
  box.addEventListener("input", function () {
    apply(box.value);
    history.replaceState(null, "", box.value ? "#filter=" + encodeURIComponent(box.value) : "#");
  });

  var asked = new URLSearchParams(location.hash.slice(1));
  if (asked.has("filter")) { box.value = asked.get("filter"); }
  apply(box.value);
  var wanted = asked.get("cell");
  if (wanted) {
    var at = wanted.lastIndexOf("@");
    Array.prototype.forEach.call(document.querySelectorAll("td.cell"), function (cell) {
      if (cell.getAttribute("data-entry") === wanted.slice(0, at)
          && cell.getAttribute("data-version") === wanted.slice(at + 1)) { show(cell); }
    });
  }
  document.documentElement.setAttribute("data-ready", "");
})();
"""


def _cell(item: Item, version: str, cell: Cell) -> str:
    outcome = outcome_of(cell.text)
    classes = ["cell", f"fill-{cell.colour}"]
    classes += [f"o-{_slug(outcome.label)}"] if outcome is not None else []
    classes += ["flip"] if cell.flip else []
    classes += ["unknown"] if cell.unknown else []
    flip = next((f for f in item.flips if f.after == version), None) if cell.flip else None
    reason = printable(cell.reason)
    short = reason if len(reason) <= _TITLE_CHARS else reason[: _TITLE_CHARS - 1] + "…"
    hover = f"{cell.text} ({cell.state}), {_duration(cell.seconds)}" + (
        f"\n{short}" if short else ""
    )
    attributes = {
        "class": " ".join(classes),
        "tabindex": "0",
        "data-entry": item.id,
        "data-version": version,
        "data-outcome": cell.text,
        "data-state": cell.state,
        "data-reason": cell.reason,
        "data-seconds": _duration(cell.seconds),
        "title": hover,
    }
    if flip is not None:
        attributes["data-flip"] = f"{flip.sentence}{flip.note}; {flip.compare_url}"
    shown = ("→ " if cell.flip else "") + cell.text
    written = " ".join(f'{name}="{_text(value)}"' for name, value in attributes.items())
    return f"<td {written}>{_text(shown)}</td>"


def _row(item: Item, versions: Sequence[str]) -> str:
    search = " ".join([item.id, item.title, *item.tags]).lower()
    title = f'<div class="title">{_text(item.title)}</div>' if item.title else ""
    cells = "".join(_cell(item, v, c) for v, c in zip(versions, item.cells, strict=True))
    return (
        f'<tr class="item" data-search="{_text(search)}">'
        f'<th scope="row" title="{_text(item.title)}"><code>{_text(item.id)}</code>{title}</th>'
        f"{cells}</tr>"
    )


def groups(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The items by their first tag, groups in name order (the untagged last), each in view order."""
    found: dict[str, list[Item]] = {}
    for item in items:
        found.setdefault(item.tags[0] if item.tags else UNGROUPED, []).append(item)
    return sorted(found.items(), key=lambda group: (group[0] == UNGROUPED, group[0]))


def _legend(view: MatrixView) -> str:
    seen = {cell.state: cell.colour for item in view.items for cell in item.cells}
    states = "".join(
        f'<span class="fill-{colour}">{_text(state)}</span>'
        for state, colour in sorted(seen.items())
    )
    outcomes = "".join(
        f'<span class="o-{_slug(o.label)}" title="{_text(o.meaning)}">{o.label}</span>'
        for o in Outcome
    )
    return (
        f'<p class="legend">Fill: {states} Text: {outcomes} '
        '<span class="flip">→ the release where an entry flips</span></p>'
    )


def _flips(view: MatrixView) -> str:
    lines = flip_lines(view, markdown=False)
    return "<ul>\n" + "\n".join(f"<li>{_text(line[2:])}</li>" for line in lines) + "\n</ul>"


def render_html(view: MatrixView, subject: str = "the mgradcheck corpus") -> str:
    """The page: a heading, the filter, the grid by group, the flips worded, the legend."""
    heading = f"MLX releases against {subject} ({view.target})"
    columns = 1 + len(view.versions)
    head = "".join(f'<th scope="col">{_text(v)}</th>' for v in view.versions)
    bodies = []
    for name, members in groups(view.items):
        rows = "\n".join(_row(item, view.versions) for item in members)
        bodies.append(
            f'<tbody data-group="{_text(name)}">\n<tr class="group">'
            f'<th colspan="{columns}" scope="rowgroup">{_text(name)} ({len(members)})</th></tr>\n'
            f"{rows}\n</tbody>"
        )
    interrupted = (
        '<p class="interrupted">The matrix was interrupted: cells marked <em>not run</em> '
        "are missing.</p>\n"
        if view.interrupted
        else ""
    )
    return (
        f'{HEAD}<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
        f"<title>{_text(heading)}</title>\n<style>\n{_css()}</style>\n</head>\n<body>\n"
        f"<h1>{_text(heading)}</h1>\n"
        f"<p>Entries down, releases across (oldest first); bad means {_text(view.meaning)}. "
        "Click or tap a cell for its outcome, reason and duration.</p>\n"
        f"{interrupted}{_legend(view)}\n"
        '<p><label for="filter">Filter by id, title or tag:</label> '
        '<input id="filter" type="search" autocomplete="off" /> <span id="shown"></span></p>\n'
        '<div id="detail" role="status" aria-live="polite" hidden="hidden">'
        '<button id="detail-close" type="button" aria-label="Close">&times;</button>'
        '<div id="detail-text"></div></div>\n'
        f'<div class="scroll">\n<table id="matrix">\n<thead><tr><th scope="col">entry</th>{head}'
        "</tr></thead>\n" + "\n".join(bodies) + "\n</table>\n</div>\n"
        f"<h2>Flips</h2>\n{_flips(view)}\n<script>\n{_SCRIPT}</script>\n</body>\n</html>\n"
    )


__all__ = ["HEAD", "UNGROUPED", "groups", "outcome_of", "render_html"]
