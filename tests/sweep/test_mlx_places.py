"""Where to look in MLX: the shipped index of its sources, and the section report upstream writes."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from packaging.version import Version

from mgradcheck.corpus.entry import Bug, Entry, Upstream
from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import Judged, State
from mgradcheck.sweep import mlx_places
from mgradcheck.sweep.mlx_places import Index

RELEASES = (
    Judged(Version("0.31.2"), State.BAD, "fail", "r"),
    Judged(Version("0.32.0"), State.BAD, "fail", "r"),
    Judged(Version("0.32.4"), State.GOOD, "pass", "passes"),
)


@pytest.fixture(scope="module")
def corpus() -> dict[str, Entry]:
    return {e.id: e for e in load([bundled_corpus()])}


def entry(**fields: Any) -> Entry:
    base: dict[str, Any] = dict(
        id="x", title="a title", summary="s.", upstream=Upstream(None), bug=Bug((Outcome.FAIL,)),
        path="x.yaml", line=1,
    )  # fmt: skip
    return Entry(**{**base, **fields})


def place(text: str, name: str) -> str:
    """The ``file:line`` a section gives for ``name``."""
    found = re.search(rf"^- `{re.escape(name)}` in (\S+:\d+)", text, re.M)
    assert found is not None, text
    return found.group(1)


def test_the_shipped_index_knows_addmm_and_where_its_jvp_is() -> None:
    index = mlx_places.shipped()
    assert index.ref == "v0.32.1"
    assert index.nearest("addmm") == ["AddMM"]
    owner, at = index.method("AddMM", "jvp") or ("", "")
    assert owner == "AddMM" and re.fullmatch(r"mlx/primitives\.cpp:\d+", at)
    assert index.nearest("fft.irfft") == ["FFT"]  # through irfftn and fft_impl
    file = resources.files("mgradcheck.sweep").joinpath("data").joinpath("mlx-primitives.json")
    text = file.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n"  # as written


def test_a_jvp_entry_points_at_the_primitive_jvp(corpus: dict[str, Entry]) -> None:
    index = mlx_places.shipped()
    text = mlx_places.section(corpus["addmm-jvp-alpha-beta"], RELEASES, "cpu")
    assert text.startswith("### Where to look in MLX\n\nAt MLX v0.32.1 ")
    assert place(text, "AddMM::jvp") == index.primitives["AddMM"]["jvp"]
    assert text.count("\n- ") == 1  # the matmuls and NumPy of the oracle are not suspects
    text = mlx_places.section(corpus["irfft-jvp-odd-length"], RELEASES, "cpu")
    assert place(text, "FFT::jvp") == index.primitives["FFT"]["jvp"]
    assert "(`mx.fft.irfft`)" in text


def test_a_compile_entry_points_at_compile_and_the_cpu_kernels(corpus: dict[str, Entry]) -> None:
    text = mlx_places.section(corpus["compiled-log-base-cse"], RELEASES, "cpu")
    items = re.findall(r"^- `([^`]+)`", text, re.M)
    assert items[0] == "detail::compile_simplify"  # tagged cse: where equivalent nodes merge
    assert place(text, "detail::compile_simplify").startswith("mlx/compile.cpp:")
    assert place(text, "build_kernel").startswith("mlx/backend/cpu/compiled.cpp:")
    assert place(text, "Log::is_equivalent").startswith("mlx/primitives.")  # the base it ignored
    assert "Concatenate" not in text  # mx.stack only gathers the results: the title names log
    text = mlx_places.section(corpus["shapeless-compile-gather-mm"], RELEASES, "cpu")
    assert re.findall(r"^- `([^`]+)`", text, re.M)[0] == "detail::compile_replace"
    assert place(text, "GatherMM::output_shapes").startswith("mlx/primitives.cpp:")


def test_what_was_checked_is_one_line() -> None:
    text = mlx_places.section(entry(code="y = mx.addmm(c, a, b)", tags=("jvp",)), RELEASES, "cuda")
    checked = text.rstrip().splitlines()[-1]
    assert checked == (
        "Checked on cuda: the script above reproduces on mlx 0.31.2, 0.32.0; passes on mlx 0.32.4. "
        "Its expected values are computed without the transform under test (written out in the script)."
    )  # fmt: skip


OWN = {"Primitive": ("jvp", 5), "Matmul": ("vmap", 50), "Reduce": ("jvp", 60), "Full": ("jvp", 70)}
SMALL = Index(
    "v9.9.9",
    functions={"matmul": [["Matmul"]], "ones": [["Full"]], "trace": [[], ["Reduce"]]},
    primitives={
        name: {
            "declared": f"mlx/primitives.h:{line}",
            method: f"mlx/primitives.cpp:{line}",
            "bases": [] if name == "Primitive" else ["Primitive"],
        }
        for name, (method, line) in OWN.items()
    },
    compile={},
)


def test_a_gradcheck_function_s_operators_are_mlx_calls_and_a_method_may_be_inherited() -> None:
    spec = {
        "fn": "lambda a, b: mx.trace(mx.ones((2, 2)) * (a @ b))",
        "inputs": [],
        "checks": ["jvp"],
    }
    text = mlx_places.section(entry(gradcheck=spec), RELEASES, "cpu", SMALL)
    items = [line for line in text.splitlines() if line.startswith("- ")]
    assert items == [
        "- `Reduce::jvp` in mlx/primitives.cpp:60 (`mx.trace`)",
        "- `Matmul::jvp` in mlx/primitives.cpp:5 (`mx.matmul`, inherited from `Primitive`)",
    ]  # `ones` only makes an input; the checks asked for say which transform
    assert "(float64 finite differences, the eager function or a loop)" in text


def test_nothing_found_is_one_line() -> None:
    text = mlx_places.section(entry(code="x[1:2] = y", tags=("vjp",)), RELEASES, "cpu", SMALL)
    body = text.split("\n\n")[1]
    assert body.startswith("Nothing found: ") and "v9.9.9" in body and "\n" not in body
