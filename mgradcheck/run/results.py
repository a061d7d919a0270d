"""The results of a run: one record per entry, and the report that holds them.

Every writer (terminal, JSON, JUnit, Markdown, badge) reads these objects and
nothing else. ``Report.to_json``/``from_json`` define the versioned JSON schema,
pinned by a contract test.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.outcomes import Outcome, Verdict
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.verdict import Judgement, counts
from mgradcheck.wording import count

SCHEMA = "mgradcheck-report"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class EntryResult:
    """Every run of one entry in one environment, and what they mean."""

    id: str
    title: str
    path: str
    runs: tuple[Observation, ...]
    judgement: Judgement
    environment: Environment
    tags: tuple[str, ...] = ()
    signature: str = ""

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict

    @property
    def outcome_text(self) -> str:
        return counts(self.runs) if self.runs else Outcome.NOT_RUN.label

    @property
    def outcome(self) -> Outcome:
        """The most telling outcome among the runs (a crash over a pass, say)."""
        if not self.runs:
            return Outcome.NOT_RUN
        seen = {r.outcome for r in self.runs}
        for candidate in (
            Outcome.NOT_RUN,
            Outcome.CRASH,
            Outcome.TIMEOUT,
            Outcome.ERROR,
            Outcome.FAIL,
        ):
            if candidate in seen:
                return candidate
        return self.runs[0].outcome

    @property
    def duration(self) -> float:
        return sum(r.duration for r in self.runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "tags": list(self.tags),
            "signature": self.signature,
            "outcome": self.outcome.label,
            "outcomes": self.outcome_text,
            "duration": round(self.duration, 4),
            **self.judgement.to_json(),
            "environment": self.environment.to_json(),
            "runs": [r.to_json() for r in self.runs],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryResult:
        return cls(
            id=data["id"],
            title=data.get("title", ""),
            path=data.get("path", ""),
            runs=tuple(Observation.from_json(r) for r in data.get("runs", [])),
            judgement=Judgement.from_json(data),
            environment=Environment.from_json(data["environment"]),
            tags=tuple(data.get("tags", [])),
            signature=data.get("signature", ""),
        )


@dataclass(frozen=True)
class Report:
    """A whole run (or a merge of runs): its results and how it ended."""

    results: tuple[EntryResult, ...]
    environments: tuple[Environment, ...]
    started: str
    finished: str
    interrupted: bool = False
    mgradcheck: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def tally(self) -> Counter[Verdict]:
        return Counter(r.verdict for r in self.results)

    def summary_line(self) -> str:
        tally = self.tally()
        parts = [f"{tally[v]} {v.label}" for v in Verdict if tally[v]]
        text = ", ".join(parts) if parts else "nothing ran"
        return f"{count(len(self.results), 'entry')}: {text}" + (
            " (interrupted)" if self.interrupted else ""
        )

    def to_json(self) -> dict[str, Any]:
        tally = self.tally()
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "mgradcheck": self.mgradcheck,
            "started": self.started,
            "finished": self.finished,
            "interrupted": self.interrupted,
            "environments": [e.to_json() for e in self.environments],
            "counts": {v.label: tally[v] for v in Verdict},
            "meta": self.meta,
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        if data.get("schema") != SCHEMA:
            raise ValueError("not an mgradcheck report (no 'schema: mgradcheck-report')")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"report schema version {version} is not {SCHEMA_VERSION}, the version this mgradcheck reads"
            )
        return cls(
            results=tuple(EntryResult.from_json(r) for r in data.get("results", [])),
            environments=tuple(Environment.from_json(e) for e in data.get("environments", [])),
            started=data.get("started", ""),
            finished=data.get("finished", ""),
            interrupted=bool(data.get("interrupted", False)),
            mgradcheck=data.get("mgradcheck", ""),
            meta=dict(data.get("meta", {})),
        )
