"""Drawn graphs of several operations, valid by construction, as NNSmith builds them.

``mx.compile`` fuses across operations, and most of its bugs live between them,
where no single call reaches. A graph is drawn node by node: each operation
reads the latest node, and a second operand, if it has one, is an earlier node
or a fresh input (so the graph is a chain with branches), of shapes that fit it, so every graph runs.
Each node carries its shape and an interval that holds its values, so that an
operation is applied only where it is smooth and finite: ``log`` of a node
that may reach zero, or ``exp`` of one that may reach 80, is not drawn. An
operation's own domain comes from the catalogue's plain call of it (``sqrt``
on ``[0.3, 2.0]`` has a lower bound, no upper one), its value interval from
sampling the function in Python.

Nodes include views (reversed, stepped, sliced and broadcast), multi-output
operations (``split``, ``divmod``, ``linalg.qr``/``eigh``/``svd``) whose parts
feed later nodes, and a graph may return several outputs: two nodes, one
node twice, or a node and an input itself, so that outputs alias each other
or an input under every transform.

A graph becomes one sweep case whose ``fn`` is a lambda; a node read twice is
bound once with ``:=``. Shrinking drops outputs and operations
(:meth:`Graph.smaller`): a node becomes a fresh input of its shape and
interval, or an output becomes its operand, and what no output reads is
removed. The operations themselves
are in :mod:`.graph_operations`.
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mgradcheck.sweep.explore.domains import Shape

Span = tuple[float, float]  # an interval holding every value of a node
LIMIT = 60.0  # larger values lose float32's finite differences in rounding
DEFAULT: Span = (-2.0, 2.0)
NAMES = "abcdefghijklmnopqrsuvwxyz"  # the inputs' (t is the bound nodes')


@dataclass(frozen=True)
class Node:
    op: str  # the operation shown in the graph's title; "" for an input or a part
    source: str  # {0}, {1}...: its operands; an input's is unused
    operands: tuple[int, ...] = ()
    shape: Shape | None = ()  # None: a multi-output node, read only through its parts
    span: Span = DEFAULT
    mask: bool = False  # a boolean input

    @property
    def is_input(self) -> bool:
        return not self.source


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    outputs: tuple[int, ...]

    @property
    def ops(self) -> list[str]:
        """Its operations in the order data flows through them."""
        return [n.op for n in self.nodes if n.op]

    @property
    def title(self) -> str:
        return "∘".join(reversed(self.ops))  # exp∘sum∘matmul: matmul first

    def render(self) -> tuple[str, list[dict[str, object]]]:
        """Its ``fn`` (a lambda) and the spec of each input, in order."""
        uses: Counter[int] = Counter(self.outputs)
        for n in self.nodes:
            for k, j in enumerate(n.operands):
                uses[j] += n.source.count(f"{{{k}}}")
        inputs = [i for i, n in enumerate(self.nodes) if n.is_input]
        names = {i: NAMES[k] for k, i in enumerate(inputs)}
        bound = [i for i, n in enumerate(self.nodes) if not n.is_input and uses[i] > 1]

        def body(i: int) -> str:
            return self.nodes[i].source.format(*(expr(j) for j in self.nodes[i].operands))

        def expr(i: int) -> str:
            return names[i] if i in names else f"t{i}" if i in bound else body(i)

        outs = [expr(o) for o in self.outputs]
        text = outs[0] if len(outs) == 1 else f"({', '.join(outs)})"
        if bound:
            text = f"({', '.join([*(f't{i} := {body(i)}' for i in bound), text])})[-1]"
        specs: list[dict[str, object]] = []
        for i in inputs:
            n = self.nodes[i]
            spec: dict[str, object] = {"shape": list(n.shape or ())}
            if n.mask:
                spec["dtype"] = "bool"
            else:
                spec["range"] = [round(n.span[0], 3), round(n.span[1], 3)]
            specs.append(spec)
        return f"lambda {', '.join(names.values())}: {text}", specs

    def smaller(self) -> list[tuple[str, Graph]]:
        """Each graph with one output or one operation fewer that is still valid, and what
        was dropped."""
        found = []
        for k in range(len(self.outputs) if len(self.outputs) > 1 else 0):
            outputs = self.outputs[:k] + self.outputs[k + 1 :]
            found.append((f"dropped output {k + 1}", Graph(self.nodes, outputs).pruned()))
        for i, n in enumerate(self.nodes):
            if n.is_input:
                continue
            read = [
                j for j in n.operands if self.nodes[j].shape is not None and not self.nodes[j].mask
            ]
            if i in self.outputs and n.op and read:  # the output becomes what the operation read
                smaller = Graph(self.nodes, tuple(read[0] if o == i else o for o in self.outputs))
            elif i not in self.outputs and n.shape is not None:  # an input holding what it held
                nodes = list(self.nodes)
                nodes[i] = Node("", "", (), n.shape, _finite(n.span))
                smaller = Graph(tuple(nodes), self.outputs)
            else:
                continue
            smaller = smaller.pruned()
            if smaller.ops:
                found.append((f"dropped {n.op or self.nodes[n.operands[0]].op}", smaller))
        return found

    def pruned(self) -> Graph:
        """Without the nodes no output reads."""
        keep: set[int] = set()
        todo = list(self.outputs)
        while todo:
            i = todo.pop()
            if i not in keep:
                keep.add(i)
                todo.extend(self.nodes[i].operands)
        order = sorted(keep)
        at = {old: new for new, old in enumerate(order)}
        nodes = [self.nodes[i] for i in order]
        nodes = [replace(n, operands=tuple(at[j] for j in n.operands)) for n in nodes]
        return Graph(tuple(nodes), tuple(at[o] for o in self.outputs))


def _finite(span: Span) -> Span:
    lo, hi = span
    return (lo, hi) if hi - lo > 0.1 else (lo - 0.05, hi + 0.05)


class Builder:
    """A graph being drawn: its nodes so far, and the random stream that draws it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[Node] = []

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def fresh(self, shape: Shape, span: Span = DEFAULT) -> int:
        return self.add(Node("", "", (), shape, span))

    def arrays(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.shape is not None]

    def shape(self, i: int) -> Shape:
        shape = self.nodes[i].shape
        assert shape is not None  # operands are arrays, never a multi-output node itself
        return shape

    def other(self, x: int, fits: Callable[[Node], bool], shape: Shape, span: Span) -> int:
        """An earlier node (not ``x``) that ``fits``, or a fresh input of ``shape``."""
        found = [
            i for i in self.arrays() if i != x and not self.nodes[i].mask and fits(self.nodes[i])
        ]
        if found and self.rng.random() < 0.5:
            return self.rng.choice(found)
        return self.fresh(shape, span)

    def parts(
        self, op: str, source: str, operands: tuple[int, ...], parts: Sequence[tuple[Shape, Span]]
    ) -> None:
        """A multi-output node, and one node per output (``{0}[k]``) that later nodes read."""
        whole = self.add(Node(op, source, operands, None))
        for k, (shape, span) in enumerate(parts):
            self.add(Node("", f"{{0}}[{k}]", (whole,), shape, span))


