"""The interpreter the children run under: this one, ``--python``'s, or a release's."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mgradcheck.cli.common import say

if TYPE_CHECKING:
    from mgradcheck.releases.choice import Mlx
    from mgradcheck.releases.settings import Settings
    from mgradcheck.run.child_process import ChildCommand
    from mgradcheck.run.display import Progress
    from mgradcheck.run.observation import Environment


def open_target(
    python: Path | None,
    release: Mlx | None,
    settings: Settings | None,
    progress: Progress,
) -> contextlib.AbstractContextManager[tuple[ChildCommand, Environment]]:
    """:func:`mgradcheck.releases.on_release.open_target`, which this interpreter or ``--python``
    reaches without importing the release machinery (half a plain run's start-up)."""
    if release is None:
        from mgradcheck.run.stages import prepare

        return contextlib.nullcontext(prepare(str(python) if python else sys.executable))
    from mgradcheck.releases import on_release as runs

    assert settings is not None  # release_options makes them whenever --mlx is given
    return runs.open_target(python, release, settings, progress)


def note_kernel_build(command: ChildCommand, environment: Environment, compiles: bool) -> None:
    """Say once, as it starts, that this run builds mx.compile's CPU kernels (cached afterwards).

    On the CPU backend MLX compiles each new fused kernel with the system's C++
    compiler, and mgradcheck keeps them per release: the first run of a release
    that uses ``mx.compile`` spends a minute there, later ones none.
    """
    kernels = command.kernels
    if not compiles or environment.backend != "cpu" or kernels is None:
        return
    if any(kernels.rglob("*.so")):
        return
    say(
        f"note: first mx.compile run on mlx {environment.mlx}: building its CPU kernels "
        f"(C++ compiles, a minute or so), kept in {kernels} for the next runs"
    )


__all__ = ["note_kernel_build", "open_target"]
