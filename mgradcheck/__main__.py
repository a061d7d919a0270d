"""The ``mgradcheck`` command (``python -m mgradcheck`` too).

Its own module, so that a Ctrl-C while the command line is still being
imported exits 130, quietly, like one at any later moment.
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    # A terminal or pipe that cannot encode a character (ASCII stdout, LC_ALL=C) shows it
    # escaped: what the run printed must never change how it ends.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    # What the imports make (classes, functions, dataclasses' methods) lives as long as the
    # command, yet the collector would go over it at each of its passes: 2.5 ms of a short
    # run's CPU for nothing. Made with the collector off, then frozen out of its sight.
    gc.disable()
    try:
        from mgradcheck.cli import main as command_line
    except KeyboardInterrupt:
        print("mgradcheck: interrupted by SIGINT", file=sys.stderr)
        sys.exit(130)
    finally:
        gc.freeze()
        gc.enable()
    command_line()


if __name__ == "__main__":
    main()
