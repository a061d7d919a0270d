"""The two vocabularies of a run: what a child did, and what that means.

Both are Enums in display order. Labels, failure flags, summary order, exit
codes and the JUnit mapping are all derived from these members, never
re-listed elsewhere.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class OutcomeRow:
    label: str
    meaning: str
    # The JUnit element a failing verdict takes when this is the entry's most telling outcome:
    # a dead, hung or stopped child is an "error", the rest a "failure".
    junit: str
    test_meaning: str  # what it means for a test of a suite, which has no verdict
    is_failure: bool  # whether it fails a test run
    colour: str
    tone: str  # the badge's
    mark: str  # what a log's progress prints for a finished test (pytest's letters)
    # Among the differing outcomes of one entry's runs, the highest ranked is the entry's (ties,
    # a pass and a skip, go to the first run's).
    rank: int = 0
    reported: bool = False  # a child reports it in its result; the others are seen from outside
    verb: str = ""  # what a bug does when this is its outcome (a row of the corpus table)
    # Outcomes of one kin show one bug: a memory-unsafe bug crashes on one release and fails a
    # check on another. An outcome of no kin (a pass, a skip, a timeout) is not a misbehaviour.
    kin: str = ""


class Outcome(OutcomeRow, enum.Enum):
    """What one run of a reproducer did, observed from outside the child.

    A run of an upstream suite's test (``mgradcheck tests``) has no
    expectation to be judged against: its outcome is what it means, and
    reports show the outcome where a corpus run shows a verdict. So each
    outcome also says what it means for a test, whether it fails a test
    run, its colour and its badge tone.
    """

    # fmt: off
    PASS = OutcomeRow(label="pass", meaning="every check held", junit="failure",
                      test_meaning="the test passed", is_failure=False, colour="green",
                      tone="green", mark=".", reported=True)
    FAIL = OutcomeRow(label="fail", meaning="a check failed: the bug reproduced", junit="failure",
                      test_meaning="an assertion failed (unittest's failure)", is_failure=True,
                      colour="red", tone="red", mark="F", rank=1, reported=True, verb="fails",
                      kin="wrong")
    CRASH = OutcomeRow(label="crash", junit="error",
                       meaning="killed by a signal, or exited non-zero without a result",
                       test_meaning="its interpreter died: killed by a signal, or exited "
                       "without a result", is_failure=True, colour="red", tone="red", mark="C",
                       rank=4, verb="crashes", kin="wrong")
    ERROR = OutcomeRow(label="error", meaning="raised an exception other than a failed check",
                       junit="failure", test_meaning="raised another exception, or its fixture "
                       "failed (unittest's error)", is_failure=True, colour="magenta", tone="red",
                       mark="E", rank=2, reported=True, verb="raises", kin="raised")
    TIMEOUT = OutcomeRow(label="timeout", meaning="ran past its timeout; its process group was "
                         "killed", junit="error", test_meaning="ran past its timeout; its process "
                         "group was killed", is_failure=True, colour="yellow", tone="red", mark="T",
                         rank=3, verb="hangs")
    SKIP = OutcomeRow(label="skip", meaning="a requirement was not met", junit="failure",
                      test_meaning="skipped (a skip decorator, skipTest, pytest.skip), or an "
                      "expected failure", is_failure=False, colour="blue", tone="grey", mark="s",
                      reported=True)
    NOT_RUN = OutcomeRow(label="not run", meaning="the run stopped before this entry finished",
                         junit="error", test_meaning="the run stopped before this test finished",
                         is_failure=True, colour="dim", tone="amber", mark="", rank=5)
    # fmt: on

    def __new__(cls, row: OutcomeRow) -> Outcome:
        member = object.__new__(cls)
        member._value_ = row
        return member

    def __init__(self, row: OutcomeRow) -> None:
        for name, value in vars(row).items():  # a member reads as its row: Outcome.PASS.label
            object.__setattr__(self, name, value)

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
    def from_child(cls, status: str) -> Outcome:
        """The outcome a child reports as ``status`` in its result; any other status is an error."""
        return next((o for o in cls if o.reported and o.label == status), cls.ERROR)

    @classmethod
    def bug_outcomes(cls) -> tuple[Outcome, ...]:
        """The outcomes a corpus entry may name as its bug's signature."""
        return tuple(o for o in cls if o.verb)

    def kindred(self) -> tuple[Outcome, ...]:
        """The outcomes of this one's kin (none for an outcome that is not a misbehaviour)."""
        return tuple(o for o in Outcome if self.kin and o.kin == self.kin)


@dataclass(frozen=True)
class VerdictRow:
    label: str
    is_failure: bool
    colour: str  # the terminal's
    meaning: str
    junit: str  # "" (passed), "skipped" or "failure" (an "error" when the outcome says so)
    tone: str  # the badge's traffic light: the worst tone among the results wins
    mark: str  # what a log's progress prints for a finished entry (pytest's; R: a regression)


class Verdict(VerdictRow, enum.Enum):
    """What an outcome means against the corpus's expectation."""

    # fmt: off
    REGRESSED = VerdictRow(label="REGRESSED", is_failure=True, colour="red",
                           meaning="a fixed bug is back", junit="failure", tone="red", mark="R")
    UNEXPECTED = VerdictRow(label="UNEXPECTED", is_failure=True, colour="magenta",
                            meaning="misbehaves in a way the entry does not describe",
                            junit="failure", tone="red", mark="U")
    FIXED = VerdictRow(label="FIXED", is_failure=True, colour="yellow",
                       meaning="a bug expected here no longer reproduces", junit="failure",
                       tone="amber", mark="X")
    AS_EXPECTED = VerdictRow(label="as expected", is_failure=False, colour="green",
                             meaning="bug present where open, absent where fixed", junit="",
                             tone="green", mark=".")
    SKIPPED = VerdictRow(label="skipped", is_failure=False, colour="blue",
                         meaning="a requirement was not met", junit="skipped", tone="grey", mark="s")
    NOT_RUN = VerdictRow(label="not run", is_failure=True, colour="dim",
                         meaning="the run stopped before this entry finished", junit="failure",
                         tone="amber", mark="")
    # fmt: on

    def __new__(cls, row: VerdictRow) -> Verdict:
        member = object.__new__(cls)
        member._value_ = row
        return member

    def __init__(self, row: VerdictRow) -> None:
        for name, value in vars(row).items():  # a member reads as its row: Verdict.FIXED.label
            object.__setattr__(self, name, value)

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
