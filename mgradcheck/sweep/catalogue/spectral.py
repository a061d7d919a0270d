"""``mx.fft``: every transform from real inputs to real outputs, through complex values.

gradcheck differentiates real functions, so a complex input is built as
``a + 1j * b`` from two real arguments and a complex output is returned as
its real and imaginary parts: the derivative of such a real function is
defined whatever convention MLX keeps for complex cotangents. FFTs run in
float32 (the CPU has no half-precision FFT).
"""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.sweep.catalogue.case import F32, Case, arr, parts


def cases() -> Iterable[Case]:
    v, m, c = arr(8), arr(4, 6), arr(2, 3, 4)
    for name, op, fn, inputs in (
        ("fft", "fft", f"lambda x: {parts('mx.fft.fft(x)')}", (v,)),
        ("fft-n-axis", "fft", f"lambda x: {parts('mx.fft.fft(x, n=5, axis=0)')}", (m,)),
        ("ifft", "ifft", f"lambda a, b: {parts('mx.fft.ifft(a + 1j * b)')}", (v, v)),
        ("fft2", "fft2", f"lambda x: {parts('mx.fft.fft2(x)')}", (m,)),
        ("ifft2", "ifft2", f"lambda a, b: {parts('mx.fft.ifft2(a + 1j * b, axes=(0, 2))')}", (c, c)),
        ("fftn", "fftn", f"lambda x: {parts('mx.fft.fftn(x, axes=(0, 2))')}", (c,)),
        ("fftn-s", "fftn", f"lambda x: {parts('mx.fft.fftn(x, s=(3, 5), axes=(0, 1))')}", (m,)),
        ("ifftn", "ifftn", f"lambda a, b: {parts('mx.fft.ifftn(a + 1j * b)')}", (c, c)),
        ("rfft", "rfft", f"lambda x: {parts('mx.fft.rfft(x)')}", (v,)),
        ("rfft-odd", "rfft", f"lambda x: {parts('mx.fft.rfft(x, n=7, axis=1)')}", (m,)),
        ("irfft", "irfft", "lambda a, b: mx.fft.irfft(a + 1j * b)", (arr(5), arr(5))),
        ("irfft-n", "irfft", "lambda a, b: mx.fft.irfft(a + 1j * b, n=7, axis=0)", (arr(4, 3), arr(4, 3))),
        ("rfft2", "rfft2", f"lambda x: {parts('mx.fft.rfft2(x)')}", (m,)),
        ("irfft2", "irfft2", "lambda a, b: mx.fft.irfft2(a + 1j * b)", (arr(4, 4), arr(4, 4))),
        ("rfftn", "rfftn", f"lambda x: {parts('mx.fft.rfftn(x, axes=(1, 2))')}", (c,)),
        ("irfftn", "irfftn", "lambda a, b: mx.fft.irfftn(a + 1j * b, s=(3, 6), axes=(0, 1))", (arr(3, 4), arr(3, 4))),
        ("fftshift", "fftshift", "lambda x: mx.fft.fftshift(x)", (m,)),
        ("ifftshift", "ifftshift", "lambda x: mx.fft.ifftshift(x, axes=(1,))", (m,)),
        ("stft", "stft", f"lambda x: {parts('mx.fft.stft(x, n_fft=8, hop_length=4)')}", (arr(24),)),
        ("istft", "istft", "lambda a, b: mx.fft.istft(a + 1j * b, n_fft=8, hop_length=4)", (arr(5, 5), arr(5, 5))),
    ):  # fmt: skip
        yield Case(name, op, "fft", fn, inputs, dtypes=F32)
