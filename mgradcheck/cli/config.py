"""Defaults from ``[tool.mgradcheck]`` in the nearest ``pyproject.toml``, found as pytest and
ruff find theirs: the working directory, then each parent, the first file with the table.

::

    [tool.mgradcheck]
    corpus = "corpus"          # or a list; --corpus of every command that reads a corpus
    jobs = 4                   # -j of every command that has one
    timeout = 120              # --timeout: run, tests, matrix, bisect
    json = "report.json"       # run's --json; junit, summary and badge likewise

Each is the default of that option in every command that takes it (the report files in
``run`` alone: other commands write other reports); the command line wins, and
``$MGRADCHECK_JOBS`` wins over ``jobs``. Relative paths are the file's directory's. A key
not known, or a value of the wrong type, is bad usage: one line with the file, its line and
the key, exit 2, before anything runs. So is a file naming mgradcheck that cannot be read as
TOML (not UTF-8, nested too deep, an integer of thousands of digits): it is never passed over
for a file further up, nor for no defaults at all.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mgradcheck.cli.options import JOBS_VARIABLE, MAX_JOBS
from mgradcheck.errors import UsageError
from mgradcheck.reports.formats import FORMATS

TABLE = "tool.mgradcheck"


def _path(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _paths(value: Any) -> list[str] | None:
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list) and items and all(isinstance(i, str) and i for i in items):
        return items
    return None


def _number(low: float, high: float, whole: bool) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        kinds = (int,) if whole else (int, float)
        if isinstance(value, kinds) and not isinstance(value, bool) and low <= value <= high:
            return value
        return None

    return check


# key: (the option's parameter name, the commands it is for (None: every one that takes it),
# what the value must be, a check that returns the value or None)
KEYS: dict[str, tuple[str, frozenset[str] | None, str, Callable[[Any], Any]]] = {
    "corpus": ("corpus_paths", None, "a path or a list of paths", _paths),
    "jobs": ("jobs", None, f"a whole number from 1 to {MAX_JOBS}", _number(1, MAX_JOBS, True)),
    "timeout": ("timeout", None, "seconds, from 0.1 to 86400", _number(0.1, 86400, False)),
    **{
        key: (f"{key}_path", frozenset({"run"}), "a path", _path)
        for key in (f.name for f in FORMATS)  # the report files
    },
}


def _line(text: str, key: str | None) -> int:
    """The line of ``key`` in the file's ``[tool.mgradcheck]`` table (its header's for None)."""
    header = re.compile(r"\s*\[\s*tool\s*\.\s*[\"']?mgradcheck[\"']?\s*\]")
    assignment = re.compile(rf"\s*[\"']?{re.escape(key or '')}[\"']?\s*=")
    inside, found = False, 1
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("["):
            inside = bool(header.match(line))
            found = number if inside else found
        elif inside and key is not None and assignment.match(line):
            return number
    return found


def _display_path(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _parse(path: Path, text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the project depends on tomli there
        import tomli as tomllib
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise UsageError(
            f"{_display_path(path)}:{where.group(1) if where else 1}: not valid TOML: {message}"
        ) from None
    # tomllib parses nesting by recursion and integers with int(), which refuses more digits
    # than sys.get_int_max_str_digits(): neither says where, and neither is a bug of ours.
    except RecursionError:
        raise UsageError(
            f"{_display_path(path)}: not valid TOML: arrays or tables nested too deep"
        ) from None
    except ValueError as exc:
        raise UsageError(f"{_display_path(path)}: not valid TOML: {exc}") from None
    return data


def _decoded(path: Path, raw: bytes) -> str:
    """The file's text: TOML is UTF-8, and a file that is not is refused, not passed over."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            f"{_display_path(path)}:{line}: not valid TOML: not UTF-8 (byte 0x{raw[exc.start]:02x})"
        ) from None


def find(start: Path) -> tuple[Path, str, dict[str, Any]] | None:
    """The nearest ``pyproject.toml`` at or above ``start`` with a ``[tool.mgradcheck]`` table:
    the file, its text and the table."""
    for directory in (start, *start.parents):
        path = directory / "pyproject.toml"
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        if b"mgradcheck" not in raw:  # most files: no TOML parsed at each start
            continue
        text = _decoded(path, raw)
        tool = _parse(path, text).get("tool")
        table = tool.get("mgradcheck") if isinstance(tool, dict) else None
        if table is None:
            continue
        if not isinstance(table, dict):
            raise UsageError(f"{_display_path(path)}:{_line(text, None)}: {TABLE}: must be a table")
        return path, text, table
    return None


def load(path: Path, text: str, table: dict[str, Any]) -> dict[str, Any]:
    """The table's values by parameter name, checked; paths made absolute."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(KEYS)
            raise UsageError(
                f"{_display_path(path)}:{_line(text, key)}: {TABLE}.{key}: unknown key (known: {known})"
            )
        name, _, wanted, check = KEYS[key]
        checked = check(value)
        if checked is None:
            raise UsageError(
                f"{_display_path(path)}:{_line(text, key)}: {TABLE}.{key}: must be {wanted}, not {value!r}"
            )
        if name == "corpus_paths":
            checked = [str(path.parent / p) for p in checked]
        elif name.endswith("_path") and checked != "-":
            checked = str(path.parent / checked)
        values[name] = checked
    if os.environ.get(JOBS_VARIABLE, "").strip():
        values.pop("jobs", None)
    return values


def default_map(group: click.Group, values: dict[str, Any]) -> dict[str, Any]:
    """Click's ``default_map`` for ``group``: each command's share of ``values``."""
    fors = {name: commands for name, commands, _, _ in KEYS.values()}
    found: dict[str, Any] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found[name] = default_map(command, values)
            continue
        params = {p.name for p in command.params}
        found[name] = {
            key: value
            for key, value in values.items()
            if key in params and name in (fors[key] or {name})
        }
    return found


def defaults(group: click.Group) -> dict[str, Any] | None:
    """The ``default_map`` of the nearest ``[tool.mgradcheck]``; None when there is none."""
    try:
        start = Path.cwd()
    except OSError:  # the working directory was removed
        return None
    found = find(start)
    if found is None:
        return None
    return default_map(group, load(*found))
