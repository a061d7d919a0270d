"""Sweep findings grouped by cause and matched to the bundled corpus (no MLX needed)."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from mgradcheck.corpus import files, loader
from mgradcheck.sweep.case_runs import CaseResult, Status, Task
from mgradcheck.sweep.catalogue import Case, arr, catalogue
from mgradcheck.sweep.findings import group
from mgradcheck.sweep.known import causes
from mgradcheck.sweep.pipeline import FindingReport, SweepReport, name_causes
from mgradcheck.sweep.render import render
from mgradcheck.sweep.shrink import Shrunk
from tests.conftest import environment
from tests.sweep.test_graphs import CHAIN

CASES = {c.id: c for c in catalogue()}
ENTRIES = loader.load([files.bundled_corpus()])


def crash(case: str, check: str = "shapeless") -> CaseResult:
    crumb = f'gradcheck: running {check} compile with (x) traced | {{"check": "{check}"}}'
    message = f"SIGSEGV while running {check} compile with (x) traced, float32\n{crumb}"
    return CaseResult(Task.of(CASES[case], "float32"), Status.CRASH, message=message)


def wrong(case: str, check: str, kind: str = "wrong-value", **repro: Any) -> CaseResult:
    finding = {"kind": kind, "check": check, "detail": "observed 1, expected 2", "repro": repro}
    return CaseResult(Task.of(CASES[case], "float32"), Status.WRONG, findings=[finding])


def named(results: list[CaseResult], mlx: str = "0.32.4") -> list[tuple[str, list[str], Any]]:
    groups = group(results)
    found = causes(groups, [g.representative() for g in groups], ENTRIES, mlx, "cpu")
    return [(c.key, c.ops, (c.entry, c.by_design)) for c in found]


def test_one_crash_through_many_operations_is_one_cause_and_the_known_entry() -> None:
    # sum is named by the entry; mean and softmax are not, but die the same way.
    found = named([crash("mean-axis"), crash("sum-axis"), crash("softmax")])
    assert found == [
        (
            "a crash in the shapeless check",
            ["mean", "sum", "softmax"],
            ("shapeless-reduction-to-size1-crash", False),
        )
    ]


def test_a_compiled_crash_alone_is_the_known_entry_of_that_check_whatever_the_operation() -> None:
    # The corpus's shapeless crash is a sum; where dies the same way, and a crash in a compiled
    # check is grouped by the check alone, so it is that entry even when no sum crashed with it.
    assert named([crash("where")]) == [
        ("a crash in the shapeless check", ["where"], ("shapeless-reduction-to-size1-crash", False))
    ]
    # Not a plain compile crash (the entry is about shapeless compilation), nor a vmap crash.
    assert named([crash("where", check="compile")])[0][2] == (None, False)
    assert named([crash("where", check="vmap")])[0][2] == (None, False)


def test_a_crash_in_a_composition_that_compiles_is_the_crash_of_that_way_of_compiling() -> None:
    """The default sweep of 0.32.4 died in compile(shapeless)(vmap(grad)) of expm1(min(a,
    axis=0)) at (1,): by hand, vmap(min(a, axis=0)) compiled shapeless alone segfaults, the
    size-1 reduction of ``shapeless-reduction-to-size1-crash``."""

    def composed(path: str) -> CaseResult:
        crumb = (f'gradcheck: running {path} with (a) traced, float32 | {{"check": "compose", '
                 f'"traced": ["a"], "repro": {{"path": "{path}"}}}}')  # fmt: skip
        message = f"SIGSEGV while running {path} with (a) traced, float32\n{crumb}"
        return CaseResult(Task.of(CASES["min"], "float32"), Status.CRASH, message=message)

    assert named([composed("compile(shapeless)(vmap(grad))")]) == [
        ("a crash in the shapeless check", ["min"], ("shapeless-reduction-to-size1-crash", False))
    ]
    assert named([composed("compile(vmap(grad))")])[0][:2] == (
        "a crash in the compile check",
        ["min"],
    )
    # a composition that compiles nothing stays the compose check's
    assert named([composed("vmap(grad)")])[0][:2] == ("a crash in the compose check", ["min"])


def test_the_exploring_sweep_s_integer_findings_are_one_cause_and_its_entry() -> None:
    def drawn(case: str, op: str, check: str) -> CaseResult:
        fn = (
            f"lambda a_re, a_im: mx.{op}(a_re + 1j * a_im)"
            if "complex" in case
            else f"lambda a: mx.{op}(a)"
        )
        called = Case(case, op, "generated-integer", fn, (arr(1),))
        finding = {"kind": "wrong-value", "check": check, "detail": "observed [7.]", "repro": {}}
        return CaseResult(Task.of(called, "float32"), Status.WRONG, findings=[finding])

    found = named(
        [
            drawn("gen0-0007-arcsin-int32", "arcsin", "integers"),
            drawn("gen0-0010-max-bool", "max", "integers"),
            drawn("gen0-0329-cumprod-complex64", "cumprod", "vjp"),
        ]
    )
    assert [(ops, entry) for _, ops, (entry, _) in found] == [
        (["arcsin", "max"], "integer-argument-vjp-truncated"),
        (["cumprod"], "cumprod-complex-vjp-conjugate"),
    ]


def test_a_known_cause_is_shrunk_once_and_its_other_findings_are_spared() -> None:
    """The default sweep of 0.32.4 shrank 57 findings of the shapeless crash one by one and
    left 155 findings unshrunk for want of time: a known cause needs one shrunk finding."""
    from mgradcheck.sweep.known import settled

    groups = group([crash("mean-axis"), crash("sum-axis"), crash("softmax"),
                    wrong("floor", "jvp"), wrong("ceil", "jvp")])  # fmt: skip
    spared, _ = settled(groups, ENTRIES, "0.32.4", "cpu")
    ops = {groups[i].op: why for i, why in spared.items()}
    assert set(ops) == {"sum", "softmax"}  # mean's is shrunk; floor and ceil are new
    assert "shapeless-reduction-to-size1-crash" in ops["sum"]
    # without the corpus nothing is known, and everything is shrunk
    assert settled(groups, [], "0.32.4", "cpu")[0] == {}


def test_what_no_entry_holds_is_set_apart_to_be_shrunk_first() -> None:
    """The default sweep of 0.32.4 shrank 80 findings of known causes with its 3 new ones,
    and ran out of time with those 3 unshrunk: what may be new is shrunk first now."""
    from mgradcheck.sweep.known import settled

    groups = group([crash("mean-axis"), wrong("cosh", "jvp"), crash("sum-axis")])
    assert {groups[i].op for i in settled(groups, ENTRIES, "0.32.4", "cpu")[1]} == {"cosh"}
    assert settled(groups, [], "0.32.4", "cpu")[1] == {0, 1, 2}


def test_a_hang_in_a_compiled_check_is_that_check_s_like_a_crash() -> None:
    found = {"kind": "timeout", "check": "shapeless", "repro": {"check": "shapeless"}}
    hang = CaseResult(Task.of(CASES["sum-axis"], "float32"), Status.TIMEOUT, [found],
                      message="no result after 120s while running shapeless compile")  # fmt: skip
    assert named([hang]) == [
        ("a hang in the shapeless check", ["sum"], ("shapeless-reduction-to-size1-crash", False))
    ]


def test_a_crash_in_another_check_is_another_cause() -> None:
    found = named([crash("sum-axis"), crash("mean-axis", check="vmap")])
    assert [(key, entry) for key, _, entry in found] == [
        ("a crash in the shapeless check", ("shapeless-reduction-to-size1-crash", False)),
        ("mean: a crash in the vmap check", (None, False)),
    ]


def test_dying_on_the_eager_side_is_another_cause() -> None:
    eager = crash("sum-axis")
    eager.message = eager.message.replace(
        "while running shapeless compile", "while running eager vjp"
    )
    assert named([crash("mean-axis"), eager]) == [
        ("a crash in the shapeless check", ["mean"], ("shapeless-reduction-to-size1-crash", False)),
        # nor is it the compiler's crash that the shapeless entry holds (put_along_axis with
        # indices out of range at size-1 axes died eager in the default sweep of 0.32.4)
        ("a crash in the shapeless check (eager)", ["sum"], (None, False)),
    ]


def test_a_bug_fixed_before_the_release_is_not_matched() -> None:
    # fft-jvp-axes-subset is fixed in 0.32.2: on 0.32.0 it is that bug, on 0.32.4 a new one.
    assert named([wrong("fftn", "jvp")], "0.32.0")[0][2] == ("fft-jvp-axes-subset", False)
    assert named([wrong("fftn", "jvp")], "0.32.4")[0][2] == (None, False)


def test_a_guard_of_documented_behaviour_says_by_design() -> None:
    assert named([wrong("divmod", "jvp")])[0][2] == ("divmod-remainder-zero-derivative", True)


def test_of_two_entries_as_sure_the_guard_of_documented_behaviour_explains_the_finding() -> None:
    """An unshrunk graph of the default sweep of 0.32.4, matmul(divmod(a, b)[1], c), had a
    wrong jvp: the remainder's zero derivative by design, not addmm's jvp bug, although
    addmm's entry calls matmul as surely as the guard calls divmod."""
    case = Case("graph0-0007-matmul-divmod", "matmul∘divmod", "graph",
                "lambda a, b, c: mx.matmul(mx.divmod(a, b)[1], c)", (arr(3), arr(), arr(3, 2)),
                drawn=True, graph=CHAIN)  # fmt: skip
    finding = {"kind": "wrong-value", "check": "jvp", "detail": "observed 1, expected 2"}
    result = CaseResult(Task.of(case, "float64"), Status.WRONG, findings=[finding])
    groups = group([result])
    (cause,) = causes(groups, [result], ENTRIES, "0.32.4", "cpu")
    assert (cause.entry, cause.by_design) == ("divmod-remainder-zero-derivative", True)


