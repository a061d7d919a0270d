"""Which releases ``new`` runs a script on, what installing them costs, and the bisects that follow.

Installing every release is over a gigabyte, so ``new`` starts with the newest
release of each minor series (a range or exact releases, when given, are run
whole) and bisects, with the bisect driver of ``mgradcheck bisect``, only
between two releases where the outcome flips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import Version

from mgradcheck.corpus.entry import Entry
from mgradcheck.envs import venvs
from mgradcheck.index.installable import Listing
from mgradcheck.releases import bisect_releases
from mgradcheck.releases.bisection import Plan
from mgradcheck.releases.regress import RegressOn, State
from mgradcheck.releases.release_matrix import Flip, chosen_releases
from mgradcheck.releases.settings import Settings
from mgradcheck.run.display import Progress
from mgradcheck.wording import count


@dataclass(frozen=True)
class Chosen:
    """The releases a script may be judged on, and those run before any bisect."""

    listing: Listing
    versions: tuple[Version, ...]  # every candidate, oldest first: what a bisect may probe
    first: tuple[Version, ...]  # run on all of them first
    widened: bool  # a range or exact releases were given, so every candidate is run

    def cost(self, settings: Settings) -> str:
        """One sentence, said before anything is installed: how many installs, how large."""
        fresh = [
            v for v in self.first if venvs.needs_install(settings.spec(v), settings.retry_failed)
        ]
        sizes = [(r.size if (r := self.listing.get(v)) else None) for v in fresh]
        known = sum(s for s in sizes if s is not None)
        if not fresh:
            install = "all already installed, nothing to download"
        else:
            size = f"about {_bytes(known)}" if None not in sizes else "size not listed"
            if known and None in sizes:
                size = f"over {_bytes(known)}"
            install = f"{len(fresh)} to install ({size})"
            cached = len(self.first) - len(fresh)
            if cached:
                install += f", {cached} already installed (they cost nothing)"
        which = (
            "" if self.widened else " (the newest of each minor series; --versions RANGE for more)"
        )
        then = "" if self.widened else "; a bisect where the outcome flips installs a few more"
        return f"{count(len(self.first), 'release')}{which}: {install}{then}"


def _bytes(size: int) -> str:
    if size >= 10**9:
        return f"{size / 10**9:.1f} GB"
    if size >= 10**6:
        return f"{size / 10**6:.0f} MB"
    return f"{max(1, round(size / 10**3))} kB"


def newest_of_each_minor(versions: Sequence[Version]) -> tuple[Version, ...]:
    newest: dict[tuple[int, int], Version] = {}
    for version in versions:
        series = (version.major, version.minor)
        newest[series] = max(version, newest.get(series, version))
    return tuple(sorted(newest.values()))


def choose(settings: Settings, version_range: str | None, exact: Sequence[Version]) -> Chosen:
    listing, versions = chosen_releases(settings, version_range, exact)
    widened = bool(version_range or exact)
    first = tuple(versions) if widened else newest_of_each_minor(versions)
    return Chosen(listing, tuple(versions), first, widened)


def bisect_flips(
    entry: Entry,
    flips: Sequence[Flip],
    chosen: Chosen,
    settings: Settings,
    progress: Progress,
) -> set[Version]:
    """Bisect each flip that has unrun releases between its two sides; the releases probed.

    Every probe is stored under the entry's content hash, which the draft shares, so
    the caller reads the probes' runs from the store as it reads the first runs.
    """
    probed: set[Version] = set()
    for flip in flips:
        points = tuple(v for v in chosen.versions if flip.before <= v <= flip.after)
        if len(points) < 3:
            continue
        good, bad = (
            (flip.before, flip.after) if flip.now is State.BAD else (flip.after, flip.before)
        )
        progress.start(f"new: bisecting {entry.id} between {flip.before} and {flip.after}")
        try:
            result = bisect_releases.bisect(
                entry,
                Plan((good,), (bad,), points),
                settings,
                RegressOn.SIGNATURE,
                status=progress.status,
                on_probe=lambda p, left: progress.line(bisect_releases.probe_line(p, left)),
            )
        finally:
            progress.stop()
        probed.update(p.version for p in result.probes)
        if result.interrupted:
            break
    return probed
