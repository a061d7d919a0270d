"""The two vocabularies of a run: what a child did, and what that means.

Both are Enums in display order. Labels, failure flags, summary order, exit
codes and the JUnit mapping are all derived from these members, never
re-listed elsewhere.
"""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    """What one run of a reproducer did, observed from outside the child."""

    PASS = ("pass", "every check held")
    FAIL = ("fail", "a check failed: the bug reproduced")
    CRASH = ("crash", "killed by a signal, or exited non-zero without a result")
    ERROR = ("error", "raised an exception other than a failed check")
    TIMEOUT = ("timeout", "ran past its timeout; its process group was killed")
    SKIP = ("skip", "a requirement was not met")
    NOT_RUN = ("not run", "the run stopped before this entry finished")

    def __init__(self, label: str, meaning: str) -> None:
        self.label = label
        self.meaning = meaning

    @classmethod
    def from_label(cls, label: str) -> Outcome:
        for member in cls:
            if member.label == label:
                return member
        raise ValueError(f"unknown outcome {label!r}")

    @classmethod
    def bug_outcomes(cls) -> tuple[Outcome, ...]:
        """The outcomes a corpus entry may name as its bug's signature."""
        return (cls.FAIL, cls.CRASH, cls.ERROR, cls.TIMEOUT)


class Verdict(enum.Enum):
    """What an outcome means against the corpus's expectation."""

    REGRESSED = ("REGRESSED", True, "red", "a fixed bug is back")
    UNEXPECTED = ("UNEXPECTED", True, "magenta", "misbehaves in a way the entry does not describe")
    FIXED = ("FIXED", True, "yellow", "a bug expected here no longer reproduces")
    AS_EXPECTED = ("as expected", False, "green", "bug present where open, absent where fixed")
    SKIPPED = ("skipped", False, "blue", "a requirement was not met")
    NOT_RUN = ("not run", True, "dim", "the run stopped before this entry finished")

    def __init__(self, label: str, is_failure: bool, colour: str, meaning: str) -> None:
        self.label = label
        self.is_failure = is_failure
        self.colour = colour
        self.meaning = meaning

    @classmethod
    def from_label(cls, label: str) -> Verdict:
        for member in cls:
            if member.label == label:
                return member
        raise ValueError(f"unknown verdict {label!r}")