def test_one_special_value_through_many_operations_is_one_cause() -> None:
    found = named(
        [
            wrong("divide", "specials", special="-0.0", constant=True),
            wrong("alias-atan2", "specials", special="-0.0", constant=True),
        ]
    )
    assert found == [
        (
            "specials: compiled differs from eager with -0.0 captured",
            ["divide", "atan2"],
            ("compiled-negative-zero-constant", False),
        )
    ]


@pytest.mark.parametrize(
    ("case", "check", "entry"),
    [
        ("alias-pow", "shapeless", "shapeless-power-broadcast-after-replay"),  # an alias
        ("addmm", "jvp", "addmm-jvp-alpha-beta"),
        ("cumsum", "jvp", None),  # nothing in the corpus: new
        # The exploring sweep's checks are tags of their own: an adjoint finding of max or min
        # is the ties entry, a composed transform's of square the shapeless vmap entry.
        ("max-axis", "adjoint", "max-min-ties-jvp-vjp-disagree"),
        ("min", "adjoint", "max-min-ties-jvp-vjp-disagree"),
        ("square", "compose", "shapeless-vmap-broadcast-first-call"),
        ("maximum", "adjoint", None),  # consistent at a tie: not the ties entry
    ],
)
def test_an_operation_is_matched_by_name_or_alias(case: str, check: str, entry: str) -> None:
    assert named([wrong(case, check)])[0][2] == (entry, False)


