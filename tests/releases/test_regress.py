"""What counts as bad: each --regress-on value against each kind of run."""

from __future__ import annotations

import pytest

from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import RegressOn, State, judge
from mgradcheck.run.observation import Observation
from tests.fake_mlx import FIXTURES

(ENTRY,) = load([FIXTURES / "fixed-in-1-3.yaml"])  # bug: fail matching /broken before 1\.3/


def obs(outcome: Outcome, message: str = "", **kw: object) -> Observation:
    return Observation(outcome, 0.1, message=message, **kw)  # type: ignore[arg-type]


SIGNATURE = obs(Outcome.FAIL, "broken before 1.3 (this is 1.1.0)")
OTHER_FAIL = obs(Outcome.FAIL, "something else")
PASS = obs(Outcome.PASS)
CRASH = obs(Outcome.CRASH, "killed by SIGSEGV", signal="SIGSEGV")
TIMEOUT = obs(Outcome.TIMEOUT, "no result after 1s")


@pytest.mark.parametrize(
    ("how", "runs", "state"),
    [
        (RegressOn.SIGNATURE, [SIGNATURE], State.BAD),
        (RegressOn.SIGNATURE, [PASS, SIGNATURE], State.BAD),  # intermittent: one is enough
        (RegressOn.SIGNATURE, [PASS], State.GOOD),
        (RegressOn.SIGNATURE, [OTHER_FAIL], State.UNKNOWN),  # misbehaves, but not as asked
        (RegressOn.SIGNATURE, [TIMEOUT], State.UNKNOWN),
        (RegressOn.CRASH, [CRASH], State.BAD),
        (RegressOn.CRASH, [SIGNATURE], State.GOOD),
        (RegressOn.CRASH, [TIMEOUT], State.UNKNOWN),
        (RegressOn.NON_PASS, [OTHER_FAIL], State.BAD),
        (RegressOn.NON_PASS, [PASS, PASS], State.GOOD),
        (RegressOn.PASS, [PASS], State.BAD),
        (RegressOn.PASS, [SIGNATURE], State.GOOD),
        (RegressOn.PASS, [TIMEOUT], State.UNKNOWN),
    ],
)
def test_judge(how: RegressOn, runs: list[Observation], state: State) -> None:
    assert judge(ENTRY, runs, how)[0] is state


def test_match_searches_everything_the_run_left() -> None:
    assert (
        judge(
            ENTRY,
            [obs(Outcome.ERROR, "boom", stderr="libc++abi: terminating")],
            RegressOn.MATCH,
            "terminating",
        )[0]
        is State.BAD
    )
    assert judge(ENTRY, [PASS], RegressOn.MATCH, "terminating")[0] is State.GOOD
    with pytest.raises(ValueError):
        judge(ENTRY, [PASS], RegressOn.MATCH)


@pytest.mark.parametrize(
    "run",
    [
        obs(Outcome.ERROR, "broke", harness_error=True),
        obs(Outcome.NOT_RUN),
        obs(Outcome.SKIP, "needs float64"),
    ],
)
def test_runs_that_say_nothing_are_unknown(run: Observation) -> None:
    for how in RegressOn:
        assert judge(ENTRY, [run], how, "x")[0] is State.UNKNOWN


def test_the_values_document_themselves() -> None:
    epilog = RegressOn.epilog()
    for member in RegressOn:
        assert member.label in epilog and member.meaning in epilog
        assert RegressOn.from_label(member.label) is member
    assert "(default)" in epilog.splitlines()[2]
