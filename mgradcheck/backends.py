"""The backends ``--backend`` installs, one row each: a new backend is a new row here.

Its name is what ``--backend`` takes (``cuda13``); its family is what MLX runs on and what the
corpus names (``cuda``). The child asks MLX which family it runs on, without this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    name: str
    family: str
    extra: str | None = None  # Linux installs mlx[extra]; None: plain mlx
    companions: tuple[str, ...] = ()  # what mlx[extra] brings: one must exist at the release
    cmake: tuple[str, ...] = ()  # what a build from one commit passes to CMake
    cuda: int | None = None  # the CUDA major version it links against: the driver must have it
    default_on: str | None = None  # the system (platform.system()) where --backend defaults to it
    bundled: bool = False  # inside Linux mlx wheels before mlx-cpu (0.26.5), and self-built ones


_CPU = ("-DMLX_BUILD_METAL=OFF", "-DMLX_BUILD_CUDA=OFF")
_CUDA = ("-DMLX_BUILD_METAL=OFF", "-DMLX_BUILD_CUDA=ON")
# In the corpus's order of families (its messages and an entry's default `affects` list them so).
TABLE = (
    Backend("cpu", "cpu", extra="cpu", companions=("mlx-cpu",), cmake=_CPU, bundled=True),
    Backend("metal", "metal", default_on="Darwin"),
    # mlx[cuda] was mlx-cuda up to 0.30.0 and is mlx-cuda-12 since; [cuda12]/[cuda13] are explicit.
    Backend(
        "cuda", "cuda", extra="cuda", companions=("mlx-cuda", "mlx-cuda-12"), cmake=_CUDA, cuda=12
    ),
    Backend("cuda12", "cuda", extra="cuda12", companions=("mlx-cuda-12",), cmake=_CUDA, cuda=12),
    Backend("cuda13", "cuda", extra="cuda13", companions=("mlx-cuda-13",), cmake=_CUDA, cuda=13),
)  # fmt: skip
BY_NAME = {b.name: b for b in TABLE}
NAMES = tuple(sorted(BY_NAME))  # what --backend takes, as its --help lists them
FAMILIES = tuple(dict.fromkeys(b.family for b in TABLE))  # what a corpus entry names
FALLBACK = "cpu"  # the default where no row claims the system


def family(name: str) -> str:
    """The corpus's name for a backend as installed (``cuda13`` -> ``cuda``); others unchanged."""
    return BY_NAME[name].family if name in BY_NAME else name


def default(system: str) -> str:
    """--backend's default on ``system`` (``platform.system()``): metal on macOS, cpu elsewhere."""
    return next((b.name for b in TABLE if b.default_on == system), FALLBACK)


def installed_family(system: str, installed: Callable[[str], bool]) -> str:
    """The family of the MLX installed here, told by a companion package ``installed`` finds;
    the system's default without one (an mlx-cpu beside a CUDA build leaves it CUDA)."""
    for b in TABLE:
        if b.name != FALLBACK and any(installed(p) for p in b.companions):
            return b.family
    return family(default(system))
