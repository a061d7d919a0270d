"""Drawn graphs of several operations: their draw, their validity on real MLX, their ids,
their selection, their shrinking and their triage."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from mgradcheck.cli.sweep import DEFAULT_EXPLORE, drawn_count
from mgradcheck.corpus import files, loader
from mgradcheck.sweep.case_runs import CaseResult, Status, Task
from mgradcheck.sweep.catalogue import Case, calls, catalogue, select
from mgradcheck.sweep.explore.generate import drawn_graphs, example_ranges
from mgradcheck.sweep.explore.graph_operations import operations
from mgradcheck.sweep.explore.graphs import DEFAULT, Apply, Graph, Node, returns_twice
from mgradcheck.sweep.findings import group
from mgradcheck.sweep.known import causes
from mgradcheck.sweep.pipeline import _progress_line, spread
from mgradcheck.sweep.shrink import shrink_all
from tests.builders import RecordingProgress
from tests.sweep.test_explore import signatures
from tests.sweep.test_shrink import Fake

# What every MLX release since 0.26 describes: a table needs no child to be drawn from.
DESCRIBED = [f"mx.{n}" for n in ("exp", "sin", "log", "sqrt", "tanh", "add", "multiply", "divide",
             "maximum", "sum", "mean", "max", "logsumexp", "softmax", "cumsum", "reshape",
             "transpose", "broadcast_to", "matmul", "where", "split", "divmod")]  # fmt: skip


@cache
def table() -> list[tuple[str, int, Apply]]:
    return operations(DESCRIBED, example_ranges(catalogue()))


def test_the_draw_is_seeded_and_its_ids_say_what_each_graph_holds() -> None:
    first, again = (drawn_graphs(table(), 30, seed=5) for _ in range(2))
    assert [(c.id, c.fn, c.inputs, c.dtypes) for c in first] == [
        (c.id, c.fn, c.inputs, c.dtypes) for c in again
    ]
    assert [c.fn for c in drawn_graphs(table(), 30, seed=6)] != [c.fn for c in first]
    for i, case in enumerate(first):
        graph = case.graph
        assert isinstance(graph, Graph)
        assert case.id == f"graph5-{i:04d}-{'-'.join(graph.ops)}"
        assert case.op == "∘".join(reversed(graph.ops)) and case.family == "graph"
        assert 2 <= len(graph.ops) <= 4, case.fn
        # Each operation named is one the graph calls (views are indexing, not calls).
        assert {f"mx.{op}" for op in graph.ops if "." not in op} - set(calls(case.fn)) <= {
            "mx.reversed", "mx.stepped", "mx.sliced",
        }  # fmt: skip
        assert case.dtypes in (("float32",), ("float64",)) and case.drawn


def _arguments(inputs: Sequence[dict[str, Any]], dtype: str, seed: int) -> list[Any]:
    import mlx.core as mx

    rng = np.random.default_rng(seed)
    made = []
    for spec in inputs:
        if spec.get("dtype") == "bool":
            made.append(mx.array(rng.random(spec["shape"]) < 0.5))
        else:
            low, high = spec["range"]
            values = rng.uniform(float(low), float(high), size=spec["shape"])
            made.append(mx.array(values.astype(np.float32)).astype(getattr(mx, dtype)))
    return made


def _run(case: Case, seed: int) -> list[Any]:
    import mlx.core as mx

    f = eval(case.fn, {"mx": mx})
    out = f(*_arguments(case.inputs, case.dtypes[0] if case.dtypes else "float32", seed))
    outs = list(out) if isinstance(out, tuple) else [out]
    mx.eval(outs)
    return [np.array(o.astype(mx.float32)) for o in outs]


def test_every_graph_of_50_seeds_runs_eagerly_on_real_mlx_with_finite_values() -> None:
    """Valid by construction: every shape fits, and no value leaves its operations' domains."""
    pytest.importorskip("mlx.core")
    drawn = operations(list(signatures()), example_ranges(catalogue()))
    assert {name for name, _, _ in drawn} >= {"mx.matmul", "mx.split", "linalg.qr", "stepped"}
    seen: set[str] = set()
    for seed in range(50):
        for case in drawn_graphs(drawn, 6, seed):
            seen.update(case.graph.ops)  # type: ignore[attr-defined]
            values = _run(case, seed)
            assert all(np.isfinite(v).all() for v in values), case.fn
    # Views, multi-output operations, and outputs that alias each other or an input are drawn.
    assert seen >= {"reversed", "stepped", "broadcast_to", "split", "divmod", "linalg.qr", "matmul"}


def test_outputs_alias_each_other_or_an_input_now_and_then() -> None:
    graphs = [c.graph for c in drawn_graphs(table(), 200, seed=1) if isinstance(c.graph, Graph)]
    assert any(len(g.outputs) == 2 and g.outputs[0] == g.outputs[1] for g in graphs)
    assert any(len(g.outputs) == 2 and g.nodes[g.outputs[1]].is_input for g in graphs)
    assert any("t" in c.fn and ":=" in c.fn for c in drawn_graphs(table(), 50, seed=1))


