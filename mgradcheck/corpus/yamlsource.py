"""Safe YAML reading that remembers the line of every value.

``yaml.safe_load`` forgets where things came from; a corpus error must name its
file and line. This composes the node tree with PyYAML's safe loader and builds
plain Python values from it, recording the line of each value by its path of
keys, and refusing duplicate keys, non-string keys, unknown tags and trees so
large or deep that they could only be an accident or an attack. Nothing is ever
constructed beyond plain scalars, lists and dicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mgradcheck.corpus.document import (
    MAX_BYTES,
    Document,
    Key,
    SourceError,
    dotted,
    source_bytes,
)

MAX_NODES = 50_000
MAX_DEPTH = 64

SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null")
)


def read(path: Path, display: str | None = None) -> Document:
    """Read one YAML file; raise :class:`SourceError` on anything malformed."""
    name = display or str(path)
    return parse_bytes(source_bytes(path, name), name)


def parse_bytes(raw: bytes, name: str) -> Document:
    """Parse a file's bytes (as :func:`mgradcheck.corpus.document.source_bytes` read them)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError(name, line, "", f"not UTF-8 (byte {raw[exc.start]:#04x})") from None
    return parse(text, name)


# libyaml's parser when PyYAML was built with it (several times faster); same safe constructor.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# libyaml's composer recurses in C once per level of nesting: a few thousand levels
# overflow a thread's C stack (SIGSEGV). No file nests deeper than it has characters that
# can open a level; a file with more than this many is first read as a stream of events
# (libyaml's parser does not recurse) to measure its depth.
_SHALLOW = 500


# PyYAML 6.0.4's libyaml has a nesting limit of its own (1,000 levels), which its scanner
# can reach while it looks ahead, before the first event of a deep flow sequence arrives
# here: that error means the same as ours, and says so in our words.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _check_depth(text: str, name: str) -> None:
    loader = _SafeLoader(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()  # type: ignore[no-untyped-call]
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise SourceError(name, line, "", f"nested more than {MAX_DEPTH} levels")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        loader.dispose()


def parse(text: str, name: str) -> Document:
    loader = None
    try:
        if sum(text.count(c) for c in "[{-:?") > _SHALLOW:
            _check_depth(text, name)
        loader = _SafeLoader(text)
        node = loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise SourceError(
            name, line, "", f"invalid YAML: {exc.reason} ({exc.character:#06x})"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        if problem == _LIBYAML_TOO_DEEP:
            # Its limit is deeper than ours, so where it tripped is nested past ours too.
            raise SourceError(name, line, "", f"nested more than {MAX_DEPTH} levels") from None
        raise SourceError(name, line, "", f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise SourceError(name, 0, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise SourceError(name, 0, "", "invalid YAML: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        raise SourceError(name, 1, "", "file is empty")
    assert loader is not None
    builder = _Builder(name, loader)
    data = builder.build(node, ())
    return Document(
        name, data, builder.lines, frozenset(builder.block_scalars), tuple(builder.problems)
    )


class _Builder:
    def __init__(self, name: str, loader: yaml.SafeLoader) -> None:
        self.name = name
        self.loader = loader
        self.lines: dict[Key, int] = {}
        self.block_scalars: set[Key] = set()
        self.problems: list[SourceError] = []
        self.count = 0

    def fail(self, node: yaml.Node, key: Key, message: str) -> SourceError:
        return SourceError(self.name, node.start_mark.line + 1, dotted(key), message)

    def build(self, node: yaml.Node, key: Key) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, key, f"more than {MAX_NODES} values (alias expansion?)")
        if len(key) > MAX_DEPTH:
            raise self.fail(node, key, f"nested more than {MAX_DEPTH} levels")
        self.lines[key] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            if node.tag != "tag:yaml.org,2002:map":
                raise self.fail(node, key, f"unsupported tag {node.tag}")
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.fail(key_node, key, "merge keys (<<) are not supported")
                if (
                    not isinstance(key_node, yaml.ScalarNode)
                    or key_node.tag != "tag:yaml.org,2002:str"
                ):
                    raise self.fail(key_node, key, "keys must be plain strings")
                name = key_node.value
                if name in result:
                    self.problems.append(self.fail(key_node, (*key, name), "duplicate key"))
                    continue  # the first one is checked
                result[name] = self.build(value_node, (*key, name))
            return result
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                raise self.fail(node, key, f"unsupported tag {node.tag}")
            return [self.build(item, (*key, i)) for i, item in enumerate(node.value)]
        if node.tag == "tag:yaml.org,2002:timestamp":
            self.problems.append(
                self.fail(node, key, f"write dates as quoted strings ('{node.value}')")
            )
            return str(node.value)  # checked on as the string it should have been
        if node.tag not in SCALAR_TAGS:
            raise self.fail(node, key, f"unsupported tag {node.tag}")
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            self.block_scalars.add(key)
        try:
            return self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise self.fail(node, key, f"invalid value: {first}") from None


__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "Document",
    "Key",
    "SourceError",
    "dotted",
    "parse",
    "parse_bytes",
    "read",
]
