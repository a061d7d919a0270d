from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError
from mgradcheck.outcomes import Outcome
from tests.conftest import MINIMAL, write_entry

GOOD = """\
id: good-entry
title: A good entry
summary: >
  Folded summary text.
upstream:
  report: https://github.com/ml-explore/mlx/issues/1
  fix: https://github.com/ml-explore/mlx/pull/2
origin: pytensor
tags: [jvp, where]
bug:
  outcome: [fail, crash]
  match: "tangent"
  affects: [cpu, metal]
  fixed_in: {cpu: "0.32.0", metal: "0.31.0"}
requires:
  backends: [cpu]
  mlx: ">=0.26"
  float64: true
timeout: 30
repeat: 5
evidence:
  - {mlx: "0.31.2", backend: cpu, outcome: fail, note: "tangent 0.0"}
code: |
  x = 1
  assert_true(x == 1, "one")
"""


def problems(tmp_path: Path, text: str, name: str = "entry") -> list[str]:
    write_entry(tmp_path, name, text)
    with pytest.raises(CorpusError) as info:
        load([tmp_path])
    return [str(p) for p in info.value.problems]


def test_good_entry_loads_every_field(tmp_path: Path) -> None:
    write_entry(tmp_path, "good", GOOD)
    (entry,) = load([tmp_path])
    assert entry.id == "good-entry"
    assert entry.bug.outcomes == (Outcome.FAIL, Outcome.CRASH)
    assert entry.bug.fixed_in["cpu"] == Version("0.32.0")
    assert entry.bug.fixed_in["metal"] == Version("0.31.0")
    assert "cuda" not in entry.bug.fixed_in
    assert entry.requires.float64 and entry.requires.backends == ("cpu",)
    assert entry.timeout == 30 and entry.repeat == 5
    assert entry.origin == "pytensor"
    assert entry.evidence[0].note == "tangent 0.0"
    # The code starts on the line after 'code: |'.
    code_line = GOOD.splitlines().index("code: |") + 2
    assert entry.code_line == code_line


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("timeout: 30", "timeout: thirty"),
            "entry.yaml:{line}: timeout: expected a number, got a string",
        ),
        (("repeat: 5", "repeat: 0"), "entry.yaml:{line}: repeat: 0 is outside 1..10000"),
        (
            ('  match: "tangent"', '  match: "(unclosed"'),
            "entry.yaml:{line}: bug.match: invalid regex",
        ),
        (
            ('{cpu: "0.32.0"', '{cpu: "not.a.version"'),
            "entry.yaml:{line}: bug.fixed_in.cpu: 'not.a.version' is not a valid PEP 440",
        ),
        (
            ('{cpu: "0.32.0"', "{cpu: 0.30"),
            "bug.fixed_in.cpu: write versions as quoted strings (0.3 was read as a number)",
        ),
        (
            ("tags: [jvp, where]", "tags: [jvp, where]\ncolour: red"),
            "entry.yaml:{line}: colour: unknown key",
        ),
        (
            ("  outcome: [fail, crash]", "  outcome: explode"),
            "bug.outcome: 'explode' is not one of fail, crash, error, timeout",
        ),
        (
            ("id: good-entry", "id: Good_Entry"),
            "entry.yaml:{line}: id: 'Good_Entry' is not kebab-case",
        ),
        (
            ("id: good-entry", 'id: "good-entry\\n"'),  # "$" would match before the newline
            "entry.yaml:{line}: id: 'good-entry\\n' is not kebab-case",
        ),
        (
            ("  report: https://github.com/ml-explore/mlx/issues/1", '  report: "https://x\\n"'),
            "upstream.report: 'https://x\\n' is not an https:// link",
        ),
        (
            ('  mlx: ">=0.26"', '  mlx: ">>0.26"'),
            "entry.yaml:{line}: requires.mlx: '>>0.26' is not a valid version specifier",
        ),
        (
            ("  backends: [cpu]", "  backends: [tpu]"),
            "requires.backends[0]: 'tpu' is not one of cpu, metal, cuda",
        ),
        (
            ("  float64: true", "  float64: yes please"),
            "requires.float64: expected true or false, got a string",
        ),
        (
            ("  report: https://github.com/ml-explore/mlx/issues/1", "  report: ftp://x"),
            "upstream.report: 'ftp://x' is not an https:// link",
        ),
        (("timeout: 30", "timeout: 30\ntimeout: 40"), "timeout: duplicate key"),
        (("  x = 1\n", "  x = = 1\n"), "entry.yaml:{line}: code: syntax error"),
        (
            ("  affects: [cpu, metal]", '  affects: [cpu, metal]\n  introduced_in: "0.33.0"'),
            "cpu: fixed_in 0.32.0 is not after introduced_in 0.33.0",
        ),
        (("  fix: https://github.com/ml-explore/mlx/pull/2\n", ""), None),
    ],
)
def test_each_bad_field_names_file_line_and_field(
    tmp_path: Path, change: tuple[str, str], expected: str | None
) -> None:
    old, new = change
    assert old in GOOD
    text = GOOD.replace(old, new)
    if expected is None:
        write_entry(tmp_path, "entry", text)
        load([tmp_path])
        return
    # {line} is the line where the last line of the replacement stands.
    line = text[: text.index(new) + len(new.rstrip("\n"))].count("\n") + 1
    found = problems(tmp_path, text)
    assert any(expected.format(line=line) in p for p in found), found
    assert all(p.startswith(str(tmp_path / "entry.yaml")) for p in found)


