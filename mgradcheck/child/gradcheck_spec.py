"""The vocabulary of a declarative ``gradcheck:`` block (docs/gradcheck.md).

Standard library only: the corpus loader validates these blocks without
importing NumPy or MLX.
"""

from __future__ import annotations

import re

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTEGERS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
CHECKS = ("jvp", "vjp", "subsets", "dtype", "compile", "hessian")
SPEC_KEYS = ("fn", "inputs", "dtypes", "seed", "checks", "rtol", "atol", "points")
INPUT_KEYS = ("shape", "dtype", "range", "value", "fill", "const")
# What MLX says when an operation or its derivative does not exist: unsupported, not a bug.
UNSUPPORTED = re.compile(
    r"not (yet )?(implemented|supported)|unsupported|has no attribute|incompatible function arguments",
    re.I,
)
