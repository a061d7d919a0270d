"""Which primitives of a traced graph hold a shape fixed when it was traced, and which
primitives a graph is made of.

A shapeless compiled function replays its graph at new input shapes, each
primitive giving its output shape from its inputs (``Primitive::output_shapes``
in mlx/primitives.cpp). A few take it from what they stored instead: a
reshape's target shape, a broadcast of one input to its stored shape, an
arange's length, a gather's slice sizes, a dynamic slice's size, an
unflatten's new axes. A graph holding one of them is "conditional on the
input shapes", which MLX documents that shapeless compilation does not follow
(docs/src/usage/compile.rst, "Shapeless Compilation"): at new shapes it may
raise or give other values, by design. A graph without them must follow the
new shapes; a crash is never by design. So must a function build the same graph
at the new shapes as at the traced ones: one whose operations choose another
graph by shape (``hadamard_transform`` of one element is a multiplication,
``einsum`` of a size-1 contracted axis a broadcast) is conditional on the
input shapes too.

A broadcast read only by elementwise primitives is the exception: compile
fuses it into their kernel (mlx/compile.cpp, ``is_fusable``), whose output
shape follows the inputs, so ``x * 2.0`` is shapeless though ``2.0`` is
broadcast to ``x``'s traced shape.

The graph is read from ``mx.export_to_dot`` (in every release since 0.26),
whose nodes are labelled with the primitive's name and whose edges give each
primitive's inputs.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mlx.core as mx

# Primitives whose output shape is (partly) what they stored when traced.
FIXED = ("Reshape", "Arange", "Gather", "DynamicSlice", "Unflatten")
# What compile fuses a broadcast into (mlx/compile.cpp: is_unary, is_binary, is_ternary), as
# export_to_dot names them.
FUSABLE = frozenset([
    "Abs", "ArcCos", "ArcCosh", "ArcSin", "ArcSinh", "ArcTan", "ArcTanh", "AsType", "Ceil",
    "Cos", "Conjugate", "Cosh", "Remainder", "Erf", "ErfInv", "Exp", "Floor", "Log", "Log1p",
    "LogicalNot", "Negative", "Round", "Sigmoid", "Sign", "Sin", "Sinh", "Square", "Sqrt", "Tan",
    "Tanh", "Expm1", "Real", "Imag", "BitwiseInvert", "Add", "Divide", "Equal", "Greater",
    "GreaterEqual", "Less", "LessEqual", "LogicalAnd", "LogicalOr", "LogAddExp", "Maximum",
    "Minimum", "Multiply", "NotEqual", "Power", "Subtract", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor", "LeftShift", "RightShift", "ArcTan2", "Select", "Broadcast",
])  # fmt: skip
_NODE = re.compile(r'^\{ (\d+) \[label ="([^"]*)"', re.M)
_INTO = re.compile(r'^"([^"]*)" -> (\d+)$', re.M)  # an array into the primitive reading it
_OUT = re.compile(r'^(\d+) -> "([^"]*)"$', re.M)  # a primitive to the array it makes


@dataclass(frozen=True)
class Graph:
    """What shapeless replay depends on in one traced graph."""

    fixed: tuple[str, ...]  # primitives holding a traced shape, sorted
    primitives: tuple[
        tuple[str, int], ...
    ]  # every other primitive, counted (fused broadcasts aside)

    def unlike(self, other: Graph) -> str:
        """How ``other`` (the same function at other shapes) differs, or "" if it does not."""
        mine, theirs = Counter(dict(self.primitives)), Counter(dict(other.primitives))
        if mine == theirs:
            return ""
        more = sorted((theirs - mine).elements())
        fewer = sorted((mine - theirs).elements())
        return ", ".join(
            part
            for part in (
                f"{'+'.join(more)} there" if more else "",
                f"no {'+'.join(fewer)}" if fewer else "",
            )
            if part
        )


def joined(a: Graph | None, b: Graph | None) -> Graph | None:
    """Both graphs as one: a compiled vjp traces its function's forward graph too, which
    the cotangents' exported graph may not show."""
    if a is None or b is None:
        return None
    counted = Counter(dict(a.primitives)) + Counter(dict(b.primitives))
    return Graph(tuple(sorted({*a.fixed, *b.fixed})), tuple(sorted(counted.items())))


def graph(fn: Callable[..., Any], args: list[Any]) -> Graph | None:
    """``fn``'s graph at ``args``, or None if it cannot be read (then nothing is excused)."""
    try:
        outputs = fn(*args)
        text = io.StringIO()
        mx.export_to_dot(text, *outputs)
    except Exception:  # noqa: BLE001 - without a graph, nothing is excused
        return None
    dot = text.getvalue()
    names = {node: label.split(" ")[0] for node, label in _NODE.findall(dot)}
    inputs = Counter(node for _, node in _INTO.findall(dot))
    readers: dict[str, list[str]] = {}
    for array, node in _INTO.findall(dot):
        readers.setdefault(array, []).append(names.get(node, ""))
    made: dict[str, list[str]] = {}
    for node, array in _OUT.findall(dot):
        made.setdefault(node, []).append(array)
    fixed: set[str] = set()
    counted: Counter[str] = Counter()
    for node, name in names.items():
        if name in FIXED:
            fixed.add(name)
        elif name == "Broadcast" and inputs[node] == 1:
            read = [r for a in made.get(node, []) for r in readers.get(a, [])]
            if not read or not all(r in FUSABLE for r in read):  # an output, or not fused
                fixed.add(name)
                counted[name] += 1
        else:
            counted[name] += 1
    return Graph(tuple(sorted(fixed)), tuple(sorted(counted.items())))


def makers(fn: Callable[..., Any], args: list[Any]) -> list[str]:
    """The primitives of ``fn``'s graph at ``args``, each once, from its results back to its
    inputs (empty if the graph cannot be read): what a finding of the composition is about,
    whichever operation the case called (the floor of a derivative is a ``Full``)."""
    try:
        text = io.StringIO()
        mx.export_to_dot(text, *fn(*args))
    except Exception:  # noqa: BLE001 - the finding stands without it
        return []
    names = [label.split(" ")[0] for _, label in _NODE.findall(text.getvalue())]
    return list(dict.fromkeys(reversed(names)))
