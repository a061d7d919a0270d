"""Seeded calls of MLX's operations, drawn from their signatures and domains, as sweep cases.

Each call is a :class:`~mgradcheck.sweep.catalogue.Case` like the catalogue's
(a ``fn`` expression and its input specs), so batches, shards, grouping,
shrinking and emitting take it unchanged. A call is drawn at one dtype kind:

- floating, in one of the sweep's dtypes or float64;
- complex64, each complex argument made from two traced real ones (its real and
  imaginary parts) and each output returned as its real and imaginary parts, so
  that the derivatives checked are those of a real function and no conjugation
  convention is assumed;
- integer or bool, differentiated by those arguments (the ``integers`` check):
  a zero derivative or a refusal passes, anything else is a finding.

Where an operation has no :class:`~.domains.Domain`, its array parameters get
elementwise-compatible shapes (equal, broadcast, size-1, empty) and its other
parameters are drawn by name (axes, flags); an operation with a required
parameter neither says how to draw is skipped and counted, never an error.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.sweep.catalogue import Case
from mgradcheck.sweep.catalogue.excluded import EXCLUDED
from mgradcheck.sweep.explore.domains import (
    COMPLEX,
    DOMAINS,
    FLOAT,
    INTEGER,
    UNDRAWN,
    Domain,
    Drawn,
    Index,
)
from mgradcheck.sweep.explore.graph_operations import operations as graph_operations
from mgradcheck.sweep.explore.graph_operations import smaller_shape
from mgradcheck.sweep.explore.graphs import Apply, draw_graph
from mgradcheck.sweep.explore.signatures import (
    EITHER,
    POSITIONAL,
    VAR,
    VAR_KEYWORD,
    Operation,
    Param,
    describe,
)
from mgradcheck.wording import count

FAMILY = {FLOAT: "generated", COMPLEX: "generated-complex", INTEGER: "generated-integer"}
EXTRA_FLOATS = ("float64",)  # the CPU has it; the catalogue does not sweep it
INTEGER_DTYPES = ("int32", "int64", "uint8", "int8", "bool")
KIND_WEIGHTS = {FLOAT: 5, COMPLEX: 2, INTEGER: 3}
# Shapes of an operation's first array; the others are broadcast-compatible with it.
BASES: tuple[tuple[int, ...], ...] = (
    (2, 3),
    (3,),
    (2, 1, 3),
    (1, 3),
    (4,),
    (),
    (2, 3, 2),
    (1,),
    (0, 3),
)
IGNORED = ("stream", "dtype")  # never drawn: where it runs and what it returns are not the point
DEFAULT_RANGE = (-2.0, 2.0)
COMPLEX_PARTS = "(lambda r: tuple(p for o in (r if isinstance(r, (list, tuple)) else [r]) for p in (mx.real(o), mx.imag(o))))"  # fmt: skip


class Skip(Exception):
    """No call of this operation can be drawn: why."""


@dataclass
class Exploration:
    cases: list[Case]
    described: int  # operations whose signature parsed
    skipped: dict[str, str] = field(default_factory=dict)  # operation -> why none is drawn

    @property
    def graphs(self) -> list[Case]:
        """The graphs of several operations among the cases (the rest are single calls)."""
        return [c for c in self.cases if c.graph is not None]

    def to_json(self) -> dict[str, Any]:
        calls = len(self.cases) - len(self.graphs)
        return {"calls": calls, "graphs": len(self.graphs), "described": self.described,
                "skipped": self.skipped}  # fmt: skip

    def summary_line(self) -> str:
        calls = [c for c in self.cases if c.graph is None]
        ops = len({c.op for c in calls})
        graphs = f", and {count(len(self.graphs), 'graph')} of several" if self.graphs else ""
        return (
            f"drew {count(len(calls), 'call')} of {count(ops, 'operation')} from "
            f"{count(self.described, 'signature')} of the target MLX{graphs}; "
            f"{count(len(self.skipped), 'operation')} not drawn (their reasons: --json)"
        )


def explore(
    signatures: Mapping[str, Sequence[str]],
    count: int | None,
    seed: int = 0,
    dtypes: Sequence[str] = ("float32",),
    examples: Sequence[Case] = (),
    graphs: int = 0,
) -> Exploration:
    """``count`` calls drawn with ``seed`` (None: one of every operation in every dtype kind
    it takes), dealt round the operations in a seeded order and round their kinds, and
    ``graphs`` graphs of several operations (their own draw: the calls stay the same).

    ``dtypes``: the sweep's floating dtypes (float64 is added). ``examples``: the
    catalogue, whose one-call cases say where each operation's arguments are smooth.
    """
    operations, unparsed = describe(signatures)
    skipped = {name: "its signature does not parse" for name in unparsed}
    ranges = example_ranges(examples)
    usable = []
    for op in operations:
        try:
            _why_not(op)
            draw(op, random.Random(0), FLOAT, "float32", ranges)  # a trial: unknown parameters
        except Skip as exc:
            skipped[op.name] = str(exc)
        else:
            usable.append(op)
    rng = random.Random(seed)
    order = list(usable)
    rng.shuffle(order)
    floats = tuple(dict.fromkeys((*dtypes, *EXTRA_FLOATS)))
    cases = []
    kinds = {op.name: _kinds_in_turn(op, rng) for op in order}
    if count is None:  # every operation once in every dtype kind it takes
        count = sum(len(k) for k in kinds.values())
    dealt = _dealt(order, kinds)
    for i in range(count if order else 0):
        op, kind = next(dealt)
        dtype = rng.choice(
            floats if kind == FLOAT else INTEGER_DTYPES if kind == INTEGER else ("complex64",)
        )
        if kind == FLOAT and DOMAINS.get(op.name, Domain()).ties:
            dtype = "float32"  # drawn with ties, for the adjoint check, which float32 runs
        try:
            fn, inputs = draw(op, rng, kind, dtype, ranges)
        except Skip:
            continue  # this draw only (an axis for a scalar): the next of this operation may fit
        short = op.name.split(".", 1)[1]
        cases.append(
            Case(
                f"gen{seed}-{i:04d}-{short}-{dtype}",
                short,
                FAMILY[kind],
                fn,
                tuple(inputs),
                dtypes=(dtype if kind == FLOAT else "float32",),
                drawn=True,
            )
        )
    table = graph_operations(list(signatures), ranges)
    return Exploration([*cases, *drawn_graphs(table, graphs, seed)], len(operations), skipped)


def _dealt(
    order: Sequence[Operation], kinds: Mapping[str, list[str]]
) -> Iterator[tuple[Operation, str]]:
    """Operations and dtype kinds in rounds: every operation in its first kind, then those
    with a second in that, and so on; once every kind is dealt, every operation again."""
    most = max(len(k) for k in kinds.values())
    for turn in itertools.count():
        for op in order:
            mine = kinds[op.name]
            if turn < len(mine) or turn >= most:
                yield op, mine[turn % len(mine)]


def _kinds_in_turn(op: Operation, rng: random.Random) -> list[str]:
    """The dtype kinds ``op`` takes, in a seeded order weighted by :data:`KIND_WEIGHTS`: its
    first call draws one kind, its next calls the others, so that an operation drawn as
    often as it has kinds is swept in every one of them."""
    left = [k for k in KIND_WEIGHTS if k in DOMAINS.get(op.name, Domain()).kinds]
    order = []
    while left:
        kind = rng.choices(left, [KIND_WEIGHTS[k] for k in left])[0]
        order.append(kind)
        left.remove(kind)
    return order


def drawn_graphs(table: Sequence[tuple[str, int, Apply]], n: int, seed: int) -> list[Case]:
    """``n`` graphs drawn with ``seed``, in float32 mostly (where compile's fusion is
    checked), float64 now and then."""
    rng = random.Random(f"graphs {seed}")
    cases = []
    for i in range(n if table else 0):
        graph = draw_graph(rng, table)
        dtype = rng.choice(("float32", "float32", "float32", "float64"))
        fn, inputs = graph.render()
        name = f"graph{seed}-{i:04d}-{'-'.join(graph.ops).replace('.', '-')}"
        cases.append(Case(name, graph.title, "graph", fn, tuple(inputs), dtypes=(dtype,),
                          drawn=True, graph=graph))  # fmt: skip
    return cases


def example_ranges(examples: Sequence[Case]) -> dict[str, list[tuple[float, float]]]:
    """Per operation, the ranges of its arguments in the catalogue's plain call of it
    (``lambda a, b: mx.arctan2(a, b)``): where someone found it smooth."""
    found: dict[str, list[tuple[float, float]]] = {}
    for case in examples:
        node = ast.parse(case.fn, mode="eval").body
        if not (isinstance(node, ast.Lambda) and isinstance(node.body, ast.Call)):
            continue
        params = [a.arg for a in node.args.args]
        passed = [a.id if isinstance(a, ast.Name) else "" for a in node.body.args]
        plain = passed == params and not node.body.keywords and len(case.covers) == 1
        if plain and all("range" in i for i in case.inputs):
            found.setdefault(case.covers[0], [tuple(i["range"]) for i in case.inputs])
    return found


def _why_not(op: Operation) -> None:
    if op.name in EXCLUDED:
        raise Skip(f"excluded: {EXCLUDED[op.name].reason}")
    if op.name in UNDRAWN:
        raise Skip(f"no domain: {UNDRAWN[op.name]}")
    if op.name not in DOMAINS and any(p.kind == VAR and not p.is_array for p in op.params):
        raise Skip("it takes *args and has no domain")
    if op.name not in DOMAINS and not any(p.is_array or p.is_array_list for p in op.params):
        raise Skip("no array parameter")


def draw(
    op: Operation,
    rng: random.Random,
    kind: str,
    dtype: str,
    ranges: Mapping[str, Sequence[tuple[float, float]]],
) -> tuple[str, list[dict[str, object]]]:
    """One call of ``op``: its ``fn`` expression and the spec of each of its inputs."""
    domain = DOMAINS.get(op.name, Domain())
    drawn = domain.draw(rng) if domain.draw is not None else _arrays(op, rng)
    first = next((v for v in drawn.values() if isinstance(v, tuple)), ())
    for p in op.params:
        if p.name in drawn or p.name in IGNORED or p.kind in (VAR, VAR_KEYWORD):
            continue
        value = by_name(p, len(first), rng)
        if value is None and p.required:
            raise Skip(f"no domain for its parameter {p.name!r}")
        if value is not None and (p.required or rng.random() < 0.5):
            drawn[p.name] = value
    known = dict(
        zip([p.name for p in op.params if p.is_array], ranges.get(op.name, ()), strict=False)
    )
    inputs: list[dict[str, object]] = []
    args: list[str] = []
    keywords: list[str] = []
    positional = True  # until a parameter is left out, the next may still be passed by place
    for p in op.params:
        if p.name not in drawn:
            positional &= p.kind not in (POSITIONAL, EITHER)
            continue
        arg = drawn[p.name]
        rng_range = domain.ranges.get(p.name) or known.get(p.name, DEFAULT_RANGE)
        if isinstance(arg, list):
            items = [
                _operand(f"{p.name}{j}", s, kind, dtype, rng_range, inputs, domain)
                for j, s in enumerate(arg)
            ]
            source = ", ".join(items) if p.kind == VAR else f"[{', '.join(items)}]"
        elif isinstance(arg, (tuple, Index)):
            source = _operand(p.name, arg, kind, dtype, rng_range, inputs, domain)
            if kind == FLOAT and p.name in domain.ties:
                inputs[-1]["ties"] = True
        else:
            source = arg
        if p.kind == VAR or (positional and p.kind in (POSITIONAL, EITHER)):
            args.append(source)
        elif p.kind == POSITIONAL:
            continue  # positional only, after one left out: it keeps its default too
        else:
            keywords.append(f"{p.name}={source}")
    call = f"mx.{op.name.removeprefix('mx.')}({', '.join(args + keywords)})"
    if kind == COMPLEX:
        call = f"{COMPLEX_PARTS}({call})"
    return f"lambda {', '.join(str(i['name']) for i in inputs)}: {call}", [
        {k: v for k, v in i.items() if k != "name"} for i in inputs
    ]


def _operand(
    name: str,
    value: tuple[int, ...] | Index,
    kind: str,
    dtype: str,
    span: tuple[float, float],
    inputs: list[dict[str, object]],
    domain: Domain,
) -> str:
    """Add the inputs of one array argument; its source in the call."""
    if isinstance(value, Index):
        spec: dict[str, object] = {"name": name, "shape": list(value.shape), "dtype": value.dtype}
        if value.dtype != "bool":
            spec["range"] = [0, max(0, value.high)]
        inputs.append(spec)
        return name
    shape = list(value)
    if kind == COMPLEX:
        inputs += [{"name": f"{name}_re", "shape": shape, "range": list(span)},
                   {"name": f"{name}_im", "shape": shape, "range": list(span)}]  # fmt: skip
        return f"({name}_re + 1j * {name}_im)"
    if kind == INTEGER:
        spec = {"name": name, "shape": shape, "dtype": dtype}
        if dtype != "bool":
            spec["range"] = [0, 4] if dtype.startswith("u") else [-3, 3]
        inputs.append(spec)
        return name
    inputs.append({"name": name, "shape": shape, "range": list(span)})
    return domain.wrap[name].format(x=name) if name in domain.wrap else name


def _arrays(op: Operation, rng: random.Random) -> Drawn:
    """Elementwise-compatible shapes for ``op``'s array parameters (optional ones: sometimes)."""
    axis = any(p.name in ("axis", "axes") for p in op.params)
    base = rng.choice([b for b in BASES if b] if axis else BASES)
    drawn: Drawn = {}
    for p in op.params:
        if p.name in IGNORED or not (p.is_array or p.is_array_list):
            continue
        if not p.required and p.kind != VAR and rng.random() < 0.5:
            continue
        if p.is_array_list or p.kind == VAR:
            drawn[p.name] = [base] * rng.choice((1, 2, 3))
        else:
            drawn[p.name] = base if not drawn else smaller_shape(base, rng)
    return drawn