def test_an_operation_built_of_one_primitive_is_matched_through_it() -> None:
    # tril and triu are a where (mlx/ops.cpp: Select alone); where's jvp bug was fixed in 0.32.0.
    found = named([wrong("tril", "jvp"), wrong("triu", "jvp")], mlx="0.31.2")
    assert [entry for _, _, (entry, _) in found] == ["gradcheck-where-jvp"] * 2
    assert [entry for _, _, (entry, _) in named([wrong("tril", "jvp")])] == [None]  # 0.32.4


def test_errors_group_by_their_message_without_numbers() -> None:
    def error(case: str, size: int) -> CaseResult:
        result = wrong(case, "shapeless", kind="error")
        result.findings[0]["detail"] = f"ValueError: [reshape] Cannot reshape array of size {size}"
        return result

    found = named([error("kron", 12), error("tile", 60)])
    assert [(key, ops) for key, ops, _ in found] == [
        ("shapeless raises ValueError: [reshape] Cannot reshape array of size N", ["kron", "tile"])
    ]


def test_errors_group_by_their_message_whatever_the_rank_of_the_shapes_it_names() -> None:
    """The default sweep of 0.32.4 raised one reshape error through norm at (1,4), tril at
    (1,2,3,4) and power at (1,2,3): one cause, not one per rank."""

    def error(case: str, shape: str) -> CaseResult:
        result = wrong(case, "compose", kind="error")
        result.findings[0]["detail"] = (
            f"ValueError: [reshape] Cannot reshape array of size 1 into shape {shape}."
        )
        return result

    found = named([error("norm", "(1,4)"), error("tril", "(1,2,3,4)"), error("power", "(1, 2,3)")])
    assert [(key, ops) for key, ops, _ in found] == [
        ("compose raises ValueError: [reshape] Cannot reshape array of size N into shape (shape).",
         ["norm", "tril", "power"])
    ]  # fmt: skip


