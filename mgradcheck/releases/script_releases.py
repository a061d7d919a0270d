"""A script on releases, for ``new``: the releases it runs on, the bug its runs show, where it flips.

Installing every release is over a gigabyte, so ``new`` starts with the newest
release of each minor series (a range or exact releases, when given, are run
whole) and bisects, with the bisect driver of ``mgradcheck bisect``, only
between two releases where the outcome flips.

The bug's signature is pure: what the newest release that misbehaves did, its
outcome (with its kin: a memory-unsafe bug crashes on one release and fails a check
on another) and the words its messages share; an older release that misbehaves
otherwise (an API it lacks) is not taken for the bug.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import Version

from mgradcheck.corpus.entry import Bug, Entry
from mgradcheck.envs import venvs
from mgradcheck.index.installable import Listing
from mgradcheck.outcomes import Outcome
from mgradcheck.releases import bisect_releases
from mgradcheck.releases.bisection import Plan
from mgradcheck.releases.on_release import installed_build
from mgradcheck.releases.regress import RegressOn, State
from mgradcheck.releases.release_matrix import Flip, chosen_releases
from mgradcheck.releases.settings import Settings
from mgradcheck.run.display import Progress
from mgradcheck.run.observation import Observation
from mgradcheck.wording import count

MIN_MATCH = 8  # shorter shared text says nothing about the bug
MAX_MATCH = 80
FALLBACK = {Outcome.CRASH: "killed by SIG"}


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


def stored_runs(
    draft: Entry, versions: Sequence[Version], settings: Settings
) -> dict[Version, tuple[Observation, ...]]:
    """The runs behind each cell, from the store the matrix (and any bisect) fills."""
    runs: dict[Version, tuple[Observation, ...]] = {}
    for version in versions:
        build = installed_build(version, settings)
        stored = settings.store.get(settings.key(draft, version, build)) if build else None
        if stored is not None:
            runs[version] = stored.runs
    return runs


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


def _misbehaved(runs: Sequence[Observation]) -> Observation | None:
    return next((r for r in runs if r.outcome.kin), None)


def _shared_text(lines: Sequence[str]) -> str:
    """The head the lines share, cut back to a whole word when they differ after it."""
    first, last = min(lines), max(lines)  # the lines' shared head is these two's
    size = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    prefix = first[:size]
    if any(line != prefix for line in lines):
        prefix = re.sub(r"[\w.+-]*$", "", prefix)
    # The numbers a message shows (observed values, sizes) vary with the release and the
    # input; the words before them name the bug.
    number = re.search(r"(?<![\w.])[-+]?\.?\d", prefix)
    if number is not None and number.start() >= MIN_MATCH:
        prefix = prefix[: number.start()].rstrip(" [(,'\"")
    prefix = prefix.rstrip()
    if len(prefix) > MAX_MATCH:
        prefix = prefix[:MAX_MATCH].rsplit(" ", 1)[0]
    prefix = prefix.rstrip()
    return prefix if len(prefix) >= MIN_MATCH else ""


def _escape(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")  # spaces need no escape outside verbose mode


def _said(run: Observation) -> str:
    """The line of a run that ``match`` will find again: an error's last traceback line
    (``ValueError: ...``), else its message (a failed check's, or ``killed by SIGSEGV``)."""
    if run.outcome is Outcome.ERROR:
        return run.reason
    return run.message.strip().splitlines()[0] if run.message.strip() else ""


def signature(runs_by_release: Sequence[Sequence[Observation]]) -> Bug | None:
    """The bug as the newest misbehaving release shows it: its outcome (and its kin), and the
    text the messages of every such run share; None when no release misbehaves."""
    seen = [r for runs in runs_by_release if (r := _misbehaved(runs)) is not None]
    if not seen:
        return None
    newest = seen[-1]
    kin = [
        r
        for r in seen
        if r.outcome in newest.outcome.kindred()
        and (newest.outcome is not Outcome.ERROR or r.exc_type == newest.exc_type)
    ]
    outcomes = tuple(o for o in Outcome.bug_outcomes() if any(r.outcome is o for r in kin))
    parts = []
    for outcome in outcomes:
        text = _shared_text([_said(r) for r in kin if r.outcome is outcome])
        if text:
            parts.append(_escape(text))
        elif outcome in FALLBACK:
            parts.append(FALLBACK[outcome])
        elif outcome is Outcome.ERROR and newest.exc_type:
            parts.append(_escape(newest.exc_type))
        else:
            return Bug(outcomes)  # nothing shared to match on: the outcome alone
    return Bug(outcomes, "|".join(parts))


def boundaries(flips: Sequence[Flip]) -> tuple[Version | None, Version | None, str | None]:
    """(introduced_in, fixed_in, why neither can be told) from where the entry flips."""
    steps = [f.now for f in flips]
    if steps == [State.GOOD]:
        return None, flips[0].after, None
    if steps == [State.BAD]:
        return flips[0].after, None, None
    if steps == [State.BAD, State.GOOD]:
        return flips[0].after, flips[1].after, None
    if not steps:
        return None, None, None
    said = "; ".join(f.sentence() for f in flips)
    return None, None, f"the signature flips {len(flips)} times ({said}): flaky? set repeat"
