"""Children of one release share its compiled CPU kernels and never load one half-written."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
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

# Each child builds the same new graph (a round's constant is in its kernel's name), a
# tenth of a second after the one before it: later children arrive while earlier ones link.
COMPILE = """\
import time
import mlx.core as mx
time.sleep({delay})
f = mx.compile(lambda x: mx.sin(x) * {tag} + mx.cos(x))
mx.eval(f(mx.array([1.0, 2.0, 3.0])))
"""
CHILDREN = 10
# A release that links each kernel in place in its TMPDIR (0.26.1 to 0.32.1 do; 0.32.4 renames).
IN_PLACE = "0.32.0"
CPU = os.path.join("mlx", "9.9", "cpu")  # where a release from 0.29 on puts its kernels


def compile_at_once(python: str, shared: Path, rounds: int) -> list[str]:
    """``rounds`` times, CHILDREN children at once compile one new graph; what failed."""
    command, env = prepare(python, kernels=shared)
    runner = Runner(command, env, RunOptions(jobs=CHILDREN), Silent())
    failed: list[str] = []
    for round in range(rounds):
        jobs: Iterator[Job] = iter(
            [Job(f"r{round}-{i}", COMPILE.format(delay=i / 10, tag=round + 0.5), 120)
             for i in range(CHILDREN)]
        )  # fmt: skip
        done: list[JobRun] = []
        assert runner.run_jobs(partial(next, jobs, None), done.append) is None
        failed += [d.run.message for d in done if d.run.outcome is not Outcome.PASS]
    return failed


def built(shared: Path) -> list[Path]:
    return sorted(shared.rglob("lib*.so"))


def _release_python(version: str) -> str:
    from packaging.version import Version

    from mgradcheck.envs import venvs
    from mgradcheck.index.installable import Source, Target

    spec = venvs.EnvSpec(
        Version(version), Target.current(), Source.from_options(), venvs.default_installer()
    )
    with venvs.using(spec) as env:
        return env.python


@pytest.mark.parametrize(
    "release",
    [
        pytest.param(None, marks=pytest.mark.mlx, id="installed"),
        pytest.param(IN_PLACE, marks=[pytest.mark.network, pytest.mark.slow], id=IN_PLACE),
    ],
)
def test_concurrent_children_never_load_a_half_written_kernel(
    release: str | None, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if release is not None:
        request.getfixturevalue("real_cache")
    python = sys.executable if release is None else _release_python(release)
    shared = tmp_path / "kernels"
    shared.mkdir()
    assert compile_at_once(python, shared, rounds=3) == []
    libraries = built(shared)
    assert len(libraries) == 3  # one per round's graph, each whole and shared
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in libraries]
    assert compile_at_once(python, shared, rounds=3) == []  # warm: nothing built again
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in built(shared)] == before


# -- without MLX: the seeding, the merge and what counts as a whole library -----------------------


def elf(size: int = 128, header: bool = True, kernel: str = "") -> bytes:
    """A 64-bit ELF shared object of ``size`` bytes whose one section header ends at 128, as ld
    leaves it (``header=False``: as ld leaves it before its last write, the header still
    zeros); with ``kernel``, the name of the function it defines follows, as in its strings."""
    head = bytearray(64)
    if header:
        head[:6] = b"\x7fELF\x02\x01"
        head[0x10:0x12] = (3).to_bytes(2, "little")  # e_type: ET_DYN
        head[0x28:0x30] = (64).to_bytes(8, "little")  # e_shoff
        head[0x3A:0x3E] = bytes([64, 0, 1, 0])  # e_shentsize, e_shnum
    symbol = b"\0" + kernel.encode() + b"\0" if kernel else b""
    return bytes(head) + b"\0" * (size - 64) + symbol


def test_a_library_is_whole_once_its_linker_has_written_its_header_and_section_headers(
    tmp_path: Path,
) -> None:
    for name, data, expected in [
        ("done", elf(), True),
        ("cut", elf(100), False),  # the section header table not all there
        ("unheaded", elf(header=False), False),
        ("empty", b"", False),
        ("program", elf()[:16] + b"\2\0" + elf()[18:], False),  # ET_EXEC: not a library
        ("macho", b"\xcf\xfa\xed\xfe" + b"\0" * 60, True),  # Apple's linker renames a whole file
    ]:
        (tmp_path / name).write_bytes(data + b"\0k\0")  # and the function it defines
        found = kernels.built_kernel(str(tmp_path / name), "k", kernels.MAX_BYTES)
        assert (found is not None) is expected, name
    assert kernels.built_kernel(str(tmp_path / "missing"), "k", kernels.MAX_BYTES) is None


# A child of a fake release: checks it was seeded, builds a whole library, one that ld left half
# written and one under MLX's temporary name; "hang" also starts one more and is killed in it.
CHILD = """\
import os, sys, time
cpu = os.path.join(os.environ["TMPDIR"], "mlx", "9.9", "cpu")
assert os.path.samefile(os.path.join(cpu, "libwarm.so"), {warm!r}), "not seeded"
built = {{"libnew.so": {whole!r}, "libcut.so": {cut!r}, "tmp_1234.so": {whole!r}}}
if {hang}:
    built["libkilled.so"] = {cut!r}
