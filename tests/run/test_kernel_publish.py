"""What a child leaves in its TMPDIR reaches later runs only as the kernels its MLX built.

Real children: fake ones that write files where MLX puts its libraries, and real MLX ones
that damage the kernels they were seeded with.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome
from mgradcheck.run import kernels
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Silent
from mgradcheck.run.runner import Job, JobRun, Runner, RunOptions
from mgradcheck.run.stages import prepare
from tests.conftest import environment
from tests.run.test_kernels import CPU, elf


def run_one(runner: Runner, code: str, name: str = "child") -> JobRun:
    jobs = iter([Job(name, code, 120)])
    done: list[JobRun] = []
    assert runner.run_jobs(partial(next, jobs, None), done.append) is None
    (only,) = done
    return only


def fake_runner(shared: Path) -> Runner:
    return Runner(
        ChildCommand(sys.executable, kernels=shared), environment(), RunOptions(), Silent()
    )


def in_cache(shared: Path) -> list[str]:
    return sorted(p.name for p in (shared / CPU).iterdir())


# Writes ``count`` whole libraries where MLX 0.29 on puts its kernels, each defining the
# function its name says when ``named``, else the same one.
WRITES = """\
import os
cpu = os.path.join(os.environ["TMPDIR"], {cpu!r})
os.makedirs(cpu, exist_ok=True)
for i in range({count}):
    with open(os.path.join(cpu, f"libk{{i}}.so"), "wb") as f:
        f.write({head!r} + (f"\\0k{{i}}\\0".encode() if {named} else b"\\0k\\0"))
"""


def test_thousands_of_files_left_by_an_entry_are_not_published(tmp_path: Path) -> None:
    shared = tmp_path / "kernels"
    (shared / CPU).mkdir(parents=True)
    runner = fake_runner(shared)
    code = WRITES.format(cpu=CPU, count=5_000, head=elf(), named=False)
    assert run_one(runner, code).run.outcome is Outcome.PASS
    assert in_cache(shared) == []  # none defines the kernel its name says: no MLX built them
    code = WRITES.format(cpu=CPU, count=kernels.MAX_LIBRARIES + 100, head=elf(), named=True)
    assert run_one(runner, code).run.outcome is Outcome.PASS
    assert len(in_cache(shared)) == kernels.MAX_LIBRARIES  # what seeds every later child


# Seeded with libwarm.so: writes through its link, renames a copy of it over a new kernel's
# name, and leaves a whole library of its own outside the places MLX uses.
DAMAGES = """\
import os, shutil
tmp = os.environ["TMPDIR"]
cpu = os.path.join(tmp, {cpu!r})
warm = os.path.join(cpu, "libwarm.so")
shutil.copyfile(warm, os.path.join(cpu, "copy"))
os.rename(os.path.join(cpu, "copy"), os.path.join(cpu, "libother.so"))
with open(warm, "r+b") as f:
    f.write(b"\\0" * 64)
os.makedirs(os.path.join(tmp, "deep"))
with open(os.path.join(tmp, "deep", "libdeep.so"), "wb") as f:
    f.write({deep!r})
"""


def test_a_child_that_damages_its_kernels_leaves_the_cache_as_it_was_or_smaller(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "kernels"
    (shared / CPU).mkdir(parents=True)
    (shared / CPU / "libwarm.so").write_bytes(elf(kernel="warm"))
    code = DAMAGES.format(cpu=CPU, deep=elf(kernel="deep"))
    assert run_one(fake_runner(shared), code).run.outcome is Outcome.PASS
    assert in_cache(shared) == []  # the written library taken out; nothing of the child's in
    assert [p.name for p in shared.iterdir()] == ["mlx"]


# Real MLX: one child builds f's kernel; the next, seeded with it, builds g's, puts a copy of
# f's library in its place and writes zeros over f's; a third runs both.
F = "mx.compile(lambda x: mx.exp(x) * 3 + x)"
G = "mx.compile(lambda x: mx.sin(x) - x * x)"
BUILDS_F = f"import mlx.core as mx\nmx.eval({F}(mx.ones(4)))\n"
DAMAGES_F_AND_G = f"""\
import glob, os, shutil
import mlx.core as mx
(cpu,) = glob.glob(os.path.join(os.environ["TMPDIR"], "mlx", "*", "cpu"))
(f,) = glob.glob(os.path.join(cpu, "lib*.so"))
mx.eval({G}(mx.ones(4)))
(g,) = set(glob.glob(os.path.join(cpu, "lib*.so"))) - {{f}}
shutil.copyfile(f, g + ".copy")
os.rename(g + ".copy", g)
with open(f, "r+b") as library:
    library.write(b"\\0" * 64)
"""
RUNS_BOTH = f"""\
import mlx.core as mx
x = mx.array([0.5, 1.0, 2.0])
assert mx.allclose({F}(x), mx.exp(x) * 3 + x).item()
assert mx.allclose({G}(x), mx.sin(x) - x * x).item()
"""


@pytest.mark.mlx
def test_kernels_damaged_by_one_child_do_not_change_the_next_ones_verdicts(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "kernels"
    command, env = prepare(sys.executable, kernels=shared)
    runner = Runner(command, env, RunOptions(), Silent())
    for code in (BUILDS_F, DAMAGES_F_AND_G, RUNS_BOTH):
        done = run_one(runner, code)
        assert done.run.outcome is Outcome.PASS, (done.run.message, done.run.stderr[-2000:])
    assert command.kernels is not None
    for library in command.kernels.rglob("lib*.so"):
        kernel = library.name.removeprefix("lib").removesuffix(".so")
        assert kernels.built_kernel(str(library), kernel, kernels.MAX_BYTES), library.name


def test_what_a_child_publishes_is_found_where_mlx_puts_it(tmp_path: Path) -> None:
    """Before 0.29 MLX put its libraries in TMPDIR itself; from 0.29 in mlx/<version>/cpu."""
    private, shared = tmp_path / "private", tmp_path / "shared"
    for where in ("", CPU, "elsewhere"):
        (private / where).mkdir(parents=True, exist_ok=True)
        name = os.path.basename(where) or "top"
        (private / where / f"lib{name}.so").write_bytes(elf(kernel=name))
    assert kernels.publish(private, shared) == 2
    published = {str(p.relative_to(shared)) for p in shared.rglob("*.so")}
    assert published == {os.path.join(CPU, "libcpu.so"), "libtop.so"}
