"""The shipped JSON Schemas agree with the code: the loader for entries, the writer for reports.

The entry schema is generated from the format's table, which the loader reads
(mgradcheck/corpus/entry_format.py); the file shipped is what the generator writes.
Entries, both ways: every entry the loader accepts (the bundled corpus, the
test fixtures, random variations) validates; every entry the loader refuses
for a reason a JSON Schema can express is refused by the schema too. What no
schema can express is listed in NOT_EXPRESSIBLE, and only those refusals are
excused.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mgradcheck.corpus import entry_schema, files, loader, yamlsource
from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.results import Report
from mgradcheck.schemas import load, schema_text
from tests import builders
from tests.conftest import BEHAVIOURS, FIXTURES, SUITES, environment
from tests.corpus.test_fuzz_loader import FUZZ

ENTRY = jsonschema.Draft7Validator(
    load("entry"), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
)
REPORT = jsonschema.Draft7Validator(load("report"))

# Loader refusals no JSON Schema can state, by a fragment of the loader's message (some
# messages cover a part a schema states too: REFUSALS below holds such cases to the schema).
NOT_EXPRESSIBLE = (
    "syntax error",  # code: is Python
    "not a Python expression",  # gradcheck.fn is Python
    "is not after introduced_in",  # an order between two fields' versions
    "with low < high",  # an order between two numbers of one list
    "has shape",  # a literal value against the shape given beside it
    "rectangular",  # a nested list of numbers of equal lengths
    "expected a whole number, got a float",  # 2.0: JSON Schema's "integer" accepts it
    "is not a valid version specifier",  # the schema's pattern is PEP 440's shape, not all of it
)


def loader_problems(data: Any) -> list[str]:
    problems: list[yamlsource.SourceError] = []
    doc = yamlsource.Document("entry.yaml", data, {}, frozenset())
    loader.check_document(doc, problems)
    return [f"{p.field}: {p.message}" for p in problems]


def schema_accepts(data: Any) -> bool:
    return ENTRY.is_valid(data)


def every_valid_file() -> list[Path]:
    found = files.corpus_files([files.bundled_corpus(), FIXTURES])
    return [f for f in found if not loader_problems(yamlsource.read(f).data)]


def test_the_schemas_are_valid_draft_7() -> None:
    jsonschema.Draft7Validator.check_schema(load("entry"))
    jsonschema.Draft7Validator.check_schema(load("report"))


@pytest.mark.parametrize("path", every_valid_file(), ids=lambda p: p.name)
def test_every_entry_the_loader_accepts_validates(path: Path) -> None:
    errors = [e.message for e in ENTRY.iter_errors(yamlsource.read(path).data)]
    assert errors == []


def test_the_bundled_corpus_is_all_there() -> None:
    bundled = files.corpus_files([files.bundled_corpus()])
    assert bundled and set(bundled) <= set(every_valid_file())


def test_the_shipped_entry_schema_is_the_generated_one() -> None:
    assert schema_text("entry") == entry_schema.text(), "write it again: make schema"


VALID: dict[str, dict[str, Any]] = {p.name: yamlsource.read(p).data for p in every_valid_file()}


def _base(kind: str = "code") -> dict[str, Any]:
    """A valid entry to change: a ``code:`` fixture, or the first ``gradcheck:`` entry."""
    if kind == "code":
        return copy.deepcopy(VALID["passes.yaml"])
    first = next(data for data in VALID.values() if "gradcheck" in data)
    return copy.deepcopy(first)


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            if isinstance(key, str) and not isinstance(node.get(key), dict):
                node[key] = {}  # an earlier change may have set it to a scalar or None
            node = node[key]
        node[path[-1]] = value

    return mutate


def _drop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


# Loader refusals a schema can express: (what, base, mutation).
REFUSALS: list[tuple[str, str, Callable[[dict[str, Any]], None]]] = [
    ("unknown top-level key", "code", _set(("summry",), "x")),
    ("missing title", "code", _drop("title")),
    ("missing bug", "code", _drop("bug")),
    ("id not kebab-case", "code", _set(("id",), "Not_Kebab")),
    ("id a number", "code", _set(("id",), 5)),
    ("id ending in a newline", "code", _set(("id",), "spoof\n")),
    ("report ending in a newline", "code", _set(("upstream", "report"), "https://x.invalid/r\n")),
    ("empty summary", "code", _set(("summary",), "   ")),
    ("title on two lines", "code", _set(("title",), "one\ntwo")),
    ("no upstream, no found_by", "code", _drop("upstream")),
    ("upstream without report", "code", _set(("upstream",), {"fix": "https://x.invalid/f"})),
    ("report not https", "code", _set(("upstream", "report"), "http://x.invalid/r")),
    ("related not a list", "code", _set(("upstream", "related"), "https://x.invalid/r")),
    ("unknown upstream key", "code", _set(("upstream", "issue"), "https://x.invalid/r")),
    ("bug outcome pass", "code", _set(("bug", "outcome"), "pass")),
    ("bug outcome list with skip", "code", _set(("bug", "outcome"), ["fail", "skip"])),
    ("bug without outcome", "code", _set(("bug",), {"affects": ["cpu"]})),
    ("bug match not a regex", "code", _set(("bug", "match"), "(unclosed")),
    ("bug match empty", "code", _set(("bug", "match"), "")),
    ("affects an unknown backend", "code", _set(("bug", "affects"), ["tpu"])),
    ("affects null", "code", _set(("bug", "affects"), None)),
    ("fixed_in a number", "code", _set(("bug", "fixed_in"), 0.3)),
    ("fixed_in not PEP 440", "code", _set(("bug", "fixed_in"), "0.32.0-fixed!")),
    ("fixed_in for an unknown backend", "code", _set(("bug", "fixed_in"), {"rocm": "1.0"})),
    ("reported_on a string", "code", _set(("bug", "reported_on"), "metal")),
    ("requires not a mapping", "code", _set(("requires",), "cpu")),
    ("requires.backends unknown", "code", _set(("requires", "backends"), ["gpu"])),
    ("requires.mlx a number", "code", _set(("requires", "mlx"), 0.26)),
    ("requires.float64 a string", "code", _set(("requires", "float64"), "yes")),
    ("timeout too small", "code", _set(("timeout",), 0.01)),
    ("timeout a boolean", "code", _set(("timeout",), True)),
    ("repeat zero", "code", _set(("repeat",), 0)),
    ("repeat a string", "code", _set(("repeat",), "3")),
    ("tags not strings", "code", _set(("tags",), [1, 2])),
    ("code empty", "code", _set(("code",), "")),
    ("neither code nor gradcheck", "code", _drop("code")),
    ("both code and gradcheck", "gradcheck", _set(("code",), "assert_true(True, 'x')")),
    ("evidence not a list", "code", _set(("evidence",), {"mlx": "1.0"})),
    ("evidence outcome not run", "code",
     _set(("evidence",), [{"mlx": "1.0", "backend": "cpu", "outcome": "not run"}])),
    ("evidence without backend", "code", _set(("evidence",), [{"mlx": "1.0", "outcome": "pass"}])),
    ("notes a number", "code", _set(("notes",), 5)),
    ("found_by without date", "code", _set(("found_by",), {"tool": "sweep", "mlx": "0.31.2"})),
    ("found_by date not a date", "code",
     _set(("found_by",), {"tool": "sweep", "mlx": "0.31.2", "date": "2026-13-40"})),
    ("found_by backend unknown", "code",
     _set(("found_by",), {"tool": "t", "mlx": "1.0", "date": "2026-01-01", "backend": "x"})),
    ("gradcheck without fn", "gradcheck", _drop("gradcheck", "fn")),
    ("gradcheck inputs empty", "gradcheck", _set(("gradcheck", "inputs"), [])),
    ("gradcheck input empty", "gradcheck", _set(("gradcheck", "inputs"), [{}])),
    ("gradcheck input dtype", "gradcheck", _set(("gradcheck", "inputs"), [{"dtype": "int4"}])),
    ("gradcheck input shape negative", "gradcheck",
     _set(("gradcheck", "inputs"), [{"shape": [-1]}])),
    ("gradcheck value with fill", "gradcheck",
     _set(("gradcheck", "inputs"), [{"value": 1.0, "fill": 2.0}])),
    ("gradcheck value a string", "gradcheck", _set(("gradcheck", "inputs"), [{"value": "one"}])),
    ("gradcheck range of three", "gradcheck",
     _set(("gradcheck", "inputs"), [{"range": [0, 1, 2]}])),
    ("gradcheck dtypes empty", "gradcheck", _set(("gradcheck", "dtypes"), [])),
    ("gradcheck checks unknown", "gradcheck", _set(("gradcheck", "checks"), ["grad"])),
    ("gradcheck seed negative", "gradcheck", _set(("gradcheck", "seed"), -1)),
    ("gradcheck points too many", "gradcheck", _set(("gradcheck", "points"), 101)),
    ("gradcheck rtol zero", "gradcheck", _set(("gradcheck", "rtol"), 0)),
    ("gradcheck unknown key", "gradcheck", _set(("gradcheck", "tolerance"), 1e-3)),
]  # fmt: skip


@pytest.mark.parametrize(("what", "base", "mutate"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_what_the_loader_refuses_the_schema_refuses(
    what: str, base: str, mutate: Callable[[dict[str, Any]], None]
) -> None:
    data = _base(base)
    assert loader_problems(data) == [] and schema_accepts(data)
    mutate(data)
    problems = loader_problems(data)
    assert problems, f"the loader accepts {what}"
    assert not schema_accepts(data), f"the schema accepts {what}: {problems}"


@pytest.mark.parametrize("data", [["id", "x"], "id: x", None, 3])
def test_a_file_that_is_no_mapping_is_refused_by_both(data: Any) -> None:
    assert loader_problems(data) and not schema_accepts(data)


@pytest.mark.parametrize(
    ("what", "mutate"),
    [
        ("a code syntax error", _set(("code",), "def (")),
        ("fixed before introduced", _set(("bug", "introduced_in"), "0.40.0")),
        ("a repeat of 2.0", _set(("repeat",), 2.0)),
    ],
)
def test_what_no_schema_can_say_is_left_to_the_loader(
    what: str, mutate: Callable[[dict[str, Any]], None]
) -> None:
    """The excused refusals are real: the loader refuses these, the schema cannot."""
    data = _base()
    data["bug"]["fixed_in"] = "0.32.0"
    mutate(data)
    problems = loader_problems(data)
    assert problems and all(any(n in p for n in NOT_EXPRESSIBLE) for p in problems), problems
    assert schema_accepts(data)


# Random values at the places an entry holds values, for the property below.
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**5) | st.floats(-10, 10**5, allow_nan=False)
    | st.sampled_from(["", " ", "x", "0.32.0", "cpu", "metal", "fail", "crash", "https://x.invalid/a",
                       "2026-01-01", ">=0.26", "float32", "jvp", "a\nb", "Bad_Id", "v1.0", "1.0.post1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["cpu", "metal", "x", "shape", "value", "fill", "report", "mlx", "outcome"]),
        inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
PLACES = [
    ("id",), ("title",), ("summary",), ("upstream",), ("upstream", "report"),
    ("upstream", "related"), ("tags",), ("bug", "outcome"), ("bug", "match"), ("bug", "affects"),
    ("bug", "fixed_in"), ("bug", "introduced_in"), ("bug", "reported_on"), ("requires",),
    ("requires", "backends"), ("requires", "mlx"), ("requires", "float64"), ("timeout",),
    ("repeat",), ("code",), ("evidence",), ("notes",), ("origin",), ("found_by",),
    ("gradcheck",), ("gradcheck", "inputs"), ("gradcheck", "dtypes"), ("gradcheck", "seed"),
    ("gradcheck", "rtol"),
]  # fmt: skip


@FUZZ
@given(
    base=st.sampled_from(["code", "gradcheck"]),
    changes=st.lists(st.tuples(st.sampled_from(PLACES), VALUES), min_size=1, max_size=3),
)
def test_loader_and_schema_agree_on_random_entries(
    base: str, changes: list[tuple[tuple[str, ...], Any]]
) -> None:
    data = _base(base)
    for place, value in changes:
        if (
            place[0] == "gradcheck"
            and len(place) > 1
            and not isinstance(data.get("gradcheck"), dict)
        ):
            continue
        _set(place, value)(data)
    problems = loader_problems(data)
    if not problems:
        assert schema_accepts(data), [e.message for e in ENTRY.iter_errors(data)]
    elif not any(n in p for p in problems for n in NOT_EXPRESSIBLE):
        assert not schema_accepts(data), problems


# --- the JSON report ---------------------------------------------------------------------------


def test_the_report_schema_knows_every_verdict_and_outcome() -> None:
    schema = load("report")
    assert schema["definitions"]["verdict"]["enum"] == [v.label for v in Verdict]
    assert schema["definitions"]["outcome"]["enum"] == [o.label for o in Outcome]
    counts = schema["definitions"]
    assert set(counts["verdictCounts"]["required"]) == {v.label for v in Verdict}
    assert set(counts["outcomeCounts"]["required"]) == {o.label for o in Outcome}


@pytest.mark.parametrize(
    "report",
    [
        builders.every_verdict(),
        builders.report(builders.result("x", flaky=True), interrupted=True, shard="1/2",
                        partial={"finished": 1, "planned": 2}),
        builders.every_verdict(environment(mlx=None, backend=None)),
        builders.every_outcome(),
    ],
    ids=["every verdict", "partial shard", "no MLX", "a suite's tests"],
)  # fmt: skip
def test_reports_validate(report: Report) -> None:
    data = json.loads(json.dumps(report.to_json()))
    assert [e.message for e in REPORT.iter_errors(data)] == []


def test_a_report_written_by_a_real_run_validates(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(BEHAVIOURS), "passes",
         "segfaults", "--repeat", "2", "-q", "--json", str(out)],
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    data = json.loads(out.read_text())
    assert [e.message for e in REPORT.iter_errors(data)] == []
    for broken in ({**data, "schema_version": 2}, {**data, "counts": {}}):
        assert not REPORT.is_valid(broken)
    data["results"][0]["verdict"] = "passed"
    assert not REPORT.is_valid(data)


def test_a_report_of_a_suites_tests_validates_and_is_held_to_its_vocabulary(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    subprocess.run(
        [sys.executable, "-m", "mgradcheck", "tests", str(SUITES / "basic" / "test_behaviours.py"),
         "-k", "test_passes or test_fails", "-q", "--json", str(out)],
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    data = json.loads(out.read_text())
    assert data["meta"]["kind"] == "tests" and data["results"][0]["verdict"] is None
    assert [e.message for e in REPORT.iter_errors(data)] == []
    by_verdict = {v.label: 0 for v in Verdict}
    for broken in ({**data, "counts": by_verdict}, {**data, "counts": {**data["counts"], "x": 0}}):
        assert not REPORT.is_valid(broken)
    data["results"][0]["verdict"] = "pass"  # an outcome is no verdict
    assert not REPORT.is_valid(data)


@pytest.mark.parametrize("which", ["entry", "report", "list", "show"])
def test_the_schema_command_prints_the_shipped_file(which: str) -> None:
    from click.testing import CliRunner

    from mgradcheck.cli import cli

    result = CliRunner().invoke(cli, ["schema", which])
    assert result.exit_code == 0
    assert json.loads(result.output) == load(which)
