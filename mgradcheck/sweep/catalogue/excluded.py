"""Which public callables of MLX the catalogue covers, which it leaves out, and why.

Every public callable of ``mlx.core``, ``mx.linalg``, ``mx.fft`` and
``mx.fast`` is either called by a catalogue case or listed in
:data:`EXCLUDED` with the reason it is not swept. The differentiable ones
left out are marked so: coverage is the share of differentiable operations
that the catalogue calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mgradcheck.sweep.catalogue.case import NAMESPACES, Case

CONSTRUCTOR = "a constructor: no array argument to differentiate"
FROM_SHAPE = "a constructor from another array's shape and dtype only: its derivative is zero"
PREDICATE = "a comparison or predicate: a boolean result, no derivative"
INTEGER = "an integer result, no derivative"
INTEGER_ONLY = "defined on integer and boolean arrays only"
DATA_SHAPE = "an output shape that depends on the values: not differentiable"
QUERY = "a query of dtypes or shapes, not an array operation"
RUNTIME = "memory, device, stream or print settings, not an array operation"
IO = "input, output or export, not an array operation"
TRANSFORM = "a transform: the columns of the coverage table, applied to every case"
QUANTISED = "quantisation only: the values are rounded to a few bits, so no useful derivative"
KERNEL = "a user-written kernel for the Metal or CUDA backend"
BY_DESIGN = (
    "its derivative is zero by definition, which finite differences (the oracle) cannot "
    "see; the corpus entry stop-gradient-aliasing guards it"
)
BITS = "a reinterpretation of the bits as another dtype: not differentiable"


@dataclass(frozen=True)
class Exclusion:
    reason: str
    differentiable: bool = False  # a differentiable operation the catalogue does not call


def _each(reason: str, names: str) -> dict[str, Exclusion]:
    return {name: Exclusion(reason) for name in names.split()}


EXCLUDED: dict[str, Exclusion] = {
    **_each(CONSTRUCTOR, "mx.arange mx.bartlett mx.blackman mx.empty mx.eye mx.full mx.hamming "
            "mx.hanning mx.identity mx.linspace mx.ones mx.tri mx.zeros mx.array mx.asarray "
            "mx.from_dlpack fft.fftfreq fft.rfftfreq"),
    **_each(FROM_SHAPE, "mx.empty_like mx.full_like mx.ones_like mx.zeros_like"),
    **_each(PREDICATE, "mx.allclose mx.all mx.any mx.array_equal mx.equal mx.greater "
            "mx.greater_equal mx.isclose mx.isfinite mx.isinf mx.isnan mx.isneginf mx.isposinf "
            "mx.less mx.less_equal mx.logical_and mx.logical_not mx.logical_or mx.logical_xor "
            "mx.not_equal"),
    **_each(INTEGER, "mx.argmax mx.argmin mx.argpartition mx.argsort mx.count_nonzero "
            "mx.searchsorted"),
    **_each(INTEGER_ONLY, "mx.bitwise_and mx.bitwise_invert mx.bitwise_or mx.bitwise_xor "
            "mx.bitwise_left_shift mx.bitwise_right_shift mx.left_shift mx.right_shift"),
    **_each(DATA_SHAPE, "mx.unique"),
    **_each(QUERY, "mx.broadcast_shapes mx.can_cast mx.isdtype mx.issubdtype mx.result_type "
            "mx.einsum_path"),
    **_each(RUNTIME, "mx.clear_cache mx.get_active_memory mx.get_cache_memory mx.get_memory_limit "
            "mx.get_peak_memory mx.reset_peak_memory mx.set_cache_limit mx.set_memory_limit "
            "mx.set_wired_limit mx.get_array_buffer_size mx.default_device mx.default_stream "
            "mx.device_count mx.device_info mx.is_available mx.new_stream "
            "mx.new_thread_local_stream mx.new_thread_unsafe_stream mx.set_default_device "
            "mx.set_default_stream mx.stream mx.synchronize mx.clear_streams mx.get_printoptions "
            "mx.printoptions mx.set_printoptions"),
    **_each(IO, "mx.load mx.save mx.save_gguf mx.save_safetensors mx.savez mx.savez_compressed "
            "mx.export_function mx.export_to_dot mx.exporter mx.import_function"),
    **_each(TRANSFORM, "mx.compile mx.disable_compile mx.enable_compile mx.eval mx.async_eval "
            "mx.grad mx.value_and_grad mx.jvp mx.vjp mx.vmap mx.checkpoint"),
    **_each(QUANTISED, "mx.quantize mx.qqmm mx.gather_qqmm mx.to_fp8 mx.from_fp8"),
    **_each(KERNEL, "fast.metal_kernel fast.cuda_kernel fast.precompiled_cuda_kernel"),
    **_each(BITS, "mx.view"),
    "mx.stop_gradient": Exclusion(BY_DESIGN, differentiable=True),
}  # fmt: skip


def public(module_names: Mapping[str, Sequence[str]]) -> list[str]:
    """``{"mx": [...], "linalg": [...]}`` (one MLX's callables) as qualified names."""
    return [f"{ns}.{name}" for ns in NAMESPACES for name in module_names.get(ns, ())]


def covered(cases: Iterable[Case]) -> dict[str, list[Case]]:
    """Each operation the cases call, with the cases that call it."""
    by_op: dict[str, list[Case]] = {}
    for case in cases:
        for name in case.covers:
            by_op.setdefault(name, []).append(case)
    return by_op


@dataclass(frozen=True)
class Coverage:
    """How one MLX's public callables are accounted for, per namespace."""

    names: tuple[str, ...]  # every public callable of that MLX
    covered: tuple[str, ...]  # called by a case
    excluded: tuple[str, ...]  # listed in EXCLUDED
    missing: tuple[str, ...]  # neither: the catalogue must grow or EXCLUDED must say why

    @property
    def differentiable(self) -> tuple[str, ...]:
        left_out = tuple(n for n in self.excluded if EXCLUDED[n].differentiable)
        return self.covered + left_out + self.missing

    @property
    def share(self) -> float:
        total = len(self.differentiable)
        return len(self.covered) / total if total else 1.0

    def by_namespace(self) -> dict[str, tuple[int, int, int, int]]:
        """namespace -> (covered, excluded as not differentiable, differentiable left out, missing)."""
        out = {}
        for ns in NAMESPACES:
            mine = [n for n in self.names if n.split(".")[0] == ns]
            out[ns] = (
                sum(n in self.covered for n in mine),
                sum(n in self.excluded and not EXCLUDED[n].differentiable for n in mine),
                sum(n in self.excluded and EXCLUDED[n].differentiable for n in mine),
                sum(n in self.missing for n in mine),
            )
        return out


def account(names: Iterable[str], cases: Iterable[Case]) -> Coverage:
    """Sort ``names`` (one MLX's public callables) into covered, excluded and missing.

    An excluded name stays excluded when a case calls it as a helper
    (``mx.eye`` to build a matrix, ``mx.argmax`` beside a float output).
    """
    calls = covered(cases)
    names = tuple(sorted(set(names)))
    return Coverage(
        names,
        tuple(n for n in names if n in calls and n not in EXCLUDED),
        tuple(n for n in names if n in EXCLUDED),
        tuple(n for n in names if n not in calls and n not in EXCLUDED),
    )
