"""Each child's own ``TMPDIR``, seeded with its release's compiled CPU kernels and merged back.

On the CPU backend MLX builds each new ``mx.compile`` graph once, with the
system's C++ compiler, into ``$TMPDIR/mlx/<version>/cpu/lib<kernel>.so``
(``$TMPDIR/lib<kernel>.so`` before 0.29), and takes a library that opens as
built: it writes ``<kernel>.cpp`` with ``O_TRUNC`` and runs ``g++ ... -o
lib<kernel>.so`` on the final name (mlx/backend/cpu/compiled.cpp, up to 0.32.1
at least). GNU ld creates that file first and writes its ELF header last, so a
second child of the same release sharing the directory can load a library
still being linked ("Could not load C++ shared library ...: file too short"),
or have its own removed and relinked under it. (0.32.4 links to a temporary
name and renames it; 0.26.1 to 0.32.1 do not.)

So no two children ever write in one kernel directory. Each gets a ``TMPDIR``
of its own, beside its working directory, whose tree holds hard links to the
libraries of the release's shared directory (a few milliseconds for hundreds);
once the child and all it started are dead, each library it built that is
whole (its ELF section headers and header written) is renamed into the shared
directory, where it appears at once and complete. Warm kernels are shared by
every later child and run, and only finished libraries are ever seen there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path

_MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce")


def _is_library(name: str) -> bool:
    # What MLX names its libraries (not its temporaries: 0.32.4 links to tmp_<hex>.so).
    return name.startswith("lib") and name.endswith(".so")


def libraries(root: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(directory relative to ``root``, entry) of every library file under it, links not followed."""
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(os.path.join(root, relative)) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(os.path.join(relative, entry.name))
                    elif _is_library(entry.name) and entry.is_file(follow_symlinks=False):
                        yield relative, entry
        except OSError:
            continue  # removed meanwhile, or not readable: nothing to take from it


def whole(path: str) -> bool:
    """Whether a library is all there: an ELF file whose header and section headers are written.

    GNU ld writes the ELF header last (the file starts with zeros until then) and the
    section header table at the end of the file. A Mach-O library counts as whole: Apple's
    linker writes it under a temporary name and renames it.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return False
    if head[:4] in _MACHO:
        return True
    if head[:4] != b"\x7fELF" or len(head) < 64 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return False
    order, wide = ("<" if head[5] == 1 else ">"), head[4] == 2  # EI_DATA, EI_CLASS
    table: int = struct.unpack_from(order + ("Q" if wide else "I"), head, 0x28 if wide else 0x20)[0]
    entry, count = struct.unpack_from(order + "HH", head, 0x3A if wide else 0x2E)
    return bool(count > 0 and table + entry * count <= size)


def seed(shared: Path, private: Path) -> set[str]:
    """Hard-link each library of ``shared`` into ``private`` at the same place; the paths
    linked, relative to both.

    Where a hard link cannot be made (another filesystem), a symbolic link is.
    """
    made: set[str] = set()
    linked: set[str] = set()
    for relative, entry in libraries(shared):
        where = os.path.join(private, relative)
        target = os.path.join(where, entry.name)
        try:
            if relative not in made:
                os.makedirs(where, exist_ok=True)
                made.add(relative)
            try:
                os.link(entry.path, target)
            except OSError:
                os.symlink(entry.path, target)
        except OSError:
            continue  # not seeded: the child builds it again if it needs it
        linked.add(os.path.join(relative, entry.name))
    return linked


def publish(private: Path, shared: Path, seeded: Collection[str] = ()) -> int:
    """Move each whole library of ``private`` that ``shared`` lacks into it; how many.

    ``seeded`` (what :func:`seed` linked) came from ``shared`` and is not looked for there
    again: one file system call a library, which every child of a warm cache paid. A rename makes
    the name appear with the whole file; across filesystems the file is copied beside its
    place first. A library that cannot be moved (a full disk) is left: it is built again
    when next needed.
    """
    moved = 0
    for relative, entry in libraries(private):
        if os.path.join(relative, entry.name) in seeded:
            continue
        target = os.path.join(shared, relative, entry.name)
        if os.path.lexists(target) or not whole(entry.path):
            continue  # seeded from there, or published meanwhile by another child; or cut short
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            try:
                os.rename(entry.path, target)
            except OSError:
                temporary = f"{target}.{os.urandom(4).hex()}.part"
                try:
                    shutil.copyfile(entry.path, temporary)
                    os.rename(temporary, target)
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(temporary)
        except OSError:
            continue
        moved += 1
    return moved


@contextlib.contextmanager
def own_tmpdir(shared: Path | None, workdir: Path) -> Iterator[dict[str, str]]:
    """The ``TMPDIR`` of the child working in ``workdir``, seeded from ``shared``; merged back
    into it and removed when the block ends (the child and what it started dead by then).
    Nothing when ``shared`` is None."""
    if shared is None:
        yield {}
        return
    try:
        workdir.parent.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix=f"{workdir.name}.tmp-", dir=workdir.parent))
    except OSError:  # a full disk: the child's own files fail next, and say so
        yield {"TMPDIR": str(shared)}
        return
    seeded: set[str] = set()
    try:
        seeded = seed(shared, private)
        yield {"TMPDIR": str(private)}
    finally:
        publish(private, shared, seeded)
        shutil.rmtree(private, ignore_errors=True)


__all__ = ["libraries", "own_tmpdir", "publish", "seed", "whole"]
