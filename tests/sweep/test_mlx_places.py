"""Where to look in MLX: the shipped index of its sources, and the section report upstream writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
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


def test_a_compile_entry_s_tags_put_the_place_they_name_most_first(
    corpus: dict[str, Entry],
) -> None:
    """A shapeless broadcast's shape is Compiled::output_shapes'; a constant's source text is
    print_constant's, of whatever dtype."""
    text = mlx_places.section(corpus["shapeless-empty-axis-broadcast"], RELEASES, "cpu")
    assert re.findall(r"^- `([^`]+)`", text, re.M)[0] == "Compiled::output_shapes"
    assert place(text, "Compiled::output_shapes").startswith("mlx/compile.cpp:")
    text = mlx_places.section(corpus["compiled-complex-nan-constant"], RELEASES, "cpu")
    assert re.findall(r"^- `([^`]+)`", text, re.M)[0] == "print_constant"
    assert place(text, "print_constant").startswith("mlx/backend/common/compiled.cpp:")


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


def test_functions_looked_up_by_name_are_called_and_a_tag_may_name_their_family() -> None:
    index = Index(
        "v9.9.9",
        functions={"bitwise_and": [["BitwiseBinary"]], "stack": [["Concatenate"]]},
        primitives={
            name: {
                "declared": "mlx/primitives.h:1",
                "vmap": f"mlx/primitives.cpp:{line}",
                "bases": [],
            }
            for name, line in (("BitwiseBinary", 10), ("Concatenate", 20))
        },
        compile={},
    )
    code = (
        "for name in ('bitwise_and',):\n"
        "    op = getattr(mx, name)\n"
        "    assert_close(mx.vmap(op)(a, b), mx.stack([op(a[0], b[0])]), what=f'{name}')\n"
    )

    def listed(e: Entry) -> list[str]:
        text = mlx_places.section(e, RELEASES, "cpu", index)
        return [line for line in text.splitlines() if line.startswith("- ")]

    # Tagged bitwise: the family the entry is about, not the stack that builds its control.
    assert listed(entry(code=code, tags=("vmap", "bitwise"))) == [
        "- `BitwiseBinary::vmap` in mlx/primitives.cpp:10 (`mx.bitwise_and`)"
    ]
    # Tagged with neither: every function it calls, in the order written.
    assert [item.split("`")[1] for item in listed(entry(code=code, tags=("vmap",)))] == [
        "BitwiseBinary::vmap", "Concatenate::vmap",
    ]  # fmt: skip
    # Without getattr, a string is only a string.
    assert listed(entry(code="print('bitwise_and')", tags=("vmap", "bitwise"))) == []


def test_report_upstream_names_the_bitwise_primitive_not_the_stack_of_its_control(
    fake_wheels: Path, tmp_path: Path
) -> None:
    # The entry calls bitwise_and, bitwise_or and bitwise_xor through getattr(mx, name), and
    # mx.stack only to build the loop it compares with: the vmap at fault is BitwiseBinary's.
    done = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "report", "upstream", "vmap-bitwise-unmapped-argument",
         "--no-index", "--find-links", str(fake_wheels), "--releases", "==1.6.0"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    where = done.stdout.split("### Where to look in MLX\n", 1)[1].split("\n### ", 1)[0]
    assert re.findall(r"^- `([^`]+)`", where, re.M) == ["BitwiseBinary::vmap"], where
    index = mlx_places.shipped()
    assert place(where, "BitwiseBinary::vmap") == index.primitives["BitwiseBinary"]["vmap"]
