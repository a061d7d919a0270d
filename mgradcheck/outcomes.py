"""The two vocabularies of a run: what a child did, and what that means.

Both are Enums in display order. Labels, failure flags, summary order, exit
codes and the JUnit mapping are all derived from these members, never
re-listed elsewhere.
"""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    """What one run of a reproducer did, observed from outside the child."""

    # label, meaning, and the JUnit element a failing verdict takes when this is the
    # entry's most telling outcome: a dead, hung or stopped child is an "error", the rest "failure".
    PASS = ("pass", "every check held", "failure")
    FAIL = ("fail", "a check failed: the bug reproduced", "failure")
    CRASH = ("crash", "killed by a signal, or exited non-zero without a result", "error")
    ERROR = ("error", "raised an exception other than a failed check", "failure")
    TIMEOUT = ("timeout", "ran past its timeout; its process group was killed", "error")
    SKIP = ("skip", "a requirement was not met", "failure")
    NOT_RUN = ("not run", "the run stopped before this entry finished", "error")

    def __init__(self, label: str, meaning: str, junit: str) -> None:
        self.label = label
        self.meaning = meaning
        self.junit = junit

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

    # label, is_failure, terminal colour, meaning; then how reports show it:
    # junit is "" (passed), "skipped" or "failure" (an "error" when the outcome says so),
    # tone is the badge's traffic light (the worst tone among the results wins).
    # fmt: off
    REGRESSED = ("REGRESSED", True, "red", "a fixed bug is back",
                 "failure", "red")
    UNEXPECTED = ("UNEXPECTED", True, "magenta", "misbehaves in a way the entry does not describe",
                  "failure", "red")
    FIXED = ("FIXED", True, "yellow", "a bug expected here no longer reproduces",
             "failure", "amber")
    AS_EXPECTED = ("as expected", False, "green", "bug present where open, absent where fixed",
                   "", "green")
    SKIPPED = ("skipped", False, "blue", "a requirement was not met",
               "skipped", "grey")
    NOT_RUN = ("not run", True, "dim", "the run stopped before this entry finished",
               "failure", "amber")
    # fmt: on

    def __init__(
        self, label: str, is_failure: bool, colour: str, meaning: str, junit: str, tone: str
    ) -> None:
        self.label = label
        self.is_failure = is_failure
        self.colour = colour
        self.meaning = meaning
        self.junit = junit
        self.tone = tone

    def junit_element(self, outcome: Outcome) -> str:
        """The JUnit child element of a testcase with this verdict: "" when it passed."""
        return outcome.junit if self.junit == "failure" else self.junit

    @classmethod
    def from_label(cls, label: str) -> Verdict:
        for member in cls:
            if member.label == label:
                return member
        raise ValueError(f"unknown verdict {label!r}")
