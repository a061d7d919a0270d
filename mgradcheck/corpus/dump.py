"""Corpus entries written as YAML that reads like the hand-written ones."""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    pass


class _RecordDumper(_Dumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML writes U+0085 (NEL) as it is in a block or single-quoted scalar, and reads it
    # back as a line break: only double quotes, where it is escaped (\N), keep it.
    style = '"' if "\x85" in value else "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Short lists of scalars (shapes, ranges, dtypes, backends) read best inline.
    flow = all(not isinstance(v, (dict, list)) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _record(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    # A mapping of single-line scalars (an evidence line, found_by) on one line, as the corpus writes them.
    flow = all(not isinstance(v, (dict, list)) and "\n" not in str(v) for v in value.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flow)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(list, _list)
_RecordDumper.add_representer(dict, _record)


def dump(data: dict[str, Any], records_inline: bool = False) -> str:
    """``data`` as YAML, keys in the order given; ``records_inline`` puts flat mappings on one line."""
    dumper = _RecordDumper if records_inline else _Dumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, width=100, allow_unicode=True)
