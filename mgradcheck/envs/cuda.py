"""The NVIDIA driver a CUDA build of MLX needs, checked before anything is installed or run.

A CUDA build of MLX links against one major version of the CUDA runtime
(``mlx-cuda-13`` against CUDA 13, ``mlx-cuda-12`` and the older ``mlx-cuda``
against CUDA 12) and runs only where the driver supports at least that
version. Without this check a missing or old driver shows up as an import
error in every child; with it, the command says so once, before it downloads
a 90 MB wheel. ``$MGRADCHECK_CUDA_DRIVER`` (e.g. ``13.0``) states the
driver's CUDA version instead, for building environments on a machine that
will not run them (a login node without a GPU).
"""

from __future__ import annotations

import os

from mgradcheck.backends import BY_NAME
from mgradcheck.child.device import cuda_driver
from mgradcheck.errors import EnvironmentFailure

OVERRIDE = "MGRADCHECK_CUDA_DRIVER"


class DriverError(EnvironmentFailure):
    """The NVIDIA driver here cannot run the CUDA build asked for."""


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        raise DriverError(f"${OVERRIDE}={version!r} is not a CUDA version such as 13.0") from None


def check_driver(backend: str) -> str | None:
    """Raise DriverError unless this machine's driver can run ``backend``; return what it supports."""
    needed = BY_NAME[backend].cuda
    if needed is None:
        return None
    declared = os.environ.get(OVERRIDE)
    if declared:
        supported, described = declared, f"${OVERRIDE}={declared}"
    else:
        driver = cuda_driver()
        if driver is None or driver.get("cuda") is None:
            raise DriverError(
                f"--backend {backend} needs an NVIDIA driver, and none answers here "
                f"(libcuda.so.1); install one, or set {OVERRIDE}=<CUDA version> to build the "
                "environment for another machine"
            )
        supported = str(driver["cuda"])
        described = f"driver {driver.get('driver') or '?'} (CUDA {supported})"
    if _major(supported) < needed:
        other = " or --backend cuda12" if needed > 12 else ""
        raise DriverError(
            f"mlx[{backend}] needs a driver that supports CUDA {needed}, and this one is "
            f"{described}: update the driver{other}"
        )
    return supported
