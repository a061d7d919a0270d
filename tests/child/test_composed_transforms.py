"""The transform checks that need no finite differences or compose transforms, in real children.

Each test runs gradcheck in a child process on the installed MLX, once on a
function whose transforms are right (it must pass, and have compared something)
and once on one whose transform is wrong by construction (it must be caught).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mlx.core")

pytestmark = pytest.mark.mlx

ROOT = Path(__file__).resolve().parents[2]
HEADER = """\
import json, sys
import mlx.core as mx
from mgradcheck.child.gradcheck import Arg, check
"""


def run_child(tmp_path: Path, body: str) -> dict[str, Any]:
    """Run ``body`` (which sets ``result``) in a child; its gradcheck result as JSON."""
    script = tmp_path / "child.py"
    script.write_text(
        HEADER + textwrap.dedent(body) + "\nprint(json.dumps(result.to_json()))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", str(script)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return data


def found(result: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["check"] == check]


ABS = """\
@mx.custom_function
def f(x):
    return mx.abs(x)

# With one argument, MLX passes the rules the arrays themselves, not tuples of them.
@f.jvp
def f_jvp(x, tangent):
    return mx.sign(x) * tangent

@f.vjp
def f_vjp(x, cotangent, output):
    # WRONG is the subgradient this rule picks at 0, which its jvp (sign: 0) does not.
    return cotangent * mx.where(x == 0, WRONG, mx.sign(x))
"""


def first_order_of(tmp_path: Path, rules: str, arg: str, points: int) -> dict[str, Any]:
    """What the jvp, vjp and adjoint checks of ``f`` (defined by ``rules``) found in a child."""
    call = f"check(lambda x: f(x), [{arg}], checks=['jvp', 'vjp', 'adjoint'], points={points})"
    return run_child(tmp_path, f"{rules}result = {call}\n")


@pytest.mark.parametrize(("wrong", "caught"), [(0.0, False), (1.0, True)])
def test_jvp_and_vjp_must_be_one_linear_map_even_at_a_kink(
    tmp_path: Path, wrong: float, caught: bool
) -> None:
    # Every element sits on abs's kink: finite differences judge nothing there.
    result = first_order_of(tmp_path, f"WRONG = {wrong}\n{ABS}", "Arg((4,), fill=0.0)", 1)
    assert result["ran"].get("adjoint", 0) >= 1, result
    assert "jvp" not in result["ran"]  # no smooth element: first order compared nothing
    adjoint = found(result, "adjoint")
    assert bool(adjoint) is caught, result
    if caught:
        assert "vjp vs jvp in float64" in adjoint[0]["paths"]


TIED_MAX = """\
@mx.custom_function
def f(x):
    return mx.max(x, axis=-1)

# The jvp takes the tangent of the first maximal element; the vjp, when SPLIT, divides the
# cotangent among all of them: the two pick different derivatives where elements tie.
@f.jvp
def f_jvp(x, tangent):
    first = mx.argmax(x, axis=-1, keepdims=True)
    return mx.take_along_axis(tangent, first, axis=-1).squeeze(-1)

@f.vjp
def f_vjp(x, cotangent, output):
    if SPLIT:
        top = (x == mx.expand_dims(output, -1)).astype(x.dtype)
        return mx.expand_dims(cotangent, -1) * top / top.sum(axis=-1, keepdims=True)
    first = mx.argmax(x, axis=-1, keepdims=True)
    hot = mx.arange(x.shape[-1]) == first
    return mx.expand_dims(cotangent, -1) * hot
"""


@pytest.mark.parametrize(("split", "caught"), [(False, False), (True, True)])
def test_jvp_and_vjp_must_agree_at_tied_elements_though_a_few_ulps_away_they_do(
    tmp_path: Path, split: bool, caught: bool
) -> None:
    # Drawn with ties (rows of 3 from 3 values); the jitter that tells a
    # finite-difference finding at a tie from a wrong derivative breaks the ties, and must
    # not excuse the adjoint check's.
    result = first_order_of(tmp_path, f"SPLIT = {split}\n{TIED_MAX}", "Arg((2, 3), ties=True)", 2)
    adjoint = found(result, "adjoint")
    assert bool(adjoint) is caught, result
    if caught:  # what the function is made of, as its graph says, goes with the finding
        assert "Max" in adjoint[0]["made_by"], adjoint


def test_finite_differences_across_drawn_ties_are_set_aside_and_counted(tmp_path: Path) -> None:
    """The default sweep of 0.32.4 drew partition in float16 with ties and reported its vjp
    against finite differences, which across a tie estimate no derivative (its jvp and vjp
    agree there); in float16 the jitter meant to excuse it is smaller than their step."""
    result = run_child(
        tmp_path,
        "result = check(lambda a: mx.partition(a, 0, None), [Arg((2, 4), ties=True)],"
        " checks=['jvp', 'vjp', 'adjoint'], dtypes=['float16'], points=2)\n",
    )
    assert result["findings"] == [], result
    assert any("set aside (drawn with ties" in n for n in result["not_checked"]), result


MUL = """\
@mx.custom_function
def f(a, b):
    return a * b

