"""The vocabulary of a declarative ``gradcheck:`` block (docs/gradcheck.md).

Standard library only: the corpus loader validates these blocks without
importing NumPy or MLX.
"""

from __future__ import annotations

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTEGERS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# Every check, in the order a point runs them. The first six are a block's default;
# the transform checks after them are asked for by name (the sweep asks for all);
# "integers" differentiates by the integer and bool arguments, which no other check traces.
CHECKS = (
    "jvp", "vjp", "subsets", "dtype", "compile", "hessian", "adjoint",
    "vmap", "views", "specials", "shapeless", "checkpoint", "custom", "export", "compose",
    "integers",
)  # fmt: skip
DEFAULT_CHECKS = CHECKS[:6]
FIRST_ORDER = CHECKS[:4]
# The checks that build compiled kernels (one C++ build per new graph on the CPU).
COMPILED = ("compile", "views", "specials", "shapeless", "compose")
# MLX's explicit refusals: an operation, or a transform of it, that this MLX does
# not implement (or not for these arguments), or declines by design. A refusal is
# listed as unsupported, never reported as a bug.
UNSUPPORTED = (  # compiled by re where searched: by the sweep and its children, not by a run
    "(?i)"
    r"not (yet )?(implemented|supported)|unsupported|\bNYI\b"  # "[QuantizedMatmul::vmap] NYI"
    r"|use stop_gradient"  # "Use stop_gradient on indices/masks ..."
    # The jvp of a masked assignment whose mask is in the graph (its vjp says use stop_gradient).
    r"|\[masked_scatter\] invalid arg index in jvp"
    # vmap of a 3-D convolution is a grouped one, which MLX does not implement.
    r"|can only handle groups != 1"
    r"|cannot calculate [jv]jp with respect to"  # indices of gather/scatter, masks
    r"|cannot compute the gradient wrt the indices"  # gather_qmm's, likewise
    r"|cannot infer output shapes"  # no shapeless compile for this primitive
    r"|module 'mlx[\w.]*' has no attribute"  # an operation this release lacks
    r"|incompatible function arguments|unexpected keyword argument"  # nor its signature
    r"|invalid padding mode"  # nor this mode of mx.pad
    # A reduction that has no value over no elements: "[logsumexp] Received empty array",
    # "[max] Cannot max reduce over axis 0 with size 0".
    r"|received empty array|cannot \w+ reduce over axis -?\d+ with size 0"
    # mx.export_function of a primitive this release cannot write, or read back.
    r"|unable to (serialize|deserialize|get state for) primitive"
)
# An operation declining the dtype it was given names a dtype or its kind: "[erf] Not
# supported for complex64", "[linalg::inv] Arrays must have type float32 or float64",
# "[matmul] Only inexact types are supported". Where the primal raises so, the dtype is
# refused, not a bug found.
DTYPE_REFUSAL = (
    r"(?i)\b(bool|u?int(8|16|32|64)|float(16|32|64)|bfloat16|complex64)\b"
    r"|\binexact\b|\bcomplex type|\bintegers?\b|\bfloating"
)