def test_ops_selects_the_graphs_apart_from_the_calls() -> None:
    """(The CLI's listing of them: test_explore.py's test_sweep_lists_the_calls_and_graphs_...)"""
    graphs = drawn_graphs(table(), 4, seed=2)
    assert select(graphs, ["graph*"]) == graphs and not select(graphs, ["generated*"])


# sin -> sum -> exp, with an output of sum too: dropping each operation in turn.
CHAIN = Graph(
    (
        Node("", "", (), (2, 3)),
        Node("sin", "mx.sin({0})", (0,), (2, 3), (-1.0, 1.0)),
        Node("sum", "mx.sum({0}, axis=-1)", (1,), (2,), (-3.0, 3.0)),
        Node("exp", "mx.exp({0})", (2,), (2,), (0.05, 20.1)),
    ),
    (3, 2),
)


def test_a_graph_renders_as_one_lambda_binding_what_it_reads_twice() -> None:
    fn, inputs = CHAIN.render()
    assert fn == "lambda a: (t2 := mx.sum(mx.sin(a), axis=-1), (mx.exp(t2), t2))[-1]"
    assert inputs == [{"shape": [2, 3], "range": list(DEFAULT)}]
    assert CHAIN.title == "exp∘sum∘sin"


def test_each_smaller_graph_drops_one_output_or_operation_and_stays_valid() -> None:
    smaller = {what: g.render() for what, g in CHAIN.smaller()}
    assert smaller == {
        "dropped output 1": ("lambda a: mx.sum(mx.sin(a), axis=-1)",
                             [{"shape": [2, 3], "range": [-2.0, 2.0]}]),
        "dropped output 2": ("lambda a: mx.exp(mx.sum(mx.sin(a), axis=-1))",
                             [{"shape": [2, 3], "range": [-2.0, 2.0]}]),
        # sin's output becomes an input holding what it held
        "dropped sin": ("lambda a: (t1 := mx.sum(a, axis=-1), (mx.exp(t1), t1))[-1]",
                        [{"shape": [2, 3], "range": [-1.0, 1.0]}]),
        # sum is an output: that output becomes what sum read
        "dropped sum": ("lambda a: (t1 := mx.sin(a), (mx.exp(mx.sum(t1, axis=-1)), t1))[-1]",
                        [{"shape": [2, 3], "range": [-2.0, 2.0]}]),
        "dropped exp": ("lambda a: (t2 := mx.sum(mx.sin(a), axis=-1), (t2, t2))[-1]",
                        [{"shape": [2, 3], "range": [-2.0, 2.0]}]),
    }  # fmt: skip


def _graph_case(graph: Graph) -> Case:
    fn, inputs = graph.render()
    return Case("graph0-0000-sin-sum-exp", graph.title, "graph", fn, tuple(inputs),
                dtypes=("float32",), drawn=True, graph=graph)  # fmt: skip


def _wrong_while_exp(task: Task) -> CaseResult:
    """exp's vjp is wrong, wherever it is in the graph."""
    found = [{"kind": "wrong-value", "check": "vjp", "traced": ["a"], "paths": "vjp vs fd",
              "detail": "observed 1, expected 2"}]  # fmt: skip
    shows = "mx.exp" in task.spec["fn"] and "vjp" in task.spec["checks"]
    return CaseResult(task, Status.WRONG if shows else Status.PASS, findings=found if shows else [])


def test_shrinking_drops_operations_while_the_graph_still_fails_and_names_its_cause() -> None:
    case = _graph_case(CHAIN)
    result = _wrong_while_exp(Task.of(case, "float32"))
    (found,) = group([result])
    (shrunk,) = shrink_all([found], Fake(_wrong_while_exp))
    assert shrunk.steps[:3] == ["dropped output 2", "dropped sin", "dropped sum"]
    assert shrunk.spec["fn"] == "lambda a: mx.exp(a)"
    # Shrunk to one operation, the finding is that operation's, as a single call's would be.
    (cause,) = causes([found], [shrunk.result], [], "0.32.4", "cpu")
    assert cause.key == "exp: wrong-value (vjp)"
    unshrunk = causes([found], [result], [], "0.32.4", "cpu")[0]
    assert unshrunk.key == "exp∘sum∘sin: wrong-value (vjp)"


def test_the_progress_says_how_many_calls_graphs_and_findings_so_far() -> None:
    progress = RecordingProgress()
    shown = _progress_line(progress, 3)
    single = Case("gen0-0000-sin-float32", "sin", "generated", "lambda a: mx.sin(a)",
                  ({"shape": [2]},), dtypes=("float32",), drawn=True)  # fmt: skip
    for case, status in ((single, Status.PASS), (_graph_case(CHAIN), Status.WRONG),
                         (catalogue()[0], Status.PASS)):  # fmt: skip
        shown(CaseResult(Task.of(case, "float32"), status))
    assert progress.calls[-1] == "status 3/3 cases run (1 drawn call, 1 graph); 1 finding so far"