def test_missing_required_keys_are_all_reported(tmp_path: Path) -> None:
    found = problems(tmp_path, "id: lonely\n")
    joined = "\n".join(found)
    for key in ("title", "summary", "upstream", "bug"):
        assert f"missing required key {key!r}" in joined
    assert "needs exactly one of 'code' or 'gradcheck'" in joined


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    write_entry(tmp_path, "a", MINIMAL.format(id="same"))
    found = problems(tmp_path, MINIMAL.format(id="same"), name="b")
    assert len(found) == 1
    assert "b.yaml:1: id: duplicate id 'same' (first at" in found[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id: [unclosed\n", "invalid YAML"),
        ("", "file is empty"),
        ("- just\n- a list\n", "expected a mapping, got a list"),
        (
            "!!python/object:os.system {}\n",
            "unsupported tag tag:yaml.org,2002:python/object:os.system",
        ),
        ("id: !!python/name:os.system x\n", "unsupported tag"),
        ("? [a, b]\n: c\n", "keys must be plain strings"),
        ("a: &x [1]\nb: *x\n<<: {c: 1}\n", "merge keys"),
        ("id: 2024-01-01\n", "write dates as quoted strings"),
    ],
)
def test_malformed_yaml_is_one_clear_line(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(tmp_path, text)
    assert any(expected in p for p in found), found


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"id: ok\ntitle: caf\xe9\n")
    with pytest.raises(CorpusError) as info:
        load([tmp_path])
    assert "bad.yaml:2: not UTF-8 (byte 0xe9)" in str(info.value)


def test_deep_nesting_and_alias_bombs_are_refused(tmp_path: Path) -> None:
    deep = "a: " + "[" * 200 + "]" * 200 + "\n"
    assert any("nested" in p for p in problems(tmp_path, deep, "deep"))
    (tmp_path / "deep.yaml").unlink()
    bomb = "a: &a [1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    assert any("more than" in p for p in problems(tmp_path, bomb, "bomb"))


def test_huge_file_is_refused_without_parsing(tmp_path: Path) -> None:
    (tmp_path / "huge.yaml").write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(CorpusError, match="over the"):
        load([tmp_path])


