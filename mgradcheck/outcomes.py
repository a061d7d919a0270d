"""The two vocabularies of a run: what a child did, and what that means.

Both are Enums in display order. Labels, failure flags, summary order, exit
codes and the JUnit mapping are all derived from these members, never
re-listed elsewhere.
"""

from __future__ import annotations

import enum
from typing import TypeAlias


class Outcome(enum.Enum):
    """What one run of a reproducer did, observed from outside the child.

    A run of an upstream suite's test (``mgradcheck tests``) has no
    expectation to be judged against: its outcome is what it means, and
    reports show the outcome where a corpus run shows a verdict. So each
    outcome also says what it means for a test, whether it fails a test
    run, its colour and its badge tone.
    """

    # label, meaning, and the JUnit element a failing verdict takes when this is the
    # entry's most telling outcome: a dead, hung or stopped child is an "error", the rest "failure";
    # then what it means for a test of a suite, whether it fails a test run, colour, badge tone,
    # and the mark a log's progress prints for a finished test (pytest's letters).
    # fmt: off
    PASS = ("pass", "every check held", "failure",
            "the test passed", False, "green", "green", ".")
    FAIL = ("fail", "a check failed: the bug reproduced", "failure",
            "an assertion failed (unittest's failure)", True, "red", "red", "F")
    CRASH = ("crash", "killed by a signal, or exited non-zero without a result", "error",
             "its interpreter died: killed by a signal, or exited without a result", True,
             "red", "red", "C")
    ERROR = ("error", "raised an exception other than a failed check", "failure",
             "raised another exception, or its fixture failed (unittest's error)", True,
             "magenta", "red", "E")
    TIMEOUT = ("timeout", "ran past its timeout; its process group was killed", "error",
               "ran past its timeout; its process group was killed", True, "yellow", "red", "T")
    SKIP = ("skip", "a requirement was not met", "failure",
            "skipped (a skip decorator, skipTest, pytest.skip), or an expected failure", False,
            "blue", "grey", "s")
    NOT_RUN = ("not run", "the run stopped before this entry finished", "error",
               "the run stopped before this test finished", True, "dim", "amber", "")
    # fmt: on

    def __init__(
        self,
        label: str,
        meaning: str,
        junit: str,
        test_meaning: str,
        is_failure: bool,
        colour: str,
        tone: str,
        mark: str,
    ) -> None:
        self.label = label
        self.meaning = meaning
        self.junit = junit
        self.test_meaning = test_meaning
        self.is_failure = is_failure
        self.colour = colour
        self.tone = tone
        self.mark = mark

    def junit_element(self, outcome: Outcome | None = None) -> str:
        """The JUnit child element of a test with this outcome: "" when it passed.

        ``outcome`` is unused: it is there so that a standing of either kind (this, or
        :meth:`Verdict.junit_element`) answers the same call.
        """
        if self is Outcome.PASS:
            return ""
        return "skipped" if self is Outcome.SKIP else self.junit

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
    # tone is the badge's traffic light (the worst tone among the results wins), and mark what a
    # log's progress prints for a finished entry (pytest's letters; R for a regression).
    # fmt: off
    REGRESSED = ("REGRESSED", True, "red", "a fixed bug is back",
                 "failure", "red", "R")
    UNEXPECTED = ("UNEXPECTED", True, "magenta", "misbehaves in a way the entry does not describe",
                  "failure", "red", "U")
    FIXED = ("FIXED", True, "yellow", "a bug expected here no longer reproduces",
             "failure", "amber", "X")
    AS_EXPECTED = ("as expected", False, "green", "bug present where open, absent where fixed",
                   "", "green", ".")
    SKIPPED = ("skipped", False, "blue", "a requirement was not met",
               "skipped", "grey", "s")
    NOT_RUN = ("not run", True, "dim", "the run stopped before this entry finished",
               "failure", "amber", "")
    # fmt: on

    def __init__(
        self,
        label: str,
        is_failure: bool,
        colour: str,
        meaning: str,
        junit: str,
        tone: str,
        mark: str,
    ) -> None:
        self.label = label
        self.is_failure = is_failure
        self.colour = colour
        self.meaning = meaning
        self.junit = junit
        self.tone = tone
        self.mark = mark

    def junit_element(self, outcome: Outcome) -> str:
        """The JUnit child element of a testcase with this verdict: "" when it passed."""
        return outcome.junit if self.junit == "failure" else self.junit

    @classmethod
    def from_label(cls, label: str) -> Verdict:
        for member in cls:
            if member.label == label:
                return member
        raise ValueError(f"unknown verdict {label!r}")


# What a result means in reports: its verdict when judged against the corpus, else its outcome.
Standing: TypeAlias = Verdict | Outcome


def counts_as_run(standing: Standing) -> bool:
    """Whether a result with this standing ran to an answer (not skipped, not stopped)."""
    return standing not in (Verdict.SKIPPED, Verdict.NOT_RUN, Outcome.SKIP, Outcome.NOT_RUN)


def is_success(standing: Standing) -> bool:
    """Whether this standing is the good one: as expected, or a test that passed."""
    return standing in (Verdict.AS_EXPECTED, Outcome.PASS)