for name, data in built.items():
    with open(os.path.join(cpu, name), "wb") as f:
        f.write(data)
print(os.environ["TMPDIR"])
sys.stdout.flush()
time.sleep(60 if {hang} else 0)
"""


def test_children_start_from_the_shared_kernels_and_merge_back_only_whole_new_ones(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "kernels"
    cpu = shared / "mlx" / "9.9" / "cpu"
    cpu.mkdir(parents=True)
    (cpu / "libwarm.so").write_bytes(elf())
    whole, cut = elf(kernel="new"), elf(header=False)
    code = partial(CHILD.format, warm=str(cpu / "libwarm.so"), whole=whole, cut=cut)
    command = ChildCommand(sys.executable, kernels=shared)
    runner = Runner(command, environment(), RunOptions(jobs=2), Silent())
    jobs = iter([Job("ok", code(hang=False), 30), Job("hang", code(hang=True), 2)])
    done: list[JobRun] = []
    assert runner.run_jobs(partial(next, jobs, None), done.append) is None
    runs = {d.job.id: d.run for d in done}
    assert runs["ok"].outcome is Outcome.PASS, runs["ok"].message
    assert runs["hang"].outcome is Outcome.TIMEOUT
    assert sorted(p.name for p in cpu.iterdir()) == ["libnew.so", "libwarm.so"]
    assert (cpu / "libnew.so").read_bytes() == whole
    tmpdir = Path(runs["ok"].stdout.strip())
    assert tmpdir.name.startswith("ok.tmp-") and not tmpdir.exists()  # its own, and removed


def test_a_library_built_on_another_filesystem_is_copied_beside_its_place_then_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared, private = tmp_path / "shared", tmp_path / "private"
    (shared / CPU).mkdir(parents=True)
    (shared / CPU / "libold.so").write_bytes(elf())
    assert kernels.seed(shared, private) == {os.path.join(CPU, "libold.so")}
    assert os.path.samefile(private / CPU / "libold.so", shared / CPU / "libold.so")
    (private / CPU / "libnew.so").write_bytes(elf(kernel="new"))
    rename = os.rename

    def across(source: str, target: str) -> None:
        if str(private) in source:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        rename(source, target)

    monkeypatch.setattr(os, "rename", across)
    assert kernels.publish(private, shared) == 1
    assert sorted(p.name for p in (shared / CPU).iterdir()) == ["libnew.so", "libold.so"]
    assert (shared / CPU / "libnew.so").read_bytes() == elf(kernel="new")


def test_what_was_seeded_is_not_looked_for_again_when_published(tmp_path: Path) -> None:
    """Every child of a warm cache is seeded with all of it: only what it built goes back."""
    shared, private = tmp_path / "shared", tmp_path / "private"
    (shared / CPU).mkdir(parents=True)
    (shared / CPU / "libold.so").write_bytes(elf())
    seeded = kernels.seed(shared, private)
    (private / CPU / "libnew.so").write_bytes(elf(kernel="new"))
    (shared / CPU / "libold.so").unlink()  # gone from the cache meanwhile: not put back
    assert kernels.publish(private, shared, seeded) == 1
    assert sorted(p.name for p in (shared / CPU).iterdir()) == ["libnew.so"]