# Adds an operation reading node x to the graph being built; False: it does not fit there.
Apply = Callable[[Builder, int], bool]


STARTS: tuple[Shape, ...] = ((2, 3), (3,), (2, 1, 3), (3, 3), (4,), (2, 2, 3), (1, 3), (4, 2))


def draw_graph(rng: random.Random, table: Sequence[tuple[str, int, Apply]]) -> Graph:
    """One graph of 2 to 4 operations of ``table``, and its outputs."""
    b = Builder(rng)
    latest = b.fresh(rng.choice(STARTS))
    size, tries = rng.choice((2, 3, 3, 4)), 0
    weights = [w for _, w, _ in table]
    while sum(1 for n in b.nodes if n.op) < size and tries < 60:
        tries += 1
        before = len(b.nodes)
        if rng.choices(table, weights)[0][2](b, latest):
            latest = len(b.nodes) - 1
        else:
            del b.nodes[before:]  # a fresh input drawn for an operation that did not fit
    outputs = [latest]
    extra = rng.random()
    if extra < 0.1:  # the same node twice: outputs that alias each other
        outputs.append(latest)
    elif extra < 0.2:  # an input returned as it is: an output that aliases an input
        outputs.append(next(i for i, n in enumerate(b.nodes) if n.is_input and not n.mask))
    elif extra < 0.35:  # an earlier node too
        earlier = [i for i in b.arrays() if b.nodes[i].op and i != latest]
        outputs += [rng.choice(earlier)] if earlier else []
    return Graph(tuple(b.nodes), tuple(outputs)).pruned()


def returns_twice(fn: str) -> bool:
    """Whether the lambda ``fn`` (a rendered graph) returns one node as two of its outputs."""
    body = ast.parse(fn, mode="eval").body
    out = body.body if isinstance(body, ast.Lambda) else body
    if isinstance(out, ast.Subscript) and isinstance(out.value, ast.Tuple):  # (t := ..., OUT)[-1]
        out = out.value.elts[-1]
    seen = [ast.dump(e) for e in out.elts] if isinstance(out, ast.Tuple) else []
    return len(set(seen)) < len(seen)
