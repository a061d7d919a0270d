"""Each build of MLX keeps its compiled kernels apart: a wheel built from a branch never
loads its version's release's, nor the reverse (fake wheels, real installs and probes)."""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from mgradcheck.envs import venvs
from mgradcheck.run.stages import prepare
from tests import fake_mlx


def environments(fake_wheels: Path, tmp_path: Path) -> list[venvs.ReleaseEnv]:
    """The release 1.2.0's environment and one of a branch's build of 1.2.0."""
    branch = fake_mlx.branch_build(fake_wheels, tmp_path / "branch", "1.2.0")
    found = []
    for wheels in (fake_wheels, branch):
        with venvs.using(fake_mlx.settings(wheels).spec(Version("1.2.0"))) as env:
            found.append(env)
    return found


def test_two_builds_of_one_version_never_share_a_kernel_directory(
    fake_wheels: Path, tmp_path: Path
) -> None:
    release, branch = environments(fake_wheels, tmp_path)
    # --python: the directory under the cache, chosen by what the interpreter imports
    shared = [prepare(env.python)[0].kernels for env in (release, branch)]
    assert shared[0] is not None and shared[1] is not None and shared[0] != shared[1]
    assert prepare(release.python)[0].kernels == shared[0]  # the same build: kept warm
    # --mlx: each environment's own, and within it its build's
    own = [prepare(env.python, kernels=env.kernels)[0].kernels for env in (release, branch)]
    assert own[0] is not None and own[0].parent == release.kernels
    assert own[1] is not None and own[1].parent == branch.kernels
    assert own[0].name == shared[0].name != own[1].name == shared[1].name
