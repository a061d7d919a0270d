"""The files of the MLX installed in an environment, checked against what the installer recorded.

Every installed wheel lists its files in ``<name>-<version>.dist-info/RECORD``
(``path,sha256=<digest>,<size>``, one a line, paths relative to site-packages).
An environment whose MLX lost a file or had one cut short since (a cleanup
script, a full disk, a hand in ``site-packages``) still imports, and then
raises ``NameError`` or ``ImportError`` in an entry, which would be judged as
the release's behaviour. So the sizes are compared on every use (one ``stat``
a file, a few hundred for a release) and the hashes once, when the
environment is built. Only MLX's own distributions are checked: ``mlx`` and
its backends (``mlx-cpu``, ``mlx-metal``, ``mlx-cuda``, ``mlx-cuda-13``...).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import re
from pathlib import Path

from packaging.utils import canonicalize_name

MLX = re.compile(r"mlx(-(cpu|metal|cuda(-\d+)?))?")
CHUNK = 1 << 20


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK):
            sha.update(block)
    return "sha256=" + base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode()


def _check_file(site: Path, row: list[str], hashes: bool) -> str | None:
    """What is wrong with one RECORD row's file, or None."""
    name, recorded, size = [*row, "", ""][:3]
    # Bytecode is a cache Python rewrites whenever it is missing or stale.
    if name.endswith(".pyc"):
        return None
    path = site / name
    try:
        found = path.stat().st_size
    except OSError:
        return f"{name} is missing"
    if size and found != int(size):
        return f"{name} holds {found} bytes, not the {size} installed"
    if hashes and recorded.startswith("sha256=") and _digest(path) != recorded:
        return f"{name} differs from the file installed"
    return None


def _check_distribution(site: Path, info: Path, hashes: bool) -> str | None:
    try:
        with (info / "RECORD").open(encoding="utf-8", newline="") as stream:
            rows = [row for row in csv.reader(stream) if row]
    except (OSError, UnicodeDecodeError, csv.Error):
        return f"{info.name}/RECORD is unreadable"
    try:
        return next((p for row in rows if (p := _check_file(site, row, hashes))), None)
    except ValueError:  # a size that is not a number
        return f"{info.name}/RECORD is malformed"


def check(venv: Path, hashes: bool = False) -> str | None:
    """The first thing wrong with the MLX installed in ``venv`` (sizes; ``hashes`` too), or None."""
    try:
        infos = sorted(venv.glob("lib/python*/site-packages/*.dist-info"))
    except OSError:  # removed while read (a prune): what is not there is not whole
        return "its site-packages is unreadable"
    names = {info: canonicalize_name(info.name.split("-", 1)[0]) for info in infos}
    ours = [info for info, name in names.items() if MLX.fullmatch(name)]
    if "mlx" not in names.values():
        return "mlx is not installed"
    return next((p for i in ours if (p := _check_distribution(i.parent, i, hashes))), None)


__all__ = ["MLX", "check"]
