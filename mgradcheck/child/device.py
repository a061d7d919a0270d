"""What NVIDIA driver and GPUs this machine has, asked of the driver itself (no MLX, no CUDA toolkit).

Standard library only (``ctypes``): the child's probe reports it with the
environment, and the parent checks it before it installs a CUDA build of MLX,
so that a missing or too old driver is said in one line instead of failing
inside every child. Both libraries are the driver's own: ``libcuda.so.1``
(the CUDA version it supports, the devices) and ``libnvidia-ml.so.1`` (the
driver's version string).
"""

from __future__ import annotations

import ctypes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional


def _load(name: str) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def _driver_version() -> Optional[str]:
    nvml = _load("libnvidia-ml.so.1")
    if nvml is None or nvml.nvmlInit_v2() != 0:
        return None
    try:
        text = ctypes.create_string_buffer(96)
        if nvml.nvmlSystemGetDriverVersion(text, ctypes.c_uint(96)) != 0:
            return None
        return text.value.decode("ascii", "replace")
    finally:
        nvml.nvmlShutdown()


def cuda_driver() -> Optional[dict[str, Any]]:
    """``{"driver": "580.159.04", "cuda": "13.0", "devices": [{"name", "memory"}]}``, or None without a driver."""
    cuda = _load("libcuda.so.1")
    if cuda is None:
        return None
    if cuda.cuInit(0) != 0:
        return {"driver": _driver_version(), "cuda": None, "devices": [], "error": "cuInit failed"}
    version = ctypes.c_int(0)
    cuda.cuDriverGetVersion(ctypes.byref(version))
    count = ctypes.c_int(0)
    cuda.cuDeviceGetCount(ctypes.byref(count))
    devices = []
    for index in range(count.value):
        handle = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(handle), index) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, handle)
        memory = ctypes.c_size_t(0)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), handle)
        devices.append({"name": name.value.decode("ascii", "replace"), "memory": memory.value})
    major, minor = divmod(version.value, 1000)
    return {
        "driver": _driver_version(),
        "cuda": f"{major}.{minor // 10}",
        "devices": devices,
    }
