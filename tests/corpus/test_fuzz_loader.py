"""Fuzz the corpus loader: whatever the bytes, one clear line per problem, never a traceback.

The budget is bounded (Hypothesis ``max_examples``) so CI time stays predictable.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mgradcheck.corpus.loader import load
from mgradcheck.errors import CorpusError
from tests.conftest import MINIMAL

PROBLEM = re.compile(r"^\S.*?(:\d+)?: .+$")
EXAMPLES = int(os.environ.get("MGRADCHECK_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces that make YAML interesting: tags, anchors, flow and block syntax, odd scalars.
TOKENS = st.sampled_from(
    [
        "id", "title", "summary", "upstream", "bug", "code", "requires", "timeout", "repeat",
        "outcome", "fixed_in", "match", ":", ": ", "- ", "\n", "  ", "{", "}", "[", "]", ",",
        "&a ", "*a", "!!python/object:os.system", "!!binary", "!!set", "<<: ", "|", ">", "'", '"',
        "0.30", "0.32.0", "-1", "1e999", "null", "~", "true", "yes", "\t", "#", "%YAML 1.1\n",
        "---\n", "...\n", "\\x00", "\u00e9", "\ufeff", "(?P<", "2024-01-01",
    ]
)  # fmt: skip


def assert_clean_failure_or_entries(path: Path) -> None:
    try:
        load([path])
    except CorpusError as exc:
        assert exc.problems, "a CorpusError must carry at least one problem"
        for problem in exc.problems:
            line = str(problem)
            assert "\n" not in line, line
            assert line.startswith(str(path)), line
            assert PROBLEM.match(line), line


@FUZZ
@given(st.lists(TOKENS, max_size=60))
def test_token_soup(tokens: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_text("".join(tokens), encoding="utf-8")
        assert_clean_failure_or_entries(path)


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_bytes(data)
        assert_clean_failure_or_entries(path)


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@FUZZ
@given(
    st.sampled_from(
        [
            "id",
            "title",
            "summary",
            "upstream",
            "bug",
            "requires",
            "timeout",
            "repeat",
            "code",
            "tags",
            "evidence",
            "origin",
            "notes",
        ]
    ),
    VALUES,
)
def test_wrong_types_in_a_valid_entry(field: str, value: object) -> None:
    import yaml

    data = yaml.safe_load(MINIMAL.format(id="fuzzed"))
    data[field] = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert_clean_failure_or_entries(path)


def test_python_tags_never_construct_anything(tmp_path: Path) -> None:
    marker = tmp_path / "constructed"
    payloads = [
        f"!!python/object/apply:os.system ['touch {marker}']\n",
        f"id: !!python/object/apply:os.system ['touch {marker}']\n",
        f"code: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n",
    ]
    for i, payload in enumerate(payloads):
        (tmp_path / f"p{i}.yaml").write_text(payload)
    result = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("unsupported tag") == 3
    assert "Traceback" not in result.stderr
    assert not marker.exists()
