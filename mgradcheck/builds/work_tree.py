"""An MLX work tree built as it stands: its commit, plus the changes not yet committed.

``--mlx PATH`` names a directory holding a clone of MLX with a patch in it,
committed or not. What is built is the commit checked out there (``HEAD``),
with the tracked files' changes (``git diff HEAD --binary``, staged or not)
and the untracked files git does not ignore laid over it. Its wheel is kept
in the cache under a key of its own, the commit's hash and a digest of those
changes, so that two patches never share a wheel and a patch never takes a
clean commit's; a clean tree is its commit, and shares that commit's wheel.

The diff is read once: the bytes hashed are the bytes applied. An untracked
file is hashed when read and again when copied, and a file edited in between
stops the build rather than give a wheel whose key does not describe it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.builds.sources import GitError, git, git_bytes, git_dir
from mgradcheck.errors import UsageError
from mgradcheck.upstream import short

# A diff every git applies whatever the user's configuration says of prefixes, colours,
# external diff tools, text conversion or rename detection.
DIFF = (
    "diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
    "--src-prefix=a/", "--dst-prefix=b/", "--ignore-submodules", "--",
)  # fmt: skip
KEY_DIGITS = 16  # of the changes' digest, in the key: wheels/<target>/<sha>-<digest>


@dataclass(frozen=True)
class Snapshot:
    """What a work tree holds now: its commit and its uncommitted changes."""

    path: Path  # the work tree's top directory
    repo: Path  # its git directory
    head: str
    diff: bytes  # the tracked files' changes, as ``git apply`` takes them
    untracked: tuple[tuple[str, str], ...]  # (path, sha256 of its content), sorted

    @property
    def clean(self) -> bool:
        return not self.diff and not self.untracked

    @property
    def changes(self) -> str:
        """The sha256 of the changes ("" for a clean tree)."""
        if self.clean:
            return ""
        digest = hashlib.sha256(b"diff\0" + self.diff + b"\0untracked\0")
        for name, content in self.untracked:
            digest.update(os.fsencode(name) + b"\0" + content.encode() + b"\n")
        return digest.hexdigest()

    @property
    def key(self) -> str:
        """Its wheel's key in the cache: the commit's hash, and a digest of any changes."""
        return self.head if self.clean else f"{self.head}-{self.changes[:KEY_DIGITS]}"

    def describe(self) -> str:
        if self.clean:
            return f"{self.path} at {short(self.head)}"
        return f"{self.path} at {short(self.head)} with its uncommitted changes"


def _digest(path: Path) -> str:
    """The sha256 of a file's content (of its target's name, for a symbolic link)."""
    if path.is_symlink():
        return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot(path: Path) -> Snapshot:
    """The work tree at ``path`` as it stands; UsageError when it is none."""
    top = path.expanduser().resolve()
    if not (top / ".git").exists():
        raise UsageError(f"--mlx {path}: not the top of a git work tree (no .git in it)")
    repo = git_dir(top)
    try:
        head = git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except GitError:
        raise UsageError(f"--mlx {path}: the work tree has no commit checked out") from None
    diff = git_bytes(repo, *DIFF, work_tree=top)
    listed = git_bytes(repo, "ls-files", "--others", "--exclude-standard", "-z", work_tree=top)
    names = sorted(os.fsdecode(n) for n in listed.split(b"\0") if n)
    untracked = tuple((name, _digest(top / name)) for name in names)
    return Snapshot(top, repo, head, diff, untracked)


def apply(tree: Snapshot, src: Path) -> None:
    """Lay ``tree``'s changes over ``src``, a clean checkout of ``tree.head``."""
    if tree.diff:
        patch = src.parent / "work-tree.diff"
        patch.write_bytes(tree.diff)
        try:
            git(src / ".git", "apply", "--binary", "--whitespace=nowarn", str(patch), work_tree=src)
        finally:
            patch.unlink(missing_ok=True)
    for name, digest in tree.untracked:
        source, dest = tree.path / name, src / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.unlink(missing_ok=True)
        try:
            if source.is_symlink():
                dest.symlink_to(os.readlink(source))
            else:
                dest.write_bytes(source.read_bytes())
        except OSError as exc:
            raise UsageError(f"--mlx {tree.path}: cannot copy {name}: {exc.strerror}") from None
        if _digest(dest) != digest:
            raise UsageError(
                f"--mlx {tree.path}: {name} changed while the build copied it; build again"
            )


__all__ = ["KEY_DIGITS", "Snapshot", "apply", "snapshot"]
