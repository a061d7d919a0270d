"""Remember what an interpreter runs, so that a second run asks no child.

A probe (one child that imports MLX and reports its version, backend, device
and Python) costs as much as an entry. Its answer is kept under
``cache_root()/probes/``, one file per key, written atomically, and read back
only if its key matches. The key is what the answer depends on, read from the
file system without starting the interpreter:

* the interpreter's path as given (a virtual environment's ``bin/python`` is a
  link to its base interpreter: the path, not its target, names the
  environment) and the identity (device, inode, size, mtime) of the binary it
  leads to, so a changed Python is a new key;
* the environment's ``pyvenv.cfg``, and every ``mlx*`` dist-info directory in
  its site-packages with its ``RECORD``'s identity, so installing another MLX
  release into the same environment (or removing it) is a new key.

Only a virtual environment that does not see the base's site-packages, started
with no ``PYTHONPATH``, ``PYTHONHOME`` or ``PYTHONUSERBASE`` and holding no
editable MLX, is cached: anywhere else what it imports cannot be read from the
files alone, and it is probed every time.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mgradcheck.atomic import write_text
from mgradcheck.errors import WriteError
from mgradcheck.run.mlx_build import distributions, isolated_venv

FORMAT = 1


def _identity(path: Path) -> list[int]:
    info = os.stat(path)
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]


def key(python: str, env: Mapping[str, str]) -> dict[str, Any] | None:
    """What the probe's answer for ``python`` depends on, or None when that cannot be known."""
    found = isolated_venv(python, env)
    dists = distributions(found[0]) if found is not None else None
    if found is None or dists is None:
        return None
    given = Path(os.path.abspath(python))
    try:
        interpreter = _identity(given)
        mlx = [[str(d), *_identity(d), *_identity(d / "RECORD")] for d in dists]
    except OSError:
        return None
    return {"format": FORMAT, "python": str(given), "binary": interpreter, "pyvenv": found[1],
            "mlx": mlx}  # fmt: skip


def _path(root: Path, probe_key: Mapping[str, Any]) -> Path:
    # The name only spreads the keys: each file holds its key, checked on reading, so two keys
    # of one name cost each other a probe.
    digest = zlib.crc32(json.dumps(probe_key, sort_keys=True).encode())
    return root / f"{digest:08x}.json"


def get(root: Path, probe_key: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored answer for this key, or None (missing, unreadable, or for another key)."""
    try:
        data = json.loads(_path(root, probe_key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != json.loads(json.dumps(probe_key)):
        return None
    answer = data.get("environment")
    return answer if isinstance(answer, dict) else None


def put(root: Path, probe_key: Mapping[str, Any], environment: Mapping[str, Any]) -> None:
    """Store the answer atomically; another run writing the same key writes the same thing."""
    document = json.dumps({"key": probe_key, "environment": environment})
    with contextlib.suppress(OSError, WriteError):  # only a cache: the next run probes again
        root.mkdir(parents=True, exist_ok=True)
        write_text(_path(root, probe_key), document)
