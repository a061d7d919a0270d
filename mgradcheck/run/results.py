"""The results of a run: one record per entry, and the report that holds them.

Every writer (terminal, JSON, JUnit, Markdown, badge) reads these objects and
nothing else. ``Report.to_json``/``from_json`` define the versioned JSON schema,
pinned by a contract test.

A result of a corpus entry carries a judgement (its verdict against the
corpus's expectation); a result of an upstream suite's test has none, and
reports show its outcome instead: a result's *standing* is its verdict when
judged, else its outcome. A test's JSON result has ``"verdict": null``, and
its report counts outcomes.
"""

from __future__ import annotations

import reprlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mgradcheck.outcomes import Outcome, Standing, Verdict
from mgradcheck.run.observation import Environment, Observation, typed_fields
from mgradcheck.run.verdict import Judgement, counts
from mgradcheck.wording import count, plural

SCHEMA = "mgradcheck-report"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class EntryResult:
    """Every run of one entry (or test) in one environment, and what they mean."""

    id: str
    title: str
    path: str
    runs: tuple[Observation, ...]
    judgement: Judgement | None  # None: a test of a suite, not judged against the corpus
    environment: Environment
    tags: tuple[str, ...] = ()
    signature: str = ""

    @property
    def verdict(self) -> Verdict:
        """The verdict of a corpus entry's result (a test's result has none: see ``standing``)."""
        if self.judgement is None:
            raise ValueError(f"{self.id} is a test's result, not judged against the corpus")
        return self.judgement.verdict

    @property
    def standing(self) -> Standing:
        """What the result means in reports: its verdict, or for a test its outcome."""
        return self.judgement.verdict if self.judgement is not None else self.outcome

    @property
    def reason(self) -> str:
        """Why it stands as it does: the judgement's reason, or the telling run's."""
        if self.judgement is not None:
            return self.judgement.reason
        run = next((r for r in self.runs if r.outcome is self.outcome), None)
        return run.reason if run is not None else ""

    @property
    def flaky(self) -> bool:
        """Whether its runs disagree, as :func:`mgradcheck.run.verdict.classify` judged; a suite's
        test runs once (its result has no judgement), so it never is."""
        return self.judgement is not None and self.judgement.flaky

    @property
    def outcome_text(self) -> str:
        return counts(self.runs) if self.runs else Outcome.NOT_RUN.label

    @property
    def outcome(self) -> Outcome:
        """The most telling outcome among the runs (a crash over a pass, say)."""
        if not self.runs:
            return Outcome.NOT_RUN
        return max((r.outcome for r in self.runs), key=lambda outcome: outcome.rank)

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
            **self._judgement_json(),
            "environment": self.environment.to_json(),
            "runs": [r.to_json() for r in self.runs],
        }

    def _judgement_json(self) -> dict[str, Any]:
        if self.judgement is not None:
            return self.judgement.to_json()
        return {"verdict": None, "reason": self.reason, "bug_expected": None, "flaky": self.flaky}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryResult:
        entry_id = data["id"]
        if not isinstance(entry_id, str):
            raise ValueError(f"a result's id: {reprlib.repr(entry_id)} is not a string")
        try:
            return cls._from_json(data)
        except ValueError as exc:
            raise ValueError(f"result {entry_id!r}: {exc}") from None

    @classmethod
    def _from_json(cls, data: dict[str, Any]) -> EntryResult:
        return cls(
            id=data["id"],
            title=data.get("title", ""),
            path=data.get("path", ""),
            runs=tuple(Observation.from_json(r) for r in data.get("runs", [])),
            judgement=Judgement.from_json(data) if data.get("verdict") is not None else None,
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

    @property
    def judged(self) -> bool:
        """Whether its results carry verdicts (a corpus run) or only outcomes (a suite's tests)."""
        return all(r.judgement is not None for r in self.results)

    @property
    def vocabulary(self) -> tuple[Standing, ...]:
        """What its results stand by, in display order: the verdicts, or the outcomes."""
        return tuple(Verdict) if self.judged else tuple(Outcome)

    @property
    def noun(self) -> str:
        """What one of its results is: an ``entry`` (a corpus run) or a ``test`` (a suite's)."""
        return "entry" if self.judged else "test"

    @property
    def nouns(self) -> str:
        return plural(2, self.noun)

    def tally(self) -> Counter[Standing]:
        return Counter(r.standing for r in self.results)

    def summary_line(self) -> str:
        tally = self.tally()
        parts = [f"{tally[v]} {v.label}" for v in self.vocabulary if tally[v]]
        text = ", ".join(parts) if parts else "nothing ran"
        return f"{count(len(self.results), self.noun)}: {text}" + (
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
            "counts": {v.label: tally[v] for v in self.vocabulary},
            "meta": self.meta,
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        schema = data.get("schema")
        if schema != SCHEMA:
            # Every command's JSON names its schema: a sweep's or a matrix's is refused by name.
            what = (
                f"a {schema.removeprefix('mgradcheck-')} report ({schema}), not a run's"
                if isinstance(schema, str) and schema.startswith("mgradcheck-")
                else "not an mgradcheck report (no 'schema: mgradcheck-report')"
            )
            raise ValueError(
                f"{what}; this takes the reports of run and tests (--json), merged or not"
            )
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"report schema version {version} is not {SCHEMA_VERSION}, the version this mgradcheck reads"
            )
        typed = typed_fields(cls, data)
        return cls(
            results=tuple(EntryResult.from_json(r) for r in data.get("results", [])),
            environments=tuple(Environment.from_json(e) for e in data.get("environments", [])),
            started=typed.get("started", ""),
            finished=typed.get("finished", ""),
            interrupted=bool(data.get("interrupted", False)),
            mgradcheck=typed.get("mgradcheck", ""),
            meta=dict(data.get("meta", {})),
        )