def test_the_report_keeps_how_many_graphs_were_drawn() -> None:
    from mgradcheck.sweep.explore.generate import Exploration

    explored = Exploration([*drawn_graphs(table(), 2, seed=0)], 300)
    assert json.loads(json.dumps(explored.to_json()))["graphs"] == 2


def test_an_operation_applies_only_where_the_catalogue_finds_it_smooth() -> None:
    """sqrt is finite at 0.1, but the catalogue's plain call of it starts at 0.3: a node
    that may reach below that is not its operand; one that may reach 80 is not exp's."""
    import random

    from mgradcheck.sweep.explore.graphs import Builder

    apply = {name: f for name, _, f in table()}
    for op, span, fits in (("mx.sqrt", (0.1, 2.0), False), ("mx.sqrt", (0.5, 2.0), True),
                           ("mx.exp", (-2.0, 80.0), False), ("mx.exp", (-2.0, 2.0), True)):  # fmt: skip
        built = Builder(random.Random(0))
        assert apply[op](built, built.fresh((3,), span)) is fits, (op, span)


def test_a_graph_that_still_fails_only_with_one_node_returned_twice_is_that_cause() -> None:
    """MLX's vjp of a function returning one array twice weighs one of its cotangents only:
    shrinking keeps the second output, and every such graph is that one cause."""
    twice = Graph(CHAIN.nodes, (3, 3))
    fn = twice.render()[0]
    assert returns_twice(fn) and not returns_twice(CHAIN.render()[0])
    assert not returns_twice("lambda a: (mx.sin(a), a)")

    def wrong_while_twice(task: Task) -> CaseResult:
        shows = returns_twice(task.spec["fn"])
        found = [{"kind": "wrong-value", "check": "vjp", "traced": ["a"], "paths": "vjp vs fd",
                  "detail": "observed 1, expected 2"}] if shows else []  # fmt: skip
        return CaseResult(task, Status.WRONG if shows else Status.PASS, findings=found)

    result = wrong_while_twice(Task.of(_graph_case(twice), "float32"))
    (found,) = group([result])
    (shrunk,) = shrink_all([found], Fake(wrong_while_twice))
    assert returns_twice(shrunk.spec["fn"]) and len(shrunk.steps) >= 2
    (cause,) = causes([found], [shrunk.result], [], "0.32.4", "cpu")
    assert cause.key == "an output returned twice: wrong-value (vjp)"
    # The corpus holds that bug: such a finding is its entry, never new.
    (known,) = causes(
        [found], [shrunk.result], loader.load([files.bundled_corpus()]), "0.32.4", "cpu"
    )
    assert known.entry == "vjp-repeated-output-cotangent-dropped"


def test_the_summary_counts_graphs_apart_from_drawn_calls() -> None:
    from mgradcheck.sweep.pipeline import SweepReport
    from tests.conftest import environment

    report = SweepReport(environment(), 61, [], drawn=60, graphs=60)
    assert report.summary_line().startswith("1 catalogue case and 60 graphs, 0 runs")
    report.graphs = 20
    assert report.summary_line().startswith("1 catalogue case and 40 drawn calls and 20 graphs,")


def test_the_three_kinds_of_case_take_turns_and_each_operation_s_first_comes_first() -> None:
    """A sweep's budget is spread: the catalogue cannot hold back the drawn calls and graphs,
    and within each kind an operation with many cases cannot hold back the others."""

    def case(op: str, n: int, drawn: bool = True, graph: Graph | None = None) -> Task:
        name = f"generated0-{op}-{n}" if drawn else f"{op}-{n}"
        return Task.of(Case(name, op, "t", "lambda a: a", (), drawn=drawn, graph=graph), "float32")

    listed = [case("cumsum", n, drawn=False) for n in range(3)] + [case("sin", 0, drawn=False)]
    calls = [case("cumsum", 0), case("cumsum", 1), case("exp", 0)]
    graphs = [case("sin∘exp", 0, graph=CHAIN), case("sum∘sin", 0, graph=CHAIN)]
    order = [t.case.id for t in spread([*calls, *listed, *graphs])]
    assert order == [
        "cumsum-0", "generated0-cumsum-0", "generated0-sin∘exp-0",  # one of each kind
        "sin-0", "generated0-exp-0", "generated0-sum∘sin-0",  # every operation's first...
        "cumsum-1", "generated0-cumsum-1",  # ...before any operation's second
        "cumsum-2",
    ]  # fmt: skip


def test_a_sweep_told_nothing_explores_and_a_chosen_slice_does_not() -> None:
    assert drawn_count(None, (), False, False) == DEFAULT_EXPLORE > 0
    assert drawn_count(None, ("sin",), False, False) == 0
    assert drawn_count(None, (), True, False) == drawn_count(None, (), False, True) == 0
    assert drawn_count(7, ("sin",), True, False) == 7
    shown = " ".join(CliRunner().invoke(cli, ["sweep", "--help"]).output.split())
    assert (
        f"Default: a call of every operation in every dtype kind it takes and {DEFAULT_EXPLORE} "
        "graphs when no --ops, --list or --coverage narrows the sweep" in shown
    )
    assert "[default: 600; x>=1]" in shown
