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

What an entry does in its ``TMPDIR`` must not reach later runs. Only what MLX
itself builds goes back: a library where MLX puts them, named ``lib<kernel>.so``,
that defines its kernel's function, whole, not one the child was seeded with, and
no more than :data:`MAX_LIBRARIES` and :data:`MAX_BYTES` a child. A seeded
library is a hard link to the shared file itself: one written during the child
(its modification time after the seeding) is taken out of the shared directory,
and built again by whoever next needs it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import struct
import tempfile
import time
from collections.abc import Collection, Iterator
from pathlib import Path

# A sweep's child runs 96 cases of a few kernels each, some 15 KB apiece; ten times that is
# no MLX's doing, and every later child would pay to be seeded with it (a hard link each).
MAX_LIBRARIES = 1024
MAX_BYTES = 64 << 20

_MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce")
_ET_DYN = 3
# What MLX names its libraries: lib<kernel>.so, the kernel's name being its function's (not
# its temporaries: 0.32.4 links to tmp_<hex>.so).
_LIBRARY = re.compile(r"lib([A-Za-z0-9_]+)\.so")


def _kernel(name: str) -> str | None:
    found = _LIBRARY.fullmatch(name)
    return found.group(1) if found else None


def _places(root: Path) -> Iterator[str]:
    """Where MLX puts its libraries, relative to its ``TMPDIR``: ``mlx/<version>/cpu`` (0.29
    on), and the ``TMPDIR`` itself before."""
    yield ""
    with contextlib.suppress(OSError), os.scandir(os.path.join(root, "mlx")) as versions:
        for version in versions:
            if version.is_dir(follow_symlinks=False):
                yield os.path.join("mlx", version.name, "cpu")


def libraries(root: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(directory relative to ``root``, entry) of every library file where MLX puts them,
    links not followed."""
    for relative in _places(root):
        try:
            with os.scandir(os.path.join(root, relative)) as entries:
                for entry in entries:
                    if _kernel(entry.name) and entry.is_file(follow_symlinks=False):
                        yield relative, entry
        except OSError:
            continue  # missing, removed meanwhile, or not readable: nothing to take from it


def _whole(head: bytes, size: int) -> bool:
    """Whether a library of ``size`` bytes that starts with ``head`` is all there: an ELF
    shared object whose header and section headers are written.

    GNU ld writes the ELF header last (the file starts with zeros until then) and the
    section header table at the end of the file. A Mach-O library counts as whole: Apple's
    linker writes it under a temporary name and renames it.
    """
    if head[:4] in _MACHO:
        return True
    if head[:4] != b"\x7fELF" or len(head) < 64 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return False
    order, wide = ("<" if head[5] == 1 else ">"), head[4] == 2  # EI_DATA, EI_CLASS
    (kind,) = struct.unpack_from(order + "H", head, 0x10)
    table: int = struct.unpack_from(order + ("Q" if wide else "I"), head, 0x28 if wide else 0x20)[0]
    entry, count = struct.unpack_from(order + "HH", head, 0x3A if wide else 0x2E)
    return bool(kind == _ET_DYN and count > 0 and table + entry * count <= size)


def built_kernel(path: str, kernel: str, limit: int) -> int | None:
    """The size of the library at ``path`` if it is whole, at most ``limit`` bytes, and
    defines the function ``kernel`` (MLX looks it up by that name); else None.

    A library copied or renamed to another kernel's name lacks that name's function: MLX
    would load it and fail to find it, in every later run.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(limit + 1) if size <= limit else b""
    except OSError:
        return None
    if not data or len(data) != size or not _whole(data[:64], size):
        return None
    name = kernel.encode()
    # A NUL-separated string table: ELF's .dynstr holds the name as is, Mach-O's with a "_".
    defined = b"\0" + name + b"\0" in data or b"\0_" + name + b"\0" in data
    return size if defined else None


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


def forget_rewritten(shared: Path, seeded: Collection[str], since: int) -> int:
    """Remove from ``shared`` each seeded library written after ``since`` (ns since the epoch,
    taken before seeding); how many.

    Nothing writes a published library: MLX only builds one that is missing, and the
    rename that publishes it keeps its time. So a later time is a child writing through
    its link into the shared file itself. One ``stat`` a seeded library: a few microseconds.
    """
    removed = 0
    for relative in seeded:
        target = os.path.join(shared, relative)
        try:
            if os.stat(target).st_mtime_ns > since:
                os.unlink(target)
                removed += 1
        except OSError:
            continue  # gone already
    return removed


def publish(private: Path, shared: Path, seeded: Collection[str] = ()) -> int:
    """Move each library of ``private`` that MLX built there and ``shared`` lacks into it,
    up to :data:`MAX_LIBRARIES` and :data:`MAX_BYTES`; how many.

    ``seeded`` (what :func:`seed` linked) came from ``shared`` and never goes back: not
    looked for there again (one file system call a library, which every child of a warm cache
    paid), and not taken from another name it was renamed to (it lacks that name's function).
    A rename makes the name appear with the whole file; across filesystems the file is
    copied beside its place first. A library that cannot be moved (a full disk) is left: it
    is built again when next needed.
    """
    moved = budget = 0
    for relative, entry in libraries(private):
        kernel = _kernel(entry.name)
        if kernel is None or os.path.join(relative, entry.name) in seeded:
            continue
        if moved >= MAX_LIBRARIES:
            break
        target = os.path.join(shared, relative, entry.name)
        if os.path.lexists(target):
            continue  # published meanwhile by another child
        size = built_kernel(entry.path, kernel, MAX_BYTES - budget)
        if size is None:
            continue  # cut short, too big for what is left, or not that kernel's library
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
        budget += size
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
    since = time.time_ns()
    try:
        seeded = seed(shared, private)
        yield {"TMPDIR": str(private)}
    finally:
        forget_rewritten(shared, seeded, since)
        publish(private, shared, seeded)
        shutil.rmtree(private, ignore_errors=True)


__all__ = [
    "MAX_BYTES",
    "MAX_LIBRARIES",
    "built_kernel",
    "forget_rewritten",
    "libraries",
    "own_tmpdir",
    "publish",
    "seed",
]
