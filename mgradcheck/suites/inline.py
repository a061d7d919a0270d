"""One unittest test as self-contained corpus code: its body, the helpers it uses, its assertions mapped.

The test's own source is kept, comments and layout included; only its
``self.…`` calls are rewritten: ``assertTrue``/``assertFalse`` onto
``assert_true``, ``assertAlmostEqual`` onto ``assert_close`` (``places``
becomes ``atol=0.5 * 10**-places``; ``delta`` the ``atol``), the other
assertions onto small functions written into the entry with unittest's meaning
and a message naming the observed and the expected value, ``subTest`` onto a
context that names the subtest in a failure, and calls of the class's other
methods (its base classes' too, like MLX's ``MLXTestCase.assertEqualArray``)
onto those methods inlined as plain functions. The module-level imports,
functions and constants the code reads are pulled in by name, from the test's
module and from the modules its helpers come from. ``np.testing`` assertions
need nothing: they raise AssertionError, which the corpus reads as a failed
check. A body that returns early or uses ``nonlocal`` is wrapped in a function.

Whatever cannot be made self-contained so (an attribute set in setUp, a
helper module used directly, a decorated helper) raises :class:`NotInlinable`
with the reason: no half-working entry is written.
"""

from __future__ import annotations

import ast
import builtins
import copy
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.suites.assertions import ENTRY_NAMES, EQUAL, PRELUDE, RELATIONS
from mgradcheck.suites.bindings import ParsedModule, free_names
from mgradcheck.suites.source import Source, first_line

Function = ast.FunctionDef | ast.AsyncFunctionDef


class NotInlinable(Exception):
    """The test cannot be made self-contained; the message says why."""


@dataclass(frozen=True)
class Inlined:
    code: str
    docstring: str | None
    comment: str  # the comment lines its body opens with (MLX's tests say there what they test)


def _call(name: str, args: Iterable[ast.expr], keywords: Iterable[ast.keyword] = ()) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), list(keywords))


def _self_call(node: ast.AST) -> str | None:
    """The method name of a ``self.method(...)`` call, else None."""
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id == "self" else None
    return None


def _refuse_self(node: ast.AST) -> None:
    """``self`` used other than to call a method: an attribute, or passed on."""
    owner = node.value if isinstance(node, ast.Attribute) else None
    if isinstance(node, ast.Attribute) and isinstance(owner, ast.Name) and owner.id == "self":
        raise NotInlinable(f"uses self.{node.attr}, which is not a method call")
    if isinstance(node, ast.Name) and node.id == "self":
        raise NotInlinable("uses self other than to call its methods")


