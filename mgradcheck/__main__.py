"""The ``mgradcheck`` command (``python -m mgradcheck`` too).

Its own module, so that a Ctrl-C while the command line is still being
imported exits 130, quietly, like one at any later moment.
"""

from __future__ import annotations

import fcntl
import os
import sys


def _stderr_or_nowhere() -> None:
    """A standard error closed (``2>&-``) or open only for reading drops the messages, as
    well-behaved Unix tools do; the command runs, and its exit status says how it went.

    Python gives no ``sys.stderr`` for a closed descriptor 2, and a later ``open`` would
    take that number: whatever wrote to it then (a library, a fault handler) would write
    into that file. So ``/dev/null`` takes the place, as OpenSSH's ``sanitise_stdfd`` does.
    """
    try:
        if fcntl.fcntl(2, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:
            return
    except OSError:
        pass  # closed
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != 2:
        os.dup2(devnull, 2)
        os.close(devnull)
    sys.stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115


def main() -> None:
    _stderr_or_nowhere()
    # A terminal or pipe that cannot encode a character (ASCII stdout, LC_ALL=C) shows it
    # escaped: what the run printed must never change how it ends.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        from mgradcheck.cli import main as command_line
    except KeyboardInterrupt:
        print("mgradcheck: interrupted by SIGINT", file=sys.stderr)
        sys.exit(130)
    command_line()


if __name__ == "__main__":
    main()
