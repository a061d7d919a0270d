"""The progress display: what is running and for how long, in Rich, plain and silent forms."""

from __future__ import annotations

import io
import re

from rich.console import Console

from mgradcheck.run.display import PlainProgress, RichProgress, Silent, running_text
from mgradcheck.run.runner import Runner, RunOptions
from tests.builders import RecordingProgress
from tests.conftest import behaviour, environment


def test_running_text_longest_first_within_the_width() -> None:
    started = {"quick": 9.0, "slow-entry": 1.0, "middle": 5.0}
    assert running_text(started, 10.0, 80) == "running: slow-entry 9s, middle 5s, quick 1s"
    assert running_text(started, 10.0, 40) == "running: slow-entry 9s, +2 more"
    assert running_text({}, 10.0, 40) == ""
    assert len(running_text({"x" * 60: 0.0}, 1.0, 30)) == 30


def test_the_runner_says_what_starts_and_finishes() -> None:
    progress = RecordingProgress()
    entries = [behaviour("passes"), behaviour("raises")]
    command_env = environment()
    from mgradcheck.run.stages import prepare

    command, env = prepare(command_env.interpreter)
    Runner(command, env, RunOptions(jobs=2, repeat=2), progress).run(entries)
    assert sorted(progress.started) == [
        "passes (1/2)",
        "passes (2/2)",
        "raises (1/2)",
        "raises (2/2)",
    ]
    assert progress.running == set()
    assert all(line.endswith("s)") for line in progress.lines)  # each finished line has its time
    assert sorted(progress.marks) == [".", "R"]  # the verdicts' marks, for a log's dots


def test_rich_shows_the_running_items_and_their_times() -> None:
    out = io.StringIO()
    progress = RichProgress(Console(file=out, width=80, force_terminal=True, color_system=None))
    progress.start("mgradcheck run: 2 entries", total=2)
    progress.item_started("slow-one")
    progress.progress.refresh()
    progress.item_finished("slow-one")
    progress.line("slow-one: pass -> as expected (1.0s)")
    progress.stop()
    text = out.getvalue()
    assert "mgradcheck run: 2 entries" in text and "running: slow-one 0s" in text
    assert "slow-one: pass -> as expected (1.0s)" in text


def test_plain_and_silent_take_the_same_calls() -> None:
    out = io.StringIO()
    for progress in (PlainProgress(out), Silent()):
        progress.start("t", total=1)
        progress.item_started("a")
        progress.item_finished("a")
        progress.line("a: pass -> as expected (0.1s)")
        progress.advance()
        progress.stop()
    assert out.getvalue() == "t\n[1/1] a: pass -> as expected (0.1s)\n"


def test_a_terminal_counts_each_result_with_its_bar_a_log_as_a_mark() -> None:
    """The README's promise: on a terminal the bar counts what finished; a log (a pipe, CI) gets
    a character per finished entry, as pytest's dots, and its line ends in the count."""
    from mgradcheck.run.stages import prepare

    command, env = prepare(environment().interpreter)
    terminal, log = io.StringIO(), io.StringIO()
    console = Console(file=terminal, width=80, force_terminal=True, color_system=None)
    entries = [behaviour("passes"), behaviour("raises")]
    for progress in (RichProgress(console), PlainProgress(log)):
        Runner(command, env, RunOptions(jobs=1), progress).run(entries)
    title, marks = log.getvalue().splitlines()
    assert title.endswith("2 entries on " + env.label)
    assert re.fullmatch(r"\.R {59}\[2/2\]", marks)
    assert "passes: pass" not in terminal.getvalue() and "passes: pass" not in log.getvalue()


def test_marks_fill_lines_of_sixty_and_other_lines_close_them() -> None:
    log = io.StringIO()
    progress = PlainProgress(log)
    progress.start("t", total=130)
    for n in range(125):
        progress.result(f"e{n}: pass -> as expected (0.1s)", mark="." if n % 7 else "R")
        progress.advance()
    progress.line("a note")
    for _ in range(5):
        progress.result("e: skip -> skipped (0.0s)", mark="s")
        progress.advance()
    progress.stop()
    lines = log.getvalue().splitlines()
    assert lines[0] == "t"
    assert lines[1].startswith("R......R") and lines[1].endswith(" [ 60/130]")
    assert len(lines[1]) == len(lines[2]) and lines[2].endswith(" [120/130]")
    assert lines[3] == "....." + " " * 56 + "[125/130]"
    assert lines[4] == "[126/130] a note"
    assert lines[5] == "sssss" + " " * 56 + "[130/130]"