@f.vmap
def f_vmap(inputs, axes):
    (a, b), (axis_a, axis_b) = inputs, axes
    if PLANTED and axis_a is None:
        return a * b, 0  # b's batch axis taken as 0 wherever it is
    a, b = (x if ax is None else mx.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
    if axis_a is None:
        a = mx.broadcast_to(a, b.shape)
    return a * b, 0
"""


@pytest.mark.parametrize("planted", [False, True])
def test_vmap_maps_each_argument_alone_at_a_negative_axis(tmp_path: Path, planted: bool) -> None:
    result = run_child(
        tmp_path,
        f"PLANTED = {planted}\n{MUL}"
        "result = check(lambda a, b: f(a, b), [Arg((3,)), Arg((3,))], checks=['vmap'], points=1)\n",
    )
    vmap = found(result, "vmap")
    assert bool(vmap) is planted, result
    if planted:
        assert vmap[0]["repro"]["in_axes"] == [None, -1]
    else:
        assert result["ran"]["vmap"] >= 6, result  # the two arguments alone, each


def test_vmap_of_vjp_puts_a_scalar_argument_s_cotangents_on_an_axis_it_has(tmp_path: Path) -> None:
    # With a mapped alone at axis 1 (out_axes 1), the cotangent of the scalar b has one axis
    # only, the batch: asking vmap to put it at axis 1 raised in the check, not in MLX.
    result = run_child(
        tmp_path,
        "result = check(lambda a, b: a * b, [Arg((3,)), Arg(())], checks=['vmap'], points=1)\n",
    )
    assert result["ok"] and result["ran"]["vmap"] >= 6, result


EXPORT = """\
real_import = mx.import_function

def planted_import(path):
    imported = real_import(path)
    if PLANTED == "constants":  # the traced inputs written into the file: new ones ignored
        first = []
        def replay(*a):
            first[:] = first or list(a)
            return imported(*first)
        return replay

    @mx.custom_function
    def g(x):  # the function under test has one argument
        return imported(x)

    @g.vjp
    def g_vjp(x, cotangents, outputs):
        return mx.vjp(imported, [x], list(cotangents))[1][0] * 2.0

    return g if PLANTED == "vjp" else imported

mx.import_function = planted_import
"""


@pytest.mark.parametrize("planted", ["", "constants", "vjp"])
def test_an_exported_function_read_back_must_equal_the_function(
    tmp_path: Path, planted: str
) -> None:
    result = run_child(
        tmp_path,
        f"PLANTED = {planted!r}\n{EXPORT}"
        "result = check(lambda x: mx.sin(x) * x, [Arg((3,))], checks=['export'], points=1)\n",
    )
    export = found(result, "export")
    assert bool(export) is bool(planted), result
    if not planted:
        assert result["ran"]["export"] >= 4 and not result["refused"], result
    elif planted == "constants":
        assert export[0]["repro"]["at"] == "a fresh draw"
    else:
        assert export[0]["paths"] == "vjp of the imported function vs vjp of the function"
    assert list(tmp_path.glob("mgradcheck-export-*")) == []  # the file went with its folder


def test_a_release_without_export_lists_it_as_unsupported(tmp_path: Path) -> None:
    result = run_child(
        tmp_path,
        "del mx.export_function\n"
        "result = check(lambda x: mx.sin(x), [Arg((3,))], checks=['export'], points=1)\n",
    )
    assert result["ok"] and "has no attribute 'export_function'" in result["refused"]["export"]


COMPOSE = """\
from mgradcheck.child.gradcheck import composed

composed.SAMPLE = len(composed.TABLE)  # every composition, not a draw of them

@mx.custom_function
def f(a, b):
    return a * b

@f.vmap
def f_vmap(inputs, axes):
    a, b = (mx.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
    return (mx.stop_gradient(a * b) if PLANTED == "vmap" else a * b), 0

@mx.custom_function
def square(x):
    return x * x

@square.vjp
def square_vjp(x, cotangent, output):
    # Right in value; under "second", its derivative is lost to stop_gradient.
    return cotangent * 2.0 * (mx.stop_gradient(x) if PLANTED == "second" else x)

fn = (lambda x, b: square(x) * b) if PLANTED == "second" else (lambda a, b: f(a, b))
result = check(fn, [Arg((3,)), Arg((3,))], checks=['jvp', 'vjp', 'compose'], points=1)
"""


@pytest.mark.parametrize(
    ("planted", "caught_by"),
    [
        ("", set()),
        ("vmap", {"grad(vmap)"}),  # vmap's output no longer carries a gradient
        ("second", {"jvp(vjp)"}),  # first order is right, its derivative is not
    ],
)
def test_composed_transforms_agree_with_a_loop_or_with_finite_differences(
    tmp_path: Path, planted: str, caught_by: set[str]
) -> None:
    result = run_child(tmp_path, f"PLANTED = {planted!r}\n{COMPOSE}")
    compose = found(result, "compose")
    assert not found(result, "jvp") and not found(result, "vjp"), result
    assert {f["repro"]["path"] for f in compose} == caught_by, result
    if not planted:
        assert result["ran"]["compose"] >= 8, result
    # a finding names the primitives of its path's graph: grad(vmap)'s derivative is a zero
    # (the planted stop_gradient), jvp(vjp)'s goes through the planted stop_gradient
    made = {f["repro"]["path"]: f["made_by"] for f in compose}
    if planted == "vmap":
        assert "Full" in made["grad(vmap)"] and "StopGradient" not in made["grad(vmap)"], made
    if planted == "second":
        assert {"StopGradient", "Multiply"} <= set(made["jvp(vjp)"]), made
