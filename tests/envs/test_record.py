"""The MLX of an environment against its RECORD: sizes always, hashes when asked."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from mgradcheck.envs.record import check


def install(site: Path, project: str, files: dict[str, bytes]) -> None:
    """Files as an installer leaves them, with their dist-info's RECORD."""
    info = f"{project.replace('-', '_')}-1.0.0.dist-info"
    lines = [f"{info}/RECORD,,"]
    for name, data in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    (site / info).mkdir(parents=True)
    (site / info / "RECORD").write_text("\n".join(lines) + "\n")


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    install(
        site, "mlx", {"mlx/core.py": b"grad = 1\n", "mlx/__pycache__/core.cpython-311.pyc": b"x"}
    )
    install(site, "mlx-cpu", {"mlx_cpu.libs/libblas.so": b"\0" * 64})
    install(site, "numpy", {"numpy/__init__.py": b"# numpy\n"})
    install(site, "mlx-lm", {"mlx_lm/__init__.py": b""})  # not MLX's own
    return tmp_path / "venv"


def site(venv: Path) -> Path:
    return venv / "lib" / "python3.11" / "site-packages"


def test_a_whole_install_passes(venv: Path) -> None:
    assert check(venv) is None and check(venv, hashes=True) is None


def test_a_missing_or_cut_file_of_mlx_or_its_backend_is_found(venv: Path) -> None:
    (site(venv) / "mlx_cpu.libs" / "libblas.so").write_bytes(b"\0" * 10)
    assert check(venv) == "mlx_cpu.libs/libblas.so holds 10 bytes, not the 64 installed"
    (site(venv) / "mlx" / "core.py").unlink()
    assert check(venv) == "mlx/core.py is missing"


def test_a_changed_file_of_the_same_size_needs_the_hashes(venv: Path) -> None:
    (site(venv) / "mlx" / "core.py").write_bytes(b"grad = 2\n")
    assert check(venv) is None
    assert check(venv, hashes=True) == "mlx/core.py differs from the file installed"


def test_bytecode_and_other_packages_are_not_mlx(venv: Path) -> None:
    (site(venv) / "mlx" / "__pycache__" / "core.cpython-311.pyc").unlink()
    (site(venv) / "numpy" / "__init__.py").unlink()
    (site(venv) / "mlx_lm" / "__init__.py").unlink()
    assert check(venv, hashes=True) is None


def test_no_mlx_at_all(tmp_path: Path) -> None:
    assert check(tmp_path) == "mlx is not installed"


def test_an_unreadable_record(venv: Path) -> None:
    (site(venv) / "mlx-1.0.0.dist-info" / "RECORD").write_text("mlx/core.py,sha256=x,many\n")
    assert check(venv) == "mlx-1.0.0.dist-info/RECORD is malformed"
