"""What each entry did on each release, kept on disk so that no release is run twice for it.

Keyed by the entry's content hash (so editing an entry's code invalidates its
results), the release, the backend, the platform, and the build of MLX that ran
(:mod:`mgradcheck.run.mlx_build`): a wheel built from a branch is not its version's
release, and neither one's runs answer for the other. One JSON file per key,
written atomically: bisect and matrix share it, and parallel writers never meet
on the same file for long enough to matter (the last complete write wins).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mgradcheck.atomic import write_text
from mgradcheck.clock import now
from mgradcheck.outcomes import Outcome
from mgradcheck.paths import cache_root, make_dir, safe_name
from mgradcheck.run.observation import Environment, Observation

SCHEMA = "mgradcheck-probe"
SCHEMA_VERSION = 2  # 2: the build is in the key; runs of 1 say not which build ran


class Runnable(Protocol):
    """What the store and the release machinery need of a thing they run: a corpus entry, a test."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def content_hash(self) -> str: ...


@dataclass(frozen=True)
class ProbeKey:
    content_hash: str
    release: str
    backend: str
    platform: str
    build: str  # which build of the release ran: mgradcheck.run.mlx_build.identity
    # What was installed beside it (--with), normalised and sorted: PyTensor's tests beside
    # MLX are not the release's plain runs, and a plain run of theirs says nothing of them.
    extras: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredRuns:
    """Every run of one entry on one release, and the environment they ran in."""

    key: ProbeKey
    entry_id: str
    runs: tuple[Observation, ...]
    environment: Environment
    recorded: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "entry": self.entry_id,
            "content_hash": self.key.content_hash,
            "release": self.key.release,
            "backend": self.key.backend,
            "platform": self.key.platform,
            "build": self.key.build,
            "with": list(self.key.extras),
            "recorded": self.recorded,
            "environment": self.environment.to_json(),
            "runs": [r.to_json() for r in self.runs],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredRuns:
        if data.get("schema") != SCHEMA or data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError("not a stored probe of this schema version")
        key = ProbeKey(
            data["content_hash"],
            data["release"],
            data["backend"],
            data["platform"],
            data["build"],
            tuple(data.get("with", ())),  # runs stored before --with had none
        )
        return cls(
            key=key,
            entry_id=data["entry"],
            runs=tuple(Observation.from_json(r) for r in data["runs"]),
            environment=Environment.from_json(data["environment"]),
            recorded=data.get("recorded", ""),
        )


def worth_keeping(runs: Sequence[Observation]) -> bool:
    """Runs that were stopped, or broke in our own code, say nothing about the release."""
    return bool(runs) and not any(r.outcome is Outcome.NOT_RUN or r.harness_error for r in runs)


class ResultsStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else cache_root() / "results"

    def path(self, key: ProbeKey) -> Path:
        name = f"{key.platform}-{key.backend}-{key.release}-{key.build}"
        if key.extras:  # only then, so that the plain runs keep their files
            name += "-with-" + hashlib.sha256("\n".join(key.extras).encode()).hexdigest()[:10]
        name = safe_name(name) + ".json"
        return self.root / safe_name(key.content_hash) / name

    def get(self, key: ProbeKey) -> StoredRuns | None:
        """The stored runs, or None when missing or unreadable (then the release is run again)."""
        try:
            stored = StoredRuns.from_json(json.loads(self.path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return stored if stored.key == key else None

    def put(self, stored: StoredRuns) -> bool:
        """Keep the runs if they say something about the release; return whether they were kept."""
        if not worth_keeping(stored.runs):
            return False
        if not stored.recorded:
            stored = StoredRuns(stored.key, stored.entry_id, stored.runs, stored.environment, now())
        path = self.path(stored.key)
        make_dir(path.parent)
        write_text(path, json.dumps(stored.to_json(), indent=1))
        return True
