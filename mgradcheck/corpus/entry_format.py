"""The corpus entry format, one table: each block's keys, which are required, what each holds.

The loader (:mod:`mgradcheck.corpus.loader`) takes its keys, vocabularies and ranges
from here, and the shipped JSON Schema is generated from here
(:mod:`mgradcheck.corpus.entry_schema`). A field's kind is a JSON Schema fragment,
or a :class:`Kind` when the loader reads something from it too; what no schema can
state (Python syntax, an order between two fields) the loader alone checks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from mgradcheck.backends import FAMILIES as BACKENDS
from mgradcheck.child import gradcheck_spec as gc
from mgradcheck.outcomes import Outcome
from mgradcheck.upstream import COMMIT_HASH

Schema = dict[str, Any]  # whose values may hold kinds, until entry_schema resolves them

ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"
# Matched whole (fullmatch): with match, "$" would let an id end in a newline.
ID_RE = re.compile(ID)
LINK_RE = re.compile(r"https://\S+")
# PEP 440 in the shape JSON Schema's regular expressions can say (packaging's own is verbose
# and case-insensitive); `validate` parses versions and specifiers with packaging itself.
_PEP440 = (
    r"v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?"
    r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?(?:[-_.]?dev[-_.]?[0-9]*)?"
)
_LOCAL = r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?"
_CLAUSE = (
    rf"(?:(?:~=|<=|>=|<|>)\s*{_PEP440}|(?:==|!=)\s*{_PEP440}(?:\.\*|{_LOCAL})|===\s*[^,\s]+)\s*"
)


class Kind:
    """What a field holds, when the loader reads more of it than JSON Schema's words."""

    def schema(self) -> Schema:
        """The kind in JSON Schema, which may hold other kinds (entry_schema resolves them)."""
        raise NotImplementedError


K = TypeVar("K", bound=Kind | dict[str, Any])


@dataclass(frozen=True)
class Named(Kind, Generic[K]):
    """A kind several fields share: the schema writes it once, under ``definitions``."""

    name: str
    kind: K

    def schema(self) -> Schema:
        return {"$ref": f"#/definitions/{self.name}"}


@dataclass(frozen=True)
class Choice(Kind):
    values: tuple[str, ...]

    def schema(self) -> Schema:
        return {"enum": list(self.values)}


@dataclass(frozen=True)
class Number(Kind):
    """A number, a whole one when ``integer``, within ``low..high``."""

    low: float = -math.inf
    high: float = math.inf
    integer: bool = False

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high

    def span(self) -> str:
        """The range as messages write it: ``1..100``, ``0.1..86400``."""
        if self.integer:
            return f"{int(self.low)}..{int(self.high)}"
        return f"{self.low:g}..{self.high:g}"

    def schema(self) -> Schema:
        bounds = {"minimum": self.low, "maximum": self.high}
        return {"type": "integer" if self.integer else "number"} | {
            k: v for k, v in bounds.items() if math.isfinite(v)
        }


@dataclass(frozen=True)
class Block(Kind):
    """A mapping of known keys; ``rules`` are what the schema says of several keys at once."""

    fields: Mapping[str, Kind | Schema]
    required: tuple[str, ...] = ()
    description: str | None = None
    rules: Schema = field(default_factory=dict)

    def schema(self) -> Schema:
        head: Schema = {"type": "object", "additionalProperties": False}
        if self.required:
            head["required"] = list(self.required)
        if self.description:
            head["description"] = self.description
        return head | {"properties": dict(self.fields)} | self.rules


def _nullable(kind: Kind | Schema) -> Schema:
    return {"anyOf": [kind, {"type": "null"}]}


def _list_of(kind: Kind | Schema, **sizes: int) -> Schema:
    return {"type": "array", **sizes, "items": kind}


def _text(pattern: str = r"\S", **more: str) -> Schema:
    return {"type": "string", "pattern": pattern, **more}


def _whole(pattern: str) -> str:
    """``pattern`` matched whole: validators in Python let a ``$`` pass a final newline."""
    return f"^{pattern}(?!\\n)$"


