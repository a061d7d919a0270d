"""Batches of items per child: a dead child's culprit re-run alone, the rest batched again."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from mgradcheck.outcomes import Outcome
from mgradcheck.run.batches import BatchRunner, Finished, read_log
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.runner import Runner
from tests.conftest import environment

# What each item does in its child: "ok" finishes; "crash" kills the child after its start
# line; "early" kills it before writing anything (as a module that crashes on import would).
CODE = """\
import json, os, signal
with open(__mgradcheck_log__, "a") as log:
    for k, what in enumerate({behaviours!r}):
        if what == "early":
            os.kill(os.getpid(), signal.SIGSEGV)
        log.write(json.dumps({{"event": "start", "item": k}}) + "\\n"); log.flush()
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        log.write(json.dumps({{"event": "done", "item": k, "what": what}}) + "\\n"); log.flush()
"""


def run(behaviours: Sequence[str], size: int, group: Sequence[str] | None = None) -> list[Finished]:
    def code(items: Sequence[int]) -> str:
        if group is not None:
            assert len({group[i] for i in items}) == 1, "a batch mixed two groups"
        return CODE.format(behaviours=[behaviours[i] for i in items])

    finished: list[Finished] = []
    command = ChildCommand(sys.executable)
    runner = BatchRunner(command, environment(), code, 60, 2, size, group=group)
    assert runner.run(len(behaviours), finished.append) is None
    assert sorted(f.index for f in finished) == list(range(len(behaviours)))  # each exactly once
    return sorted(finished, key=lambda f: f.index)


def test_a_crash_in_a_batch_is_named_by_its_run_alone() -> None:
    items = run(["ok", "ok", "crash", "ok", "ok"], size=5)
    assert [(f.alone, f.line is not None) for f in items] == [
        (False, True),
        (False, True),
        (True, False),  # re-run alone: its own child's crash
        (False, True),  # the two after it, batched again
        (False, True),
    ]
    culprit = items[2]
    assert culprit.run.outcome is Outcome.CRASH and culprit.run.signal == "SIGSEGV"
    assert "ended (SIGSEGV) while it ran" in culprit.note


def test_a_child_that_dies_before_any_start_charges_the_first_item() -> None:
    items = run(["early", "ok", "ok"], size=3)
    assert items[0].alone and items[0].run.outcome is Outcome.CRASH
    assert "before it started" in items[0].note
    assert all(f.line is not None and not f.alone for f in items[1:])


def test_one_item_per_child_keeps_each_childs_observation() -> None:
    items = run(["ok", "crash", "ok"], size=1)
    assert all(f.alone for f in items)
    assert [f.run.outcome for f in items] == [Outcome.PASS, Outcome.CRASH, Outcome.PASS]
    assert items[1].note == ""


def test_groups_never_share_a_child() -> None:
    run(["ok"] * 5, size=4, group=["a", "a", "b", "b", "b"])


@pytest.mark.parametrize("text", ['{"event": "start", "item": 0}\n{"event": "done", "it', ""])
def test_a_log_cut_short_is_read_up_to_the_cut(tmp_path: Path, text: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(text)
    done, started = read_log(path)
    assert done == {} and started == ({0} if text else set())
    assert read_log(tmp_path / "missing.jsonl") == ({}, set())


def test_a_log_is_read_as_untrusted_as_a_result(tmp_path: Path) -> None:
    """The child names nothing the parent reads through: a link, a FIFO, a flood are no log."""
    real = tmp_path / "real.jsonl"
    real.write_text('{"event": "done", "item": 0, "status": "pass"}\n')
    (tmp_path / "link.jsonl").symlink_to(real)
    os.mkfifo(tmp_path / "fifo.jsonl")  # opened for reading alone, it would block the run
    for name in ("link.jsonl", "fifo.jsonl"):
        assert read_log(tmp_path / name) == ({}, set())
    assert read_log(real, limit=10) == ({}, set())
    assert read_log(real)[0] == {0: {"event": "done", "item": 0, "status": "pass"}}


def test_a_hang_in_a_batch_costs_one_items_timeout_before_it_runs_alone() -> None:
    """A batch's child gets each item's timeout in turn (through its log), not the batch's."""
    hangs = 'import time\nwith open(__mgradcheck_log__, "a") as log:\n    log.write(\'{"event": "start", "item": 0}\\n\')\ntime.sleep(600)\n'
    code = CODE.format(behaviours=["ok"] * 3)

    def batch(items: Sequence[int]) -> str:
        return hangs if items[0] == 0 else code  # the hang first: the rest wait behind it

    finished: list[Finished] = []
    runner = BatchRunner(ChildCommand(sys.executable), environment(), batch, 2.0, 1, size=4)
    started = time.monotonic()
    assert runner.run(4, finished.append) is None
    elapsed = time.monotonic() - started
    hung = next(f for f in finished if f.index == 0)
    assert hung.alone and hung.run.outcome is Outcome.TIMEOUT
    assert "its log did not grow for 2s" in hung.note  # why its batch was ended
    assert sorted(f.index for f in finished) == [0, 1, 2, 3]
    assert elapsed < 4 * 2.0, elapsed  # the batch's timeout, which a hang used to cost first