def test_no_corpus_files(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no corpus files"):
        load([tmp_path])


def test_bundled_corpus_is_valid() -> None:
    entries = load([bundled_corpus()])
    assert len(entries) >= 7
    for entry in entries:
        assert (entry.upstream.report or "").startswith("https://") or entry.found_by is not None
        assert entry.code is not None or entry.gradcheck is not None


GRADCHECK = """\
id: declared
title: A declarative entry
summary: Checked by gradcheck.
upstream: {report: "https://example.invalid/report"}
bug: {outcome: fail}
gradcheck:
%s
"""


def test_a_gradcheck_block_is_kept_as_given(tmp_path: Path) -> None:
    block = """\
  fn: "lambda c, x: mx.where(c, x, 2.0)"
  inputs:
    - {shape: [3], dtype: bool}
    - {shape: [3], range: [-1, 1], const: false}
    - {value: [[1.0, 2.0]], dtype: float32}
  dtypes: [float32, bfloat16]
  checks: [jvp, subsets]
  seed: 7
  points: 3
  rtol: 0.01"""
    (entry,) = load([write_entry(tmp_path, "declared", GRADCHECK % block)])
    assert entry.gradcheck is not None and entry.code is None
    assert entry.gradcheck["inputs"][2]["value"] == [[1.0, 2.0]] and entry.gradcheck["seed"] == 7


def test_every_problem_in_a_gradcheck_block_names_its_field(tmp_path: Path) -> None:
    block = """\
  fn: "lambda x: x +"
  inputs:
    - {shape: [2, -1], dtype: float8}
    - {shape: [2], range: [1, 0], fill: "x"}
    - {value: [[1, 2], [3]]}
    - {value: [1, 2], shape: [3], const: "yes"}
    - {shap: [2]}
  dtypes: [int32]
  checks: [jvp, grad]
  seed: -1
  points: 0
  atol: 0"""
    with pytest.raises(CorpusError) as info:
        load([write_entry(tmp_path, "declared", GRADCHECK % block)])
    text = str(info.value)
    for field in (
        "gradcheck.fn: not a Python expression",
        "gradcheck.inputs[0].shape[1]: -1 is outside",
        "gradcheck.inputs[0].dtype: 'float8' is not one of",
        "gradcheck.inputs[1].range: expected two numbers",
        "gradcheck.inputs[1].fill: expected a number",
        "gradcheck.inputs[2].value: expected a number or a (nested, rectangular) list",
        "gradcheck.inputs[3].value: has shape [2], not the shape [3] given",
        "gradcheck.inputs[3].const: expected true or false",
        "gradcheck.inputs[4].shap: unknown key (did you mean 'shape'?)",
        "gradcheck.dtypes[0]: 'int32' is not one of",
        "gradcheck.checks[1]: 'grad' is not one of",
        "gradcheck.seed: -1 is outside",
        "gradcheck.points: 0 is outside",
        "gradcheck.atol: must be positive",
    ):
        assert field in text, field
    assert (
        "declared.yaml:7: gradcheck.fn" in text
        and "declared.yaml:10: gradcheck.inputs[1].range" in text
    )


UNREPORTED = """\
id: open-bug
title: A bug found here, not reported upstream yet
summary: Found by the sweep.
found_by: {tool: mgradcheck sweep, mlx: "0.32.4", backend: cpu, date: "2026-11-22", case: addmm}
bug: {outcome: fail}
code: |
  assert_true(False, "wrong")
"""


def test_found_by_stands_in_for_an_upstream_report(tmp_path: Path) -> None:
    write_entry(tmp_path, "open", UNREPORTED)
    (entry,) = load([tmp_path])
    assert entry.upstream.report is None
    assert entry.found_by is not None
    assert entry.found_by.describe() == (
        "found by mgradcheck sweep on mlx 0.32.4 (cpu), 2026-11-22, case addmm"
    )


def test_without_found_by_the_upstream_report_is_required(tmp_path: Path) -> None:
    text = UNREPORTED.replace("found_by:", "# found_by:")
    assert problems(tmp_path, text) == [
        f"{tmp_path / 'entry.yaml'}:1: missing required key 'upstream' "
        "(or 'found_by' for an unreported bug)"
    ]
    text = text.replace("bug:", 'upstream: {fix: "https://example.invalid/fix"}\nbug:')
    assert problems(tmp_path, text) == [
        f"{tmp_path / 'entry.yaml'}:5: upstream: missing required key 'report'"
    ]


@pytest.mark.parametrize(
    ("found_by", "expected"),
    [
        ("{tool: sweep, date: '2026-11-22'}", "found_by: missing required key 'mlx'"),
        ("{tool: sweep, mlx: '0.32.4', date: 2026-11-22}", "write dates as quoted strings"),
        (
            "{tool: sweep, mlx: '0.32.4', date: 'yesterday'}",
            "found_by.date: 'yesterday' is not a date",
        ),
        (
            "{tool: sweep, mlx: '0.32.4', date: '2026-11-22', backend: tpu}",
            "found_by.backend: 'tpu'",
        ),
    ],
)
def test_bad_found_by_names_its_field(tmp_path: Path, found_by: str, expected: str) -> None:
    old = '{tool: mgradcheck sweep, mlx: "0.32.4", backend: cpu, date: "2026-11-22", case: addmm}'
    assert old in UNREPORTED
    text = UNREPORTED.replace(old, found_by)
    (problem,) = problems(tmp_path, text)
    assert expected in problem


FIXED_IN = '  fixed_in: {cpu: "0.32.0", metal: "0.31.0"}\n'


def test_fixed_by_names_the_commit_and_its_pull_request(tmp_path: Path) -> None:
    sha = "6335c834c24425dae655ee384b63524ed25c4574"
    assert FIXED_IN in GOOD
    write_entry(
        tmp_path,
        "entry",
        GOOD.replace(FIXED_IN, f"{FIXED_IN}  fixed_by: {{commit: {sha}, pr: 3633}}\n"),
    )
    (entry,) = load([tmp_path])
    assert entry.bug.fixed_by is not None
    assert entry.bug.fixed_by.describe() == "6335c834c (pull request #3633)"
    assert entry.bug.fixed_by.url.endswith(f"/commit/{sha}")
    assert entry.bug.introduced_by is None


@pytest.mark.parametrize(
    ("fixed_by", "expected"),
    [
        ("{pr: 3633}", "bug.fixed_by: missing required key 'commit'"),
        ("{commit: main}", "bug.fixed_by.commit: 'main' is not a commit hash"),
        ("{commit: 6335c834c, pr: -1}", "bug.fixed_by.pr: -1 is not a pull request number"),
        ("{commit: 6335c834c, pull: 1}", "bug.fixed_by.pull: unknown key"),
    ],
)
def test_bad_fixed_by_names_its_field(tmp_path: Path, fixed_by: str, expected: str) -> None:
    (problem,) = problems(tmp_path, GOOD.replace(FIXED_IN, f"{FIXED_IN}  fixed_by: {fixed_by}\n"))
    assert expected in problem
    text = GOOD.replace(FIXED_IN, f"{FIXED_IN}  introduced_by: {{commit: 6335c834c}}\n")
    (problem,) = problems(tmp_path, text)
    assert "bug.introduced_by: introduced_by names the commit inside a release range" in problem


def test_a_file_s_problems_are_all_said_at_once_in_line_order(tmp_path: Path) -> None:
    text = """\
id: Bad_Id
title: t
summary: s
found_by: {tool: me, mlx: "0.32.4", backend: cpux, date: 2026-11-22}
bug:
  outcome: failz
  affects: [cpux]
timeout: -1
requires: {mlx: "garbage"}
code: pass
"""
    found = problems(tmp_path, text)  # an unquoted date used to hide the rest
    where = f"{tmp_path / 'entry.yaml'}:"
    assert [p.removeprefix(where).split(":")[0] for p in found] == [
        "1", "4", "4", "6", "7", "8", "9"
    ], found  # fmt: skip
    assert found[1] == f"{where}4: found_by.date: write dates as quoted strings ('2026-11-22')"


def test_the_entry_corpus_readme_gives_to_copy_is_valid(tmp_path: Path) -> None:
    readme = (Path(__file__).parents[2] / "corpus" / "README.md").read_text()
    text = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    write_entry(tmp_path, "copied", text)
    (entry,) = load([tmp_path])
    assert entry.id == "where-jvp-constant-branch"
    assert entry.bug.fixed_in["cpu"] == Version("0.32.0")
