"""CUDA builds: the driver checked first, listing and installing mlx[cuda13], and the corpus's
per-backend expectations honoured on CUDA, with fake wheels whose MLX claims a CUDA GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from mgradcheck.cli import cli
from mgradcheck.envs.cuda import OVERRIDE, DriverError, check_driver
from mgradcheck.index.installable import Source, Target, list_releases
from mgradcheck.releases.on_release import open_release
from mgradcheck.releases.settings import Settings
from tests.conftest import write_entry
from tests.fake_mlx import CUDA13

SOURCE = ["--no-index", "--backend", "cuda13"]

ON_CUDA = """\
id: {id}
title: A bug on {where}
summary: Used by the tests.
upstream: {{report: "https://example.invalid/report"}}
bug: {{outcome: fail, affects: [{affects}], fixed_in: {{cuda: "1.3.0", cpu: "1.1.0"}}}}
{requires}
code: |
  import mlx.core as mx
  v = tuple(int(x) for x in mx.__version__.split("."))
  assert_true(v >= (1, 3), f"broken before 1.3 on {{mx.default_device()}}")
"""


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine has no NVIDIA driver: state the CUDA version a driver would support."""
    monkeypatch.setenv(OVERRIDE, "13.0")


def test_the_driver_is_checked_before_anything_is_installed(
    fake_wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OVERRIDE, "12.4")
    with pytest.raises(
        DriverError, match=r"needs a driver that supports CUDA 13.*or --backend cuda12"
    ):
        check_driver("cuda13")
    assert check_driver("cuda12") == "12.4" and check_driver("cpu") is None
    result = CliRunner().invoke(
        cli, ["envs", "path", "1.2.0", "-q", "--find-links", str(fake_wheels), *SOURCE]
    )
    assert result.exit_code == 3 and "supports CUDA 13" in result.output, result.output
    monkeypatch.delenv(OVERRIDE)
    monkeypatch.setenv("LD_LIBRARY_PATH", "")
    try:
        check_driver("cuda13")
    except DriverError as exc:  # no driver here: one line that says what to do
        assert "libcuda.so.1" in str(exc) and OVERRIDE in str(exc)


def test_only_releases_with_a_cuda13_build_are_listed(fake_wheels: Path) -> None:
    listing = list_releases(Source(None, fake_wheels), Target.current("cuda13"))
    assert listing.versions == [Version(v) for v in CUDA13]
    assert Target.current("cuda13").requirement(Version("1.2.0")) == "mlx[cuda13]==1.2.0"
    assert Target.current("cuda13").device == "cuda" and Target.current("cpu").device == "cpu"


def test_a_cuda13_environment_reports_its_gpu(fake_wheels: Path, gpu: None) -> None:
    settings = Settings.from_options(find_links=fake_wheels, no_index=True, backend="cuda13")
    with open_release(Version("1.3.0"), settings) as (_, env):
        pass
    assert (env.backend, env.device, env.device_name) == ("cuda", "Device(gpu, 0)", "Fake GPU")
    assert env.device_memory == 8 << 30 and env.hardware.startswith("Fake GPU, 8 GiB")


@pytest.mark.parametrize(
    ("release", "expected"), [("1.2.0", "as expected"), ("1.3.0", "as expected")]
)
def test_per_backend_expectations_hold_on_cuda(
    fake_wheels: Path, gpu: None, tmp_path: Path, release: str, expected: str
) -> None:
    """fixed_in {cuda: 1.3.0, cpu: 1.1.0}: on CUDA 1.2.0 the bug is expected, on 1.3.0 it is fixed;
    a CPU-only entry is skipped there."""
    write_entry(
        tmp_path,
        "cuda-bug",
        ON_CUDA.format(id="cuda-bug", where="CUDA", affects="cuda, cpu", requires=""),
    )
    write_entry(tmp_path, "cpu-only", ON_CUDA.format(id="cpu-only", where="CPU", affects="cpu",
                                                     requires="requires: {backends: [cpu]}"))  # fmt: skip
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli,
        ["run", "--corpus", str(tmp_path), "--mlx", release, "--find-links", str(fake_wheels),
         *SOURCE, "--json", str(out), "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    import json

    data = json.loads(out.read_text())
    verdicts = {r["id"]: (r["outcome"], r["verdict"]) for r in data["results"]}
    outcome = "fail" if release == "1.2.0" else "pass"
    assert verdicts == {"cuda-bug": (outcome, expected), "cpu-only": ("skip", "skipped")}
    (env,) = data["environments"]
    assert env["backend"] == "cuda" and env["device_name"] == "Fake GPU"
