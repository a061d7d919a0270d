"""A corpus entry, as validated, and what it expects of a given MLX release."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from mgradcheck.backends import FAMILIES
from mgradcheck.outcomes import Outcome
from mgradcheck.upstream import commit_url, short

if TYPE_CHECKING:  # a type only: packaging.specifiers costs every command line's start-up
    from packaging.specifiers import SpecifierSet

BACKENDS = FAMILIES  # the backends an entry may name: their families, read from here


@dataclass(frozen=True)
class Upstream:
    report: str | None  # None only for a bug found here and not reported yet (see FoundBy)
    fix: str | None = None
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class FoundBy:
    """A bug found by this project (the sweep, by hand) before anyone reported it upstream."""

    tool: str
    mlx: str
    date: str
    backend: str | None = None
    case: str | None = None

    def describe(self) -> str:
        on = f" ({self.backend})" if self.backend else ""
        case = f", case {self.case}" if self.case else ""
        return f"found by {self.tool} on mlx {self.mlx}{on}, {self.date}{case}"


@dataclass(frozen=True)
class Change:
    """The commit of MLX that fixed (or introduced) a bug, and its pull request: from a
    ``bisect --commits`` whose answer was checked against the commit's diff."""

    commit: str  # a hash, 7 to 40 hex digits (the full one is best: links use it)
    pr: int | None = None

    @property
    def url(self) -> str:
        return commit_url(self.commit)

    def describe(self) -> str:
        pull = f" (pull request #{self.pr})" if self.pr is not None else ""
        return f"{short(self.commit)}{pull}"


@dataclass(frozen=True)
class Bug:
    """What the bug looks like when present, and on which releases it lives."""

    outcomes: tuple[Outcome, ...]
    match: str | None = None
    affects: tuple[str, ...] = BACKENDS
    fixed_in: Mapping[str, Version | None] = field(default_factory=dict)
    introduced_in: Mapping[str, Version | None] = field(default_factory=dict)
    reported_on: tuple[str, ...] = ()
    fixed_by: Change | None = None
    introduced_by: Change | None = None

    def signature_label(self) -> str:
        text = " or ".join(o.label for o in self.outcomes)
        return f"{text} matching /{self.match}/" if self.match else text

    def expectation(self, backend: str) -> str:
        """What the corpus expects on ``backend``, in a few words: ``fixed in 0.32.0``, ``not on cpu``."""
        if not self.affects:
            return "guard"
        if backend not in self.affects:
            return f"not on {backend}"
        start, end = self.introduced_in.get(backend), self.fixed_in.get(backend)
        if end is not None:
            return f"since {start}, fixed in {end}" if start is not None else f"fixed in {end}"
        return f"open since {start}" if start is not None else "open"

    def expected(self, mlx: Version, backend: str) -> bool:
        """Whether the bug should reproduce on this release and backend."""
        if backend not in self.affects:
            return False
        start = self.introduced_in.get(backend)
        end = self.fixed_in.get(backend)
        release = Version(mlx.base_version)  # a dev build of 0.32.0 counts as 0.32.0
        if start is not None and release < start:
            return False
        return end is None or release < end


@dataclass(frozen=True)
class Requirements:
    backends: tuple[str, ...] | None = None
    mlx: SpecifierSet | None = None
    float64: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "backends": list(self.backends) if self.backends is not None else None,
            "mlx": str(self.mlx) if self.mlx is not None else None,
            "float64": self.float64,
        }


@dataclass(frozen=True)
class Evidence:
    mlx: str
    backend: str
    outcome: str
    note: str = ""


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    summary: str
    upstream: Upstream
    bug: Bug
    path: str
    line: int
    origin: str | None = None
    tags: tuple[str, ...] = ()
    requires: Requirements = Requirements()
    timeout: float = 60.0
    repeat: int = 1
    code: str | None = None
    code_line: int = 1
    gradcheck: Mapping[str, Any] | None = None
    evidence: tuple[Evidence, ...] = ()
    notes: str = ""
    found_by: FoundBy | None = None

    @property
    def uses_compile(self) -> bool:
        """Whether running this entry may build ``mx.compile`` kernels (a guess from its text)."""
        if self.gradcheck is not None:
            return "compile" in self.gradcheck.get("checks", ("compile",))
        return "compile" in (self.code or "")

    def child_spec(self) -> dict[str, Any]:
        """What the child needs to run this entry: plain JSON, no mgradcheck types."""
        return {
            "id": self.id,
            "path": self.path,
            "code": self.code,
            "code_line": self.code_line,
            "gradcheck": dict(self.gradcheck) if self.gradcheck is not None else None,
            "requires": self.requires.to_json(),
        }

    @property
    def content_hash(self) -> str:
        """A hash of everything that changes what a run of this entry observes."""
        spec = self.child_spec()
        del spec["path"], spec["code_line"]
        spec["timeout"] = self.timeout
        spec["repeat"] = self.repeat
        blob = json.dumps(spec, sort_keys=True).encode()
        import hashlib  # only the results store asks; --help and list load no OpenSSL

        return hashlib.sha256(blob).hexdigest()[:16]