SIBLING = """\
import json, os, time
for k, what in enumerate({behaviours!r}):
    with open(__mgradcheck_log__, "a") as log:
        log.write(json.dumps({{"event": "start", "item": k}}) + "\\n")
    if what == "forge":  # every file around its own directory, again and again
        forged = "".join(json.dumps({{"event": "done", "item": i, "what": "forged"}}) + "\\n" for i in range(9))
        end = time.monotonic() + 3
        while time.monotonic() < end:
            for top, _, files in os.walk("../.."):
                for name in files:
                    try:
                        with open(os.path.join(top, name), "w") as f:
                            f.write(forged)
                    except OSError:
                        pass
            time.sleep(0.005)
    if what == "slow":
        time.sleep(1)
    with open(__mgradcheck_log__, "a") as log:
        log.write(json.dumps({{"event": "done", "item": k, "what": what}}) + "\\n")
"""


def test_a_batch_child_cannot_rewrite_a_siblings_log(tmp_path: Path) -> None:
    """A log is a file with no name: a child that rewrites every file it can reach from its
    own directory (where logs used to be: ../../batch-N.jsonl) changes no sibling's lines."""
    behaviours = ["forge", "slow", "slow"]

    def code(items: Sequence[int]) -> str:
        return SIBLING.format(behaviours=[behaviours[i] for i in items])

    finished: list[Finished] = []
    group = ["forger", "sibling", "sibling"]
    command = ChildCommand(sys.executable)
    runner = BatchRunner(command, environment(), code, 60, 2, 2, scratch=tmp_path, group=group)
    assert runner.run(len(behaviours), finished.append) is None
    lines = {f.index: f.line for f in finished}
    assert lines[1] is not None and lines[1]["what"] == "slow", lines
    assert lines[2] is not None and lines[2]["what"] == "slow", lines


STOPPED = """\
import time
with open(__mgradcheck_log__, "a") as log:
    log.write('{"event": "start", "item": 0}\\n{"event": "done", "item": 0}\\n')
    log.write('{"event": "start", "item": 1}\\n')
time.sleep(600)
"""


def test_a_stopped_run_keeps_what_its_batches_finished() -> None:
    """Stopped from another thread (a matrix stops the release it runs), a batch's child is
    killed: the items its log says finished keep their lines, the rest are not finished."""
    finished: list[Finished] = []

    def watch(runner: Runner | None) -> None:
        if runner is not None:
            threading.Timer(1.5, runner.stop).start()

    engine = BatchRunner(ChildCommand(sys.executable), environment(), lambda _: STOPPED, 60, 1, 2)
    assert engine.run(2, finished.append, watch) is None
    (item,) = finished
    assert item.index == 0 and item.line is not None and item.run.outcome is Outcome.NOT_RUN


def test_items_times_add_up_to_their_child_s_with_its_start_up_shared() -> None:
    # The done lines hold no duration here: the whole child's time is start-up, shared evenly.
    items = run(["ok", "ok", "ok"], size=3)
    child = items[0].run.duration
    assert child > 0 and all(f.run is items[0].run for f in items)
    assert [f.share for f in items] == pytest.approx([child / 3] * 3)
    assert sum(f.share for f in items) == pytest.approx(child)


def test_an_item_re_run_alone_has_its_own_child_and_no_share() -> None:
    items = run(["ok", "crash", "ok"], size=3)
    assert items[1].alone and items[1].share == 0.0  # its time is its own child's
    assert items[0].share > 0.0
