"""Tiny fake MLX releases as real wheels, so release environments are tested with no network.

A fake ``mlx`` wheel holds ``mlx/core.py`` with what the child's probe reads
(``__version__``, ``default_device()``), two transforms whose fake bugs
come and go with the version (``grad``, ``vmap``), and declares the ``cpu`` extra on a
fake ``mlx-cpu`` wheel of the same version, like the real releases. NumPy
(the child needs it) is the test interpreter's own, repacked as a wheel. A
version in ``BROKEN`` requires a package that does not exist, so it is listed
but cannot be installed. The versions in ``CUDA13`` also have a fake
``mlx-cuda-13`` companion (the ``cuda13`` extra): installed, it makes the fake
MLX claim a CUDA GPU, as a real CUDA build does.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

# Only the standard library at import: the fake build backend of tests/fake_commits.py
# imports this module inside a bare build environment.
if TYPE_CHECKING:
    from mgradcheck.releases.settings import Settings
    from mgradcheck.releases.store import ResultsStore, StoredRuns

FIXTURES = Path(__file__).parent / "fixtures" / "releases"
VERSIONS = ("1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0")
BROKEN = ("1.5.0",)
CUDA13 = ("1.2.0", "1.3.0", "1.4.0")

CORE = """\
__version__ = "{version}"
float32 = "float32"
try:
    import mlx_fake_gpu  # what the fake CUDA companion installs
except ImportError:
    mlx_fake_gpu = None


class Device:
    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"Device({{self.kind}}, 0)"


class cuda:
    @staticmethod
    def is_available():
        return mlx_fake_gpu is not None


def device_info():
    return {{"device_name": "Fake GPU", "memory_size": 8 << 30}} if mlx_fake_gpu else {{}}


def default_device():
    return Device("gpu" if mlx_fake_gpu else "cpu")


_RELEASE = tuple(int(p) for p in __version__.split(".")[:2])


def grad(f):  # d/dx by central differences; releases 1.2 and 1.3 halve it (a fake wrong value)
    def df(x):
        d = (f(x + 1e-3) - f(x - 1e-3)) / 2e-3
        return d / 2 if (1, 2) <= _RELEASE < (1, 4) else d
    return df


def vmap(f):  # f over a list; releases before 1.3 raise (a fake missing transform)
    if _RELEASE < (1, 3):
        raise ValueError("[vmap] Not implemented for FakeOp.")
    return lambda xs: [f(x) for x in xs]
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(
    directory: Path,
    project: str,
    version: str,
    files: dict[str, bytes],
    metadata: Iterable[str] = (),
    tag: str = "py3-none-any",
) -> Path:
    """A valid wheel: the files, then METADATA, WHEEL and RECORD in ``<name>-<version>.dist-info/``."""
    name = project.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    contents = dict(files)
    contents.setdefault(
        f"{info}/METADATA",
        "\n".join(
            ["Metadata-Version: 2.1", f"Name: {project}", f"Version: {version}", *metadata, ""]
        ).encode(),
    )
    contents.setdefault(
        f"{info}/WHEEL",
        f"Wheel-Version: 1.0\nGenerator: mgradcheck-tests\nRoot-Is-Purelib: true\nTag: {tag}\n".encode(),
    )
    record = [_record_line(n, d) for n, d in contents.items()] + [f"{info}/RECORD,,"]
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = directory / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for member, data in contents.items():
            archive.writestr(member, data)
    return path


def write_fake_mlx(
    directory: Path, version: str, broken: bool = False, cuda13: bool = False
) -> None:
    metadata = ["Provides-Extra: cpu", f'Requires-Dist: mlx-cpu=={version}; extra == "cpu"']
    metadata += [
        "Provides-Extra: cuda13",
        f'Requires-Dist: mlx-cuda-13=={version}; extra == "cuda13"',
    ]
    if broken:
        metadata.append("Requires-Dist: mgradcheck-test-no-such-package")
    files = {"mlx/__init__.py": b"", "mlx/core.py": CORE.format(version=version).encode()}
    write_wheel(directory, "mlx", version, files, metadata)
    write_wheel(directory, "mlx-cpu", version, {})
    if cuda13:
        write_wheel(directory, "mlx-cuda-13", version, {"mlx_fake_gpu.py": b""})