class _Inliner:
    def __init__(self, module: ParsedModule, cls: str, sources: dict[Path, Source]) -> None:
        self.module = module
        self.cls = cls
        self.sources = sources
        self.methods: dict[str, tuple[Function, ParsedModule]] = {}
        self._gather(module, module.source.classes[cls], set())
        self.prelude: dict[str, str] = {}
        self.helpers: dict[str, str] = {}  # name -> source, in the order first needed
        self.helper_nodes: list[tuple[Function, ParsedModule]] = []

    def _gather(self, module: ParsedModule, node: ast.ClassDef, seen: set[str]) -> None:
        """The methods of the class and its bases (in this module or beside it), nearest last."""
        for base in node.bases:
            name = ast.unparse(base)
            if name in seen:
                continue
            seen.add(name)
            if name in module.source.classes:
                self._gather(module, module.source.classes[name], seen)
            elif "." in name:
                head, _, attr = name.rpartition(".")
                path = module.source.sibling(head)
                if path is not None:
                    path = path.resolve()
                    if path not in self.sources:
                        self.sources[path] = Source.parse(path)
                    other = ParsedModule(self.sources[path])
                    if attr in other.source.classes:
                        self._gather(other, other.source.classes[attr], seen)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.methods[item.name] = (item, module)

    # --- one call -----------------------------------------------------------------------

    def _map(self, call: ast.Call, method: str) -> ast.expr:
        """The replacement of one ``self.method(...)`` call (its arguments already mapped)."""
        args, keywords = list(call.args), list(call.keywords)
        given = {k.arg: k.value for k in keywords if k.arg}
        msg = given.get("msg")
        label = ast.Constant(ast.unparse(args[0])) if args else ast.Constant("value")
        named = [
            *([ast.keyword("msg", msg)] if msg is not None else []),
            ast.keyword("what", label),
        ]
        if method in ("assertTrue", "assertFalse", "assert_"):
            if not args:
                raise NotInlinable(f"self.{method} without an argument")
            condition = args[0] if method != "assertFalse" else ast.UnaryOp(ast.Not(), args[0])
            text = msg or (args[1] if len(args) > 1 else None)
            if text is None:
                shown = ast.unparse(args[0])
                text = ast.Constant(shown if method != "assertFalse" else f"not {shown}")
            return _call("assert_true", [condition, text])
        if method in ("assertAlmostEqual", "assertAlmostEquals"):
            if "delta" in given:
                atol: ast.expr = given["delta"]
            else:
                places = given.get("places", args[2] if len(args) > 2 else ast.Constant(7))
                power = ast.BinOp(ast.Constant(10.0), ast.Pow(), ast.UnaryOp(ast.USub(), places))
                atol = ast.BinOp(ast.Constant(0.5), ast.Mult(), power)
            what = ast.keyword("what", msg if msg is not None else label)
            close = [ast.keyword("rtol", ast.Constant(0)), ast.keyword("atol", atol), what]
            return _call("assert_close", args[:2], close)
        if method in EQUAL or method in ("assertNotEqual", "assertNotEquals"):
            name = "assert_equal" if method in EQUAL else "assert_not_equal"
            self.prelude[name] = PRELUDE[name]
            return _call(name, args[:2], named)
        if method in RELATIONS or method in ("assertIsNone", "assertIsNotNone"):
            return self._relation(method, args, named)
        if method in ("assertIsInstance", "assertNotIsInstance"):
            self.prelude["assert_that"] = PRELUDE["assert_that"]
            holds: ast.expr = _call("isinstance", args[:2])
            relation = "is an instance of"
            if method == "assertNotIsInstance":
                holds, relation = ast.UnaryOp(ast.Not(), holds), "is not an instance of"
            return _call("assert_that", [*args[:2], ast.Constant(relation), holds], named)
        if method in ("assertRaises", "assertRaisesRegex", "assertRaisesRegexp"):
            self.prelude["assert_raises"] = PRELUDE["assert_raises"]
            if method != "assertRaises":
                if len(args) < 2:
                    raise NotInlinable(f"self.{method} without its pattern as an argument")
                keywords.append(ast.keyword("pattern", args.pop(1)))
            return _call("assert_raises", args, keywords)
        if method == "fail":
            self.prelude["fail"] = PRELUDE["fail"]
            return _call("fail", args, keywords)
        if method == "subTest":
            self.prelude["subtest"] = PRELUDE["subtest"]
            return _call("subtest", args, keywords)
        if method not in self.methods:
            raise NotInlinable(f"self.{method} has no mapping onto the check helpers")
        return _call(self._inline_method(method), args, keywords)

    def _relation(self, method: str, args: list[ast.expr], named: list[ast.keyword]) -> ast.expr:
        """``(lambda _first, _second: assert_that(...))(a, b)``: each argument evaluated once."""
        self.prelude["assert_that"] = PRELUDE["assert_that"]
        if method in ("assertIsNone", "assertIsNotNone"):
            method = "assertIs" if method == "assertIsNone" else "assertIsNot"
            args = [args[0], ast.Constant(None)]
        if len(args) < 2:
            raise NotInlinable(f"self.{method} with too few arguments")
        relation, operator = RELATIONS[method]
        first, second = ast.Name("_first", ast.Load()), ast.Name("_second", ast.Load())
        holds = ast.Compare(first, [operator], [second])
        check = _call("assert_that", [first, second, ast.Constant(relation), holds], named)
        params = ast.arguments(
            posonlyargs=[], args=[ast.arg("_first"), ast.arg("_second")], kwonlyargs=[],
            kw_defaults=[], defaults=[],
        )  # fmt: skip
        return ast.Call(ast.Lambda(params, check), args[:2], [])

    def _transform(self, call: ast.Call) -> ast.expr:
        """A ``self.method(...)`` call with every ``self`` call inside it mapped too."""
        inliner = self

        class Rewrite(ast.NodeTransformer):
            def visit_Call(self, node: ast.Call) -> ast.AST:
                method = _self_call(node)
                if method is None:
                    return self.generic_visit(node)
                node.args = [self.visit(a) for a in node.args]
                node.keywords = [self.visit(k) for k in node.keywords]
                return inliner._map(node, method)

            def generic_visit(self, node: ast.AST) -> ast.AST:
                _refuse_self(node)
                return super().generic_visit(node)

        mapped = Rewrite().visit(copy.deepcopy(call))
        assert isinstance(mapped, ast.expr)
        return ast.fix_missing_locations(mapped)

    # --- one function's source -----------------------------------------------------------

    def body_source(self, func: Function, module: ParsedModule) -> tuple[str, str | None]:
        """The function's body, its ``self`` calls rewritten, dedented; and its docstring."""
        docstring = ast.get_docstring(func)
        body = func.body[1:] if docstring is not None else list(func.body)
        if not body:
            return "pass\n", docstring
        floor = (func.body[0].end_lineno or func.lineno) if docstring is not None else func.lineno
        first = first_line(body[0])
        while first - 1 > floor and module.lines[first - 2].strip().startswith("#"):
            first -= 1  # the comments just above the first statement belong to it
        last = func.end_lineno or func.lineno
        lines = [line.encode() for line in module.lines[first - 1 : last]]
        calls: list[tuple[ast.Call, str]] = []
        todo: list[ast.AST] = list(body)
        while todo:  # the outermost self calls; any other use of self is refused
            node = todo.pop()
            method = _self_call(node)
            if method is not None:
                assert isinstance(node, ast.Call)
                calls.append((node, method))
                continue
            _refuse_self(node)
            todo.extend(ast.iter_child_nodes(node))
        for call, _ in sorted(calls, key=lambda c: (c[0].lineno, c[0].col_offset), reverse=True):
            text = ast.unparse(self._transform(call)).encode()
            start, end = call.lineno - first, (call.end_lineno or call.lineno) - first
            head, tail = lines[start][: call.col_offset], lines[end][call.end_col_offset or 0 :]
            lines[start : end + 1] = [head + text + tail]
        return textwrap.dedent(b"".join(lines).decode()), docstring

    def _inline_method(self, name: str) -> str:
        if name in self.helpers:
            return name
        func, module = self.methods[name]
        if func.decorator_list:
            raise NotInlinable(f"self.{name} is decorated ({ast.unparse(func.decorator_list[0])})")
        params = func.args.posonlyargs + func.args.args
        if not params or params[0].arg != "self":
            raise NotInlinable(f"self.{name} does not take self first")
        if name in self.module.bindings or name in ENTRY_NAMES or name in PRELUDE:
            raise NotInlinable(f"self.{name} would shadow another name of the entry")
        self.helpers[name] = ""  # taken: a helper that calls itself finds it
        header = copy.deepcopy(func)
        if header.args.posonlyargs:
            header.args.posonlyargs = header.args.posonlyargs[1:]
        else:
            header.args.args = header.args.args[1:]
        header.body, header.decorator_list = [ast.Pass()], []
        signature = ast.unparse(header).rsplit("\n", 1)[0]  # "def name(...):" without "pass"
        body, _ = self.body_source(func, module)
        self.helpers[name] = signature + "\n" + textwrap.indent(body, "    ")
        self.helper_nodes.append((func, module))
        return name

    # --- the module-level names it needs ---------------------------------------------------

    def needed(
        self, module: ParsedModule, roots: Iterable[ast.AST], known: set[str]
    ) -> list[ast.stmt]:
        """Module-level statements binding what ``roots`` read, and what those read, in order."""
        chosen: list[ast.stmt] = []
        todo = sorted(free_names(roots) - known)
        while todo:
            name = todo.pop()
            if name in known:
                continue
            known.add(name)
            stmt = module.bindings.get(name)
            if stmt is None:
                if hasattr(builtins, name) or name in ENTRY_NAMES:
                    continue
                raise NotInlinable(f"{name!r} is not defined in {module.source.path.name}")
            if isinstance(stmt, ast.ClassDef) and stmt.name == self.cls:
                raise NotInlinable(f"uses its own class {self.cls}")
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else []
                modules += [stmt.module] if isinstance(stmt, ast.ImportFrom) and stmt.module else []
                for imported in modules:
                    if module.source.sibling(imported) is not None:
                        raise NotInlinable(f"uses the helper module {imported} directly")
            if all(stmt is not s for s in chosen):
                chosen.append(stmt)
                if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    todo.extend(sorted(free_names([stmt]) - known))
        order = {id(s): i for i, s in enumerate(module.source.tree.body)}
        return sorted(chosen, key=lambda s: order[id(s)])

    def code(self, name: str) -> Inlined:
        if name not in self.methods:
            raise NotInlinable(f"{self.cls}.{name} is not defined")
        func, module = self.methods[name]
        body, docstring = self.body_source(func, module)
        known = set(self.prelude) | set(self.helpers)
        statements = [
            (s, self.module) for s in self.needed(self.module, [ast.parse(body)], set(known))
        ]
        for node, where in self.helper_nodes:
            for stmt in self.needed(where, [node], set(known)):
                if all(stmt is not s for s, _ in statements):
                    statements.append((stmt, where))
        imports: list[str] = []
        others: list[str] = []
        for stmt, where in statements:
            text = where.segment(stmt).rstrip()
            kept = imports if isinstance(stmt, (ast.Import, ast.ImportFrom)) else others
            if text not in kept:
                kept.append(text)
        blocks = [
            "\n".join(imports),
            *(textwrap.dedent(s).strip() for s in self.prelude.values()),
            *others,
            *(h.rstrip() for h in self.helpers.values()),
            _runnable(body, name).rstrip(),
        ]
        comment = "\n".join(
            line.strip().lstrip("#").strip()
            for line in body.splitlines()[: _leading_comments(body)]
        )
        return Inlined("\n\n".join(b for b in blocks if b) + "\n", docstring, comment)


def _leading_comments(body: str) -> int:
    lines = body.splitlines()
    count = 0
    while count < len(lines) and lines[count].strip().startswith("#"):
        count += 1
    return count


def _runnable(body: str, name: str) -> str:
    """The body as module-level code, or inside a function when it returns or uses nonlocal."""
    try:
        compile(body, name, "exec", dont_inherit=True)
    except SyntaxError:
        return f"def {name}():\n{textwrap.indent(body, '    ')}\n\n{name}()\n"
    return body


def inline(
    source: Source, cls: str | None, name: str, sources: dict[Path, Source] | None = None
) -> Inlined:
    """The test ``cls.name`` of ``source`` as code that runs as a corpus entry."""
    if cls is None or cls not in source.classes:
        raise NotInlinable("not a method of a unittest class: only those are harvested")
    return _Inliner(ParsedModule(source), cls, sources if sources is not None else {}).code(name)


__all__ = ["Inlined", "NotInlinable", "inline"]
