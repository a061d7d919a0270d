"""The run-and-report stage ``run`` and ``tests`` share, importable and testable without Click.

check the outputs -> open the target -> produce the results, the report files rewritten
as they come -> keep -> write the outputs -> show what needs attention -> exit code. What differs
between the commands is passed in: how the target is opened, what produces the results,
what is kept of them besides the outputs, and how the table is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from mgradcheck.atomic import send_nowhere
from mgradcheck.errors import Interrupted
from mgradcheck.reports import attention
from mgradcheck.reports.incremental import SnapshotWriter
from mgradcheck.reports.outputs import Outputs, write
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.observation import Environment
from mgradcheck.run.results import Report
from mgradcheck.run.stages import Snapshots, exit_code

# Runs the command's items on the target opened, handing partial reports to the snapshots
# callback when there is one (see mgradcheck.run.stages.reported); returns the report,
# complete or partial, and the interrupt that stopped it, if any.
Produce = Callable[[ChildCommand, Environment, Snapshots | None], tuple[Report, Interrupted | None]]


def run_and_report(
    outputs: Outputs,
    inputs: Sequence[Path],
    open_target: Callable[[], AbstractContextManager[tuple[ChildCommand, Environment]]],
    produce: Produce,
    say: Callable[[str], None],
    keep: Callable[[Report], None] | None = None,
    show: Callable[[Report, bool], None] = attention.show,
) -> int:
    """Run and report; the exit code the command ends with.

    ``inputs`` are what the command reads, which no output may replace (checked
    before the target is opened, which may install a release; the target is held
    while the results are produced, and a release's environment damaged meanwhile
    fails the command before anything is kept). ``keep`` takes
    the report before the outputs are written (``run``'s last report, ``tests``'
    stored runs); ``show`` draws it, on standard error when a report goes to
    standard output. ``say`` gives the user a line (a failed rewrite, an interrupt).
    """
    outputs.check(inputs=inputs)
    with open_target() as (command, env):
        snapshots = None
        files = outputs.files()  # the report on standard output is written once, at the end
        if files.paths():
            snapshots = SnapshotWriter(files, lambda message: say(f"warning: {message}"))
        try:
            report, interrupted = produce(command, env, snapshots)
        finally:
            # An error out of produce still leaves on disk what finished before it.
            if snapshots is not None:
                snapshots.close()
    if keep is not None:
        keep(report)
    write(report, outputs)
    try:
        show(report, outputs.to_stdout)
    except BrokenPipeError:
        # The table's reader went away (`| head`, `| true`): the run is over and its report
        # files are written, so its exit status stands; the rest of the table goes nowhere.
        send_nowhere(sys.stderr if outputs.to_stdout else sys.stdout)
    if interrupted is not None:
        say(f"interrupted by {interrupted}; the report holds what finished")
    return exit_code(report, interrupted)


__all__ = ["Produce", "run_and_report"]