def branch_build(wheels: Path, directory: Path, version: str) -> Path:
    """``wheels`` again in ``directory``, but with the ``mlx`` wheel of ``version`` built from
    a branch: same name and version, its grad not halved (the fake bug of 1.2 fixed)."""
    import shutil

    directory.mkdir(parents=True, exist_ok=True)
    for wheel in wheels.glob("*.whl"):
        if not wheel.name.startswith(f"mlx-{version}-"):
            shutil.copy(wheel, directory / wheel.name)
    core = CORE.format(version=version).replace("d / 2 if", "d / 2 if False and")
    metadata = ["Provides-Extra: cpu", f'Requires-Dist: mlx-cpu=={version}; extra == "cpu"']
    files = {"mlx/__init__.py": b"", "mlx/core.py": core.encode()}
    write_wheel(directory, "mlx", version, files, metadata)
    return directory


def repack_numpy(directory: Path) -> Path:
    """The test interpreter's NumPy as a wheel (with a fresh RECORD), so fake environments need no index."""
    return repack(directory, "numpy")


def repack(directory: Path, project: str) -> Path:
    """One of the test interpreter's distributions as a wheel, with a fresh RECORD."""
    dist = importlib.metadata.distribution(project)
    base = Path(str(dist.locate_file("")))
    info = next(str(f.parent) for f in dist.files or () if str(f).endswith(".dist-info/WHEEL"))
    wheel_meta = (base / info / "WHEEL").read_text()
    tag = next(
        line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")
    )
    skip = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}
    files = {}
    for item in dist.files or ():
        name = str(item)
        if name.startswith("..") or "__pycache__" in name or name.rsplit("/", 1)[-1] in skip:
            continue  # scripts outside site-packages, bytecode, and what the installer wrote
        if (base / name).is_file():
            files[name] = (base / name).read_bytes()
    return write_wheel(directory, project, dist.version, files, tag=tag)  # its METADATA kept


def wheel_dir(root: Path) -> Path:
    """Every fake release, NumPy included, as wheels in ``root/wheels``."""
    directory = root / "wheels"
    directory.mkdir(parents=True, exist_ok=True)
    for version in VERSIONS:
        write_fake_mlx(directory, version, broken=version in BROKEN, cuda13=version in CUDA13)
    repack_numpy(directory)
    extra_wheels(directory)
    return directory


# Packages a suite imports beside MLX (``--with``): a helper module, and one pinned to a release.
HELPER = "mgradcheck-test-helper"
PINNED = "mgradcheck-test-pinned"  # requires mlx==1.3.0, as PyTensor requires an mlx
PYTEST = ("pytest", "iniconfig", "packaging", "pluggy", "pygments")


def extra_wheels(directory: Path) -> None:
    helper = b"ANSWER = 42\n"
    write_wheel(directory, HELPER, "1.0", {"mgradcheck_test_helper.py": helper})
    write_wheel(directory, PINNED, "1.0", {"mgradcheck_test_pinned.py": b""},
                ["Requires-Dist: mlx==1.3.0"])  # fmt: skip
    for project in PYTEST:  # the test interpreter's pytest and what it requires
        repack(directory, project)


def settings(wheels: Path, store: ResultsStore | None = None, use_cached: bool = True) -> Settings:
    """Offline settings: only the wheel directory, built with uv."""
    from mgradcheck.envs import venvs
    from mgradcheck.index.installable import Source, Target
    from mgradcheck.releases.settings import Settings
    from mgradcheck.releases.store import ResultsStore

    return Settings(
        Target.current("cpu"),
        Source(None, wheels),
        venvs.Installer.UV,
        store=store or ResultsStore(),
        use_cached=use_cached,
    )


def stored(wheels: Path, content_hash: str, version: str) -> StoredRuns | None:
    """What the store holds of an entry (by its content hash) on a fake release, as the
    environment built from ``wheels`` holds it."""
    from packaging.version import Version

    from mgradcheck.releases.on_release import installed_build
    from mgradcheck.releases.store import ProbeKey, ResultsStore

    where = settings(wheels)
    build = installed_build(Version(version), where)
    if build is None:
        return None
    target = where.target
    return ResultsStore().get(
        ProbeKey(content_hash, version, target.backend, target.platform, build)
    )
