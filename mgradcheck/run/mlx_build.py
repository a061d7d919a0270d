"""Which build of MLX an interpreter imports, read from its files without starting it.

Two builds of one version are two MLXes: a wheel built here from a branch and the
published wheel of its version run different code, so nothing kept for one (stored
results, compiled kernels) may serve the other. A build is named by the hashes its
installer recorded for each file of every ``mlx*`` distribution (their
``dist-info/RECORD``: ``path,sha256=...,size``, taken from the wheel): the core
library and extension included, so a rebuild that changes one byte of them is
another build. Reading two small files costs far less than hashing the 20 MB
library, and whether the files still match their RECORD is the environment's check.

Only a virtual environment that does not see the base's site-packages, started with
no ``PYTHONHOME`` or ``PYTHONUSERBASE`` and holding no editable MLX, can be read so: anywhere else what it imports is not told by its files alone, and
its build is unknown (None).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from hashlib import blake2b
from pathlib import Path

_IMPORT_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE")


def isolated_venv(python: str, env: Mapping[str, str]) -> tuple[Path, str] | None:
    """The virtual environment of ``python`` and its ``pyvenv.cfg``, when its files alone say
    what it imports; else None."""
    if any(env.get(name) for name in _IMPORT_VARIABLES):
        return None
    # A virtual environment's bin/python is a link to its base interpreter: the path, not its
    # target, names the environment.
    venv = Path(os.path.abspath(python)).parent.parent
    try:
        config = (venv / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    settings = {
        k.strip().lower(): v.strip()
        for k, _, v in (line.partition("=") for line in config.splitlines())
    }
    if settings.get("include-system-site-packages", "false").lower() != "false":
        return None
    return venv, config


def distributions(venv: Path) -> list[Path] | None:
    """Every ``mlx*`` dist-info directory of the environment, in order; None when one is
    editable (built in place: its files change without its metadata) or unreadable."""
    found: list[Path] = []
    sites = sorted(venv.glob("lib/python*/site-packages")) + sorted(venv.glob("Lib/site-packages"))
    for site in sites:
        for dist in sorted(site.glob("mlx*.dist-info")):
            direct = dist / "direct_url.json"
            try:
                if direct.exists() and '"editable": true' in direct.read_text(encoding="utf-8"):
                    return None
            except OSError:
                return None
            found.append(dist)
    return found


def _imports_mlx(path: str) -> bool:
    """Whether a ``PYTHONPATH`` holds a package or module named mlx."""
    return any(
        os.path.exists(os.path.join(where, name))
        for where in path.split(os.pathsep)
        if where
        for name in ("mlx", "mlx.py")
    )


def identity(python: str, env: Mapping[str, str]) -> str | None:
    """The build of MLX ``python`` imports (16 hex digits), or None when its files cannot say.

    A ``PYTHONPATH`` comes before site-packages, but only an mlx on it changes which MLX is
    imported (mgradcheck's own checkout on it, say, does not).
    """
    if _imports_mlx(env.get("PYTHONPATH", "")):
        return None
    found = isolated_venv(python, {k: v for k, v in env.items() if k != "PYTHONPATH"})
    dists = distributions(found[0]) if found is not None else None
    if not dists:
        return None
    files: list[str] = []
    for dist in dists:
        try:
            record = (dist / "RECORD").read_text(encoding="utf-8")
        except OSError:
            return None
        for row in record.splitlines():
            path, _, rest = row.partition(",")
            digest = rest.partition(",")[0]
            # What the installer wrote (INSTALLER, direct_url.json...) differs between pip
            # and uv for one wheel, and has no hash in the wheel's own RECORD anyway.
            if digest and ".dist-info/" not in path:
                files.append(f"{path},{digest}")
    if not files:
        return None
    return blake2b("\n".join(sorted(files)).encode(), digest_size=8).hexdigest()


__all__ = ["distributions", "identity", "isolated_venv"]