def test_a_composition_s_wrong_answer_is_its_graph_s_and_matched_through_its_primitives() -> None:
    """The default sweep of 0.32.4 found the shapeless compile of vmap(grad) wrong in shape for
    floor, ceil, round, trunc and floor_divide: five operations, one graph (each derivative
    is a Full, broadcast), and the entry that holds it names none of the five."""
    path = "compile(shapeless)(vmap(grad))"

    def composed(case: str, made: list[str]) -> CaseResult:
        result = wrong(case, "compose", kind="wrong-shape", path=path)
        result.findings[0]["made_by"] = made
        return result

    graph = ["Reshape", "Broadcast", "ExpandDims", "Full"]
    found = named([composed(op, graph) for op in ("floor", "ceil", "round", "trunc")])
    assert found == [
        (f"{path}: wrong-shape through Broadcast+Full", ["floor", "ceil", "round", "trunc"],
         ("shapeless-vmap-broadcast-first-call", False))
    ]  # fmt: skip
    # the same graph through a path that does not compile shapeless is another bug
    eager = wrong("floor", "compose", kind="wrong-shape", path="vmap(grad)")
    eager.findings[0]["made_by"] = graph
    assert named([eager]) == [
        ("vmap(grad): wrong-shape through Broadcast+Full", ["floor"], (None, False))
    ]
    # another graph is another cause, and no entry is about its primitives
    other = named([composed("sin", ["Reshape", "Sin", "Multiply", "Cos"])])
    assert other == [(f"{path}: wrong-shape through Cos+Multiply+Sin", ["sin"], (None, False))]
    # without the graph (an older child's finding) it stays the operation's
    assert named([wrong("floor", "compose", kind="wrong-shape")])[0][:2] == (
        "floor: wrong-shape (compose)",
        ["floor"],
    )


def test_the_report_names_each_finding_s_entry_and_counts_causes() -> None:
    results = [
        crash("sum-axis"),
        crash("mean-axis"),
        wrong("divmod", "jvp"),
        wrong("cumsum", "jvp"),
    ]
    found = group(results)
    report = SweepReport(environment(), 4, results)
    report.findings = [FindingReport(g, Shrunk(g.representative())) for g in found]
    name_causes(report)
    assert "4 distinct findings from 3 causes (1 known in the corpus, 1 by design, 1 new)" in (
        report.summary_line()
    )
    lines = render(report).splitlines()
    assert "  FINDING sum: crash: 1 run (known: shapeless-reduction-to-size1-crash)" in lines
    assert "  FINDING mean: crash: 1 run (known: shapeless-reduction-to-size1-crash)" in lines
    assert (
        "  BY DESIGN divmod: wrong-value (jvp): 1 run (documented: divmod-remainder-zero-derivative)"
        in lines
    )
    assert "  FINDING cumsum: wrong-value (jvp): 1 run" in lines
    data = report.to_json()["findings"]
    assert [(f["cause"], f["known"], f["by_design"]) for f in data][2:] == [
        ("divmod: wrong-value (jvp)", "divmod-remainder-zero-derivative", True),
        ("cumsum: wrong-value (jvp)", None, False),
    ]


def _made_of(result: CaseResult, *primitives: str) -> CaseResult:
    result.findings[0]["made_by"] = list(primitives)
    return result


