"""What the environment cache holds: our environments and the state of each, and pruning them.

Only directories with our marker are listed as ours and ever removed; any
other directory under ``envs/`` is reported and left alone. One in use (its
lock held: being built, or a command running entries in it) is left too, and
said so: a run may last hours, and a prune that waited for it would seem hung.
"""

from __future__ import annotations

import enum
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.envs.venvs import COMPLETE, FAILED, MARKER, Lock, envs_root, is_ready, read_json


class EnvState(enum.Enum):
    READY = "ready"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    DAMAGED = "damaged"  # complete once, its MLX no longer as installed: rebuilt on next use
    IN_USE = "in use"


@dataclass(frozen=True)
class CachedEnv:
    path: Path
    state: EnvState
    spec: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.spec.get("mlx", "?"))


def _state(path: Path) -> EnvState:
    lock = Lock(path.name)
    try:
        if not lock.try_acquire():
            return EnvState.IN_USE
    finally:
        lock.close()
    if is_ready(path):
        return EnvState.READY
    if (path / FAILED).exists():
        return EnvState.FAILED
    return EnvState.DAMAGED if read_json(path / COMPLETE) is not None else EnvState.INCOMPLETE


def scan() -> tuple[list[CachedEnv], list[Path]]:
    """Our environments, and the directories under envs/ that are not ours (left alone)."""
    ours, foreign = [], []
    for path in sorted(envs_root().iterdir()):
        if not path.is_dir() or path.name == ".locks":
            continue
        marker = read_json(path / MARKER)
        if marker is None:
            foreign.append(path)
            continue
        ours.append(CachedEnv(path, _state(path), dict(marker.get("spec", {}))))
    return ours, foreign


@dataclass(frozen=True)
class Pruned:
    removed: list[CachedEnv]
    in_use: list[CachedEnv]  # would have been removed, and were left: their lock is held


def prune(everything: bool = False, dry_run: bool = False) -> Pruned:
    """Remove our failed, damaged and half-built environments (all of ours with ``everything``)."""
    removed, in_use = [], []
    for env in scan()[0]:
        if env.state is EnvState.READY and not everything:
            continue
        lock = Lock(env.path.name)
        try:
            if not lock.try_acquire():
                in_use.append(CachedEnv(env.path, EnvState.IN_USE, env.spec))
                continue
            if read_json(env.path / MARKER) is None:
                continue
            if not dry_run:
                shutil.rmtree(env.path)
            removed.append(env)
        finally:
            lock.close()
    return Pruned(removed, in_use)
