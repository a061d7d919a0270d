"""Validating a declarative ``gradcheck:`` block (format: docs/gradcheck.md) without running it.

Its keys, ranges and vocabulary come from the format's table
(:mod:`mgradcheck.corpus.entry_format`), whose dtypes and checks are those of
:mod:`mgradcheck.child.gradcheck_spec`, which the child reads too.
"""

from __future__ import annotations

from typing import Any

from mgradcheck.corpus.entry_format import (
    CHECK,
    DTYPE,
    FLOAT_DTYPE,
    GRADCHECK,
    GRADCHECK_INPUT,
    POINTS,
    SEED,
    SIZE,
)
from mgradcheck.corpus.fields import Checker, Key

__all__ = ["check_gradcheck"]


def check_gradcheck(c: Checker) -> dict[str, Any]:
    """Validate a declarative ``gradcheck:`` block (format: docs/gradcheck.md)."""
    key: Key = ("gradcheck",)
    data = c.mapping(key, GRADCHECK.fields, GRADCHECK.required)
    fn = c.text((*key, "fn"), data["fn"]) if "fn" in data else None
    if fn:
        try:
            compile(fn, c.doc.path, "eval", dont_inherit=True)
        except SyntaxError as exc:
            c.error((*key, "fn"), f"not a Python expression: {exc.msg}")
    inputs = data.get("inputs", [])
    if c.typed((*key, "inputs"), inputs, list, "a list of input specs") and not inputs:
        c.error((*key, "inputs"), "must name at least one input")
    for i, item in enumerate(inputs if isinstance(inputs, list) else []):
        _gradcheck_input(c, (*key, "inputs", i), item)
    for name, choices, what in (
        ("dtypes", FLOAT_DTYPE.values, "floating dtype"),
        ("checks", CHECK.values, "check"),
    ):
        value = data.get(name)
        if name in data and not c.strings((*key, name), value, choices) and value == []:
            c.error((*key, name), f"must name at least one {what}")
    for name, number in (("seed", SEED), ("points", POINTS)):
        value = data.get(name, int(number.low))
        if c.typed((*key, name), value, int, "a whole number") and not number.holds(value):
            c.error((*key, name), f"{value} is outside {number.span()}")
    for name in ("rtol", "atol"):
        if (
            name in data
            and c.typed((*key, name), data[name], (int, float), "a number")
            and not data[name] > 0
        ):
            c.error((*key, name), "must be positive")
    return dict(data)


def _gradcheck_input(c: Checker, key: Key, item: Any) -> None:
    spec = c.mapping(key, GRADCHECK_INPUT.kind.fields)
    if not spec:
        if isinstance(item, dict):
            c.error(key, "empty input spec: give a shape, a value or a fill")
        return
    shape = spec.get("shape")
    if shape is not None and c.typed((*key, "shape"), shape, list, "a list of sizes"):
        for j, size in enumerate(shape):
            if c.typed((*key, "shape", j), size, int, "a whole number") and not SIZE.holds(size):
                c.error((*key, "shape", j), f"{size} is outside {SIZE.span()}")
    if "dtype" in spec:
        c.choice((*key, "dtype"), spec["dtype"], DTYPE.values)
    bounds = spec.get("range")
    if bounds is not None and c.typed((*key, "range"), bounds, list, "a list [low, high]"):
        numbers = len(bounds) == 2 and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds
        )
        if not numbers or not bounds[0] < bounds[1]:
            c.error((*key, "range"), "expected two numbers [low, high] with low < high")
    if "value" in spec:
        import numpy as np  # only for a given value: loading a corpus needs no NumPy

        try:
            value = np.asarray(spec["value"], dtype=np.float64)
        except (TypeError, ValueError):
            c.error((*key, "value"), "expected a number or a (nested, rectangular) list of numbers")
        else:
            if isinstance(shape, list) and list(value.shape) != shape:
                c.error(
                    (*key, "value"), f"has shape {list(value.shape)}, not the shape {shape} given"
                )
        if "fill" in spec or "range" in spec:
            c.error((*key, "value"), "a literal value takes no 'fill' or 'range'")
    if "fill" in spec:
        c.typed((*key, "fill"), spec["fill"], (int, float), "a number")
    if "const" in spec:
        c.typed((*key, "const"), spec["const"], bool, "true or false")
    if "ties" in spec:
        c.typed((*key, "ties"), spec["ties"], bool, "true or false")
