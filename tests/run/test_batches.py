"""Batches of items per child: a dead child's culprit re-run alone, the rest batched again."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from mgradcheck.corpus.entry import Bug, Entry, Upstream
from mgradcheck.outcomes import Outcome
from mgradcheck.run.batches import BatchRunner, Finished, read_log
from mgradcheck.run.child_process import ChildCommand
from tests.conftest import environment

# What each item does in its child: "ok" finishes; "crash" kills the child after its start
# line; "early" kills it before writing anything (as a module that crashes on import would).
CODE = """\
import json, os, signal
with open({log!r}, "a") as log:
    for k, what in enumerate({behaviours!r}):
        if what == "early":
            os.kill(os.getpid(), signal.SIGSEGV)
        log.write(json.dumps({{"event": "start", "item": k}}) + "\\n"); log.flush()
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        log.write(json.dumps({{"event": "done", "item": k, "what": what}}) + "\\n"); log.flush()
"""


def run(behaviours: Sequence[str], size: int, group: Sequence[str] | None = None) -> list[Finished]:
    sizes: list[int] = []

    def make(number: int, items: Sequence[int], log: Path) -> Entry:
        sizes.append(len(items))
        if group is not None:
            assert len({group[i] for i in items}) == 1, "a batch mixed two groups"
        code = CODE.format(log=str(log), behaviours=[behaviours[i] for i in items])
        return Entry(
            id=f"batch-{number}", title="", summary="", upstream=Upstream(None),
            bug=Bug((Outcome.FAIL,), affects=()), path="<batch>", line=0, timeout=60, code=code,
        )  # fmt: skip

    finished: list[Finished] = []
    runner = BatchRunner(ChildCommand(sys.executable), environment(), make, 2, size, group=group)
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