def test_an_operation_built_of_others_is_matched_through_what_its_graph_is_made_of() -> None:
    """The sweep of 0.31.2 found median's vjp wrong: mx.median is a sort and selections, and
    its wrong vjp is ``sort-vjp-permutation``'s, an entry that names no median."""
    median = ("Squeeze", "Select", "Slice", "Sort", "Broadcast", "Add", "Divide", "Transpose")
    assert named([_made_of(wrong("median-axes-keepdims", "vjp"), *median)], "0.31.2") == [
        ("median: wrong-value (vjp)", ["median"], ("sort-vjp-permutation", False))
    ]
    # No graph read, or one of elementwise primitives and plumbing alone: nothing to go by.
    assert named([wrong("median-axes-keepdims", "vjp")], "0.31.2")[0][2] == (None, False)
    plain = _made_of(wrong("median-axes-keepdims", "vjp"), "Select", "Add", "Reshape")
    assert named([plain], "0.31.2")[0][2] == (None, False)
    # An operation that is a primitive of its own is its own finding, whatever its graph holds.
    own = _made_of(wrong("arctan2", "vjp"), "ArcTan2", "Sort")
    assert named([own], "0.31.2")[0][2] == (None, False)
    # Nor is the entry matched where it is fixed.
    assert named([_made_of(wrong("median-axes-keepdims", "vjp"), *median)])[0][2] == (None, False)


def test_a_complex_norm_s_second_derivative_is_its_abs_s_and_a_real_call_is_no_complex_bug() -> (
    None
):
    """The default sweep of 0.32.4 found the Hessian of matrix_norm of a complex matrix zero:
    its graph is an Abs, whose complex second derivative goes through sign's zero
    (``complex-sign-zero-derivative``); the same graph of a real call is not that entry's."""
    made = ["Full", "Sqrt", "Squeeze", "Multiply", "AsType", "Abs", "Flatten", "Add", "Broadcast"]

    def norm(fn: str) -> CaseResult:
        case = Case(
            "gen0-0278-matrix_norm-complex64", "matrix_norm", "generated-complex", fn, (arr(1, 1),)
        )
        finding = {"kind": "wrong-value", "check": "hessian", "detail": "observed [[0.]]",
                   "repro": {}, "made_by": made}  # fmt: skip
        return CaseResult(Task.of(case, "float32"), Status.WRONG, findings=[finding])

    complex_call = norm("lambda a_re, a_im: mx.matrix_norm(a_re + 1j * a_im)")
    assert named([complex_call])[0][2] == ("complex-sign-zero-derivative", False)
    assert named([norm("lambda a: mx.matrix_norm(a)")])[0][2] == (None, False)


def test_a_crash_differentiating_by_an_integer_argument_is_the_operation_s_jvp_or_vjp() -> None:
    """The sweep of 0.31.2 died in arctan2's integers check: a jvp by its integer argument
    alone, the one-sided jvp of ``atan2-one-sided-jvp`` (a crash, tagged jvp)."""
    assert named([crash("arctan2", check="integers")], "0.31.2") == [
        ("arctan2: a crash in the integers check", ["arctan2"], ("atan2-one-sided-jvp", False))
    ]
    # Its wrong value is the integers' own cause, not a jvp entry's.
    assert named([wrong("arctan2", "integers")], "0.31.2")[0][2] != ("atan2-one-sided-jvp", False)


def test_an_entry_is_no_match_where_its_reproducer_cannot_run() -> None:
    """The sweep of 0.32.0 matched a jvp error of a graph ending in max to
    ``max-min-jvp-empty-array``, an entry that needs 0.32.1 (before it, max of an empty array
    raises itself): a release its ``requires`` excludes has no such bug to hold."""
    from dataclasses import replace

    from mgradcheck.sweep.known import matches

    entry = next(e for e in ENTRIES if e.id == "max-min-jvp-empty-array")
    no_start = replace(entry, bug=replace(entry.bug, introduced_in={}))  # requires alone
    case = Case(
        "gen0-0178-minmax-float32", "minmax", "generated", "lambda a: mx.minmax(a)", (arr(0, 3),)
    )
    finding = {
        "kind": "error",
        "check": "jvp",
        "detail": "ValueError: [argmin] Cannot ...",
        "repro": {},
    }
    (found,) = group([CaseResult(Task.of(case, "float32"), Status.WRONG, findings=[finding])])
    assert matches(no_start, found, "jvp", Version("0.32.4"), "cpu") == 3  # the case that found it
    assert matches(no_start, found, "jvp", Version("0.32.0"), "cpu") == 0
