"""The stages ``run`` and the other commands over entries are made of."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mgradcheck.envs import venvs
from mgradcheck.errors import MgradcheckError, UsageError
from mgradcheck.exitcodes import ExitCode
from mgradcheck.run import stages


def test_a_mistyped_id_gets_the_closest_one() -> None:
    entries = stages.load_corpus([])
    with pytest.raises(UsageError) as raised:
        stages.select(entries, ["where-jvp-zero-tangnet", "no-such-thing"])
    assert str(raised.value) == (
        "no corpus entry with id 'where-jvp-zero-tangnet' (did you mean "
        "'where-jvp-zero-tangent'?), 'no-such-thing'; see 'mgradcheck list'"
    )


def test_an_interpreter_without_mlx_is_an_environment_that_cannot_be_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv = venvs.find_uv()
    if uv is None:
        pytest.skip("needs uv")
    monkeypatch.setenv("MGRADCHECK_CACHE", str(tmp_path / "cache"))
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(tmp_path / "v")],
                   check=True)  # fmt: skip
    python = str(tmp_path / "v" / "bin" / "python")
    with pytest.raises(MgradcheckError) as raised:
        stages.prepare(python)
    assert raised.value.exit_code == ExitCode.ENVIRONMENT
    package = "mlx" if sys.platform == "darwin" else "mlx[cpu]"
    assert str(raised.value) == (
        f"MLX is not importable by {python}; install it into that interpreter "
        f"({python} -m pip install '{package}'), or point --python at one that has it"
    )