# Kinds that several blocks, or the loader, name.
TEXT = Named("text", _text())
OPTIONAL_TEXT = Named("optionalText", _nullable(TEXT))
LINK = Named("link", _text(_whole(LINK_RE.pattern)))
VERSION = Named("version", _text(
    rf"^\s*{_PEP440}{_LOCAL}\s*$",
    description="A PEP 440 version, quoted (0.32.0 unquoted would be read as a number).",
))  # fmt: skip
OPTIONAL_VERSION = Named("optionalVersion", _nullable(VERSION))
PER_BACKEND = Named("perBackend", {"anyOf": [
    OPTIONAL_VERSION, Block(dict.fromkeys(BACKENDS, OPTIONAL_VERSION))
]})  # fmt: skip
BACKEND = Named("backend", Choice(BACKENDS))
BACKEND_LIST = Named("backends", _list_of(Choice(BACKENDS)))
BUG_OUTCOME = Named("bugOutcome", Choice(tuple(o.label for o in Outcome.bug_outcomes())))
EVIDENCE_OUTCOME = Choice(tuple(o.label for o in Outcome if o is not Outcome.NOT_RUN))
DTYPE = Choice(gc.FLOATS + gc.INTEGERS)
FLOAT_DTYPE = Choice(gc.FLOATS)
CHECK = Choice(gc.CHECKS)
FLAG = {"type": "boolean"}
NUMBER = Number()
TIMEOUT = Number(0.1, 86400)
REPEAT = Number(1, 10_000, integer=True)
SEED = Number(0, 2**32 - 1, integer=True)
POINTS = Number(1, 100, integer=True)
SIZE = Number(0, 4096, integer=True)  # of one axis of a gradcheck input
TOLERANCE = {"type": "number", "exclusiveMinimum": 0}
NUMBERS = Named("numbers", {  # nested lists' being rectangular, only `validate` sees
    "description": "a number or a nested, rectangular list of numbers",
    "anyOf": [{"type": ["number", "boolean", "null"]},
              {"type": "array", "items": {"$ref": "#/definitions/numbers"}}],
})  # fmt: skip

UPSTREAM = Block({"report": _nullable(LINK), "fix": _nullable(LINK), "related": _list_of(LINK)})
FOUND_BY = Block({
    "tool": TEXT, "mlx": OPTIONAL_VERSION,
    "date": _text(_whole("[0-9]{4}-[0-9]{2}-[0-9]{2}"), format="date"),
    "backend": _nullable(BACKEND), "case": OPTIONAL_TEXT,
}, required=("tool", "mlx", "date"))  # fmt: skip
CHANGE = Named("change", Block(
    {"commit": _text(f"^{COMMIT_HASH}$"), "pr": Number(1, integer=True)},
    required=("commit",),
    description="the commit of MLX that made the change, found by bisect --commits, and its"
    " pull request",
))  # fmt: skip
BUG = Block({
    "outcome": {"anyOf": [BUG_OUTCOME, _list_of(BUG_OUTCOME)]},
    "match": _nullable(_text(format="regex")),
    "affects": BACKEND_LIST, "fixed_in": PER_BACKEND, "introduced_in": PER_BACKEND,
    "reported_on": BACKEND_LIST, "fixed_by": CHANGE, "introduced_by": CHANGE,
}, required=("outcome",))  # fmt: skip
REQUIRES = Block({
    "backends": BACKEND_LIST,
    "mlx": _text(
        rf"^\s*(?:{_CLAUSE}(?:,\s*{_CLAUSE})*)?$", description="a version specifier, e.g. '>=0.26'"
    ),
    "float64": FLAG,
})  # fmt: skip
GRADCHECK_INPUT = Named("gradcheckInput", Block({
    "shape": _nullable(_list_of(SIZE)), "dtype": DTYPE,
    "range": _nullable(_list_of(NUMBER, minItems=2, maxItems=2)),
    "value": NUMBERS, "fill": NUMBER, "const": FLAG, "ties": FLAG,
}, rules={
    "minProperties": 1,
    "dependencies": {"value": {"not": {"anyOf": [{"required": ["fill"]},
                                                 {"required": ["range"]}]}}},
}))  # fmt: skip
GRADCHECK = Block({
    "fn": TEXT, "inputs": _list_of(GRADCHECK_INPUT, minItems=1),
    "dtypes": _list_of(FLOAT_DTYPE, minItems=1), "checks": _list_of(CHECK, minItems=1),
    "seed": SEED, "points": POINTS, "rtol": TOLERANCE, "atol": TOLERANCE,
}, required=("fn", "inputs"))  # fmt: skip
EVIDENCE = Block({
    "mlx": OPTIONAL_VERSION, "backend": BACKEND, "outcome": EVIDENCE_OUTCOME, "note": OPTIONAL_TEXT,
}, required=("mlx", "backend", "outcome"))  # fmt: skip
ENTRY = Block({
    "id": _text(_whole(ID), description="kebab-case, unique in the corpus"),
    "title": _text(r"^\s*\S[^\n]*\s*$", description="one line"),
    "summary": TEXT,
    "upstream": UPSTREAM,  # required unless found_by says the bug is not reported yet
    "found_by": FOUND_BY, "origin": OPTIONAL_TEXT, "tags": _list_of({"type": "string"}),
    "bug": BUG, "requires": REQUIRES, "timeout": TIMEOUT, "repeat": REPEAT,
    "code": OPTIONAL_TEXT, "gradcheck": GRADCHECK, "evidence": _list_of(EVIDENCE),
    "notes": OPTIONAL_TEXT,
}, required=("id", "title", "summary", "bug"), rules={"allOf": [
    {"oneOf": [{"required": ["code"], "properties": {"code": {"type": "string"}}},
               {"required": ["gradcheck"]}],
     "description": "exactly one of 'code' or 'gradcheck'"},
    {"if": {"not": {"required": ["found_by"]}},
     "then": {"required": ["upstream"], "properties": {"upstream": {"required": ["report"]}}},
     "description": "an upstream report, or found_by for a bug not reported yet"},
]})  # fmt: skip