FLAGS = ("keepdims", "reverse", "inclusive", "precise", "upper", "transpose", "traditional")
NUMBERS = {"ddof": ("0", "1"), "decimals": ("0", "1", "-1"), "eps": ("1e-5", "1e-2"),
           "alpha": ("0.5", "2.0", "0.0"), "beta": ("0.5", "0.0"), "k": ("0", "1", "-1"),
           "offset": ("0", "1", "-1"), "scale": ("0.5", "1.0"), "nan": ("0.0", "1.5"),
           "posinf": ("None", "3.0"), "neginf": ("None", "-3.0")}  # fmt: skip


def by_name(p: Param, ndim: int, rng: random.Random) -> str | None:
    """A value for ``p`` from its name and type alone (source text), or None: no idea."""
    kinds = [k.rsplit(".", 1)[-1] for k in p.annotation.replace(" ", "").split("|")]
    if p.name in ("axis", "axes") and ndim:
        choices = [str(a) for a in range(-ndim, ndim)] if p.name == "axis" else []
        if any(k.startswith(("Sequence", "list", "tuple")) for k in kinds) and ndim > 1:
            pair = rng.sample(range(-ndim, ndim), 2)
            if pair[0] % ndim != pair[1] % ndim:
                choices.append(str(tuple(pair)))
        if "None" in kinds:
            choices.append("None")
        return rng.choice(choices) if choices else None
    if p.name in FLAGS or "bool" in kinds:
        return rng.choice(("False", "True"))
    if p.name in NUMBERS:
        return rng.choice(NUMBERS[p.name])
    return None
