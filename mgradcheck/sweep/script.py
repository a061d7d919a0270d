"""A standalone reproducer (MLX and NumPy only) for one gradcheck finding, as Python source.

The finding says which transform combination disagreed (its ``repro``) and
at which inputs (its ``values``); the script rebuilds those inputs exactly,
runs that one combination, computes the expected value independently
(float64 finite differences, eager MLX, or a Python loop, as the sweep's
oracle did) and fails with an ``AssertionError`` when they disagree.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from mgradcheck.sweep.script_derivatives import PRELUDE
from mgradcheck.sweep.script_transforms import TransformScript


def render(
    spec: Mapping[str, Any], finding: Mapping[str, Any], names: Sequence[str], title: str
) -> str:
    """The whole script: a header, the helpers, the inputs, and the one comparison that fails."""
    script = TransformScript(spec, finding, names)
    header = "\n".join(f"# {line}" for line in textwrap.wrap(title, 96))
    setitem = "setitem" in str(spec["fn"])
    helper = (
        "\n\ndef setitem(x, index, value):  # x with x[index] = value, as an expression\n"
        "    out = x + 0\n    out[index] = value\n    return out\n"
        if setitem
        else ""
    )
    return (
        f"{header}\n# Standalone: needs only MLX and NumPy.\n{PRELUDE}{helper}\n\n"
        f"f = {spec['fn']}\n{script.arrays()}\n\n{script.body()}\n"
    )
