"""An installer or a build run as a subprocess, its output appended to a log, stoppable.

Shared by the environment cache (uv or pip) and the builds of single commits
(the build tools, the wheel): both need a child that dies with us, takes what
it started with it when stopped, and leaves its whole output in a file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from mgradcheck.run import containment
from mgradcheck.run.child_process import LAUNCHER

# Variables we resolve ourselves (index.Source) and pass as flags instead.
RESOLVED_VARIABLES = (
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "PIP_INDEX_URL",
    "UV_NO_INDEX",
    "PIP_NO_INDEX",
)


LOG_TAIL = 3000  # bytes: the error and what led to it, kept with a failure and shown


def log_tail(log: Path) -> str:
    """The end of a log, as text; empty when it cannot be read."""
    try:
        return log.read_bytes()[-LOG_TAIL:].decode("utf-8", "replace")
    except OSError:
        return ""


def run_logged(
    argv: Sequence[str],
    log: Path,
    cwd: Path,
    timeout: float,
    cancel: threading.Event | None,
    env: Mapping[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> int:
    """Run an installer or a build with its output appended to ``log``; -1 when stopped.

    ``env`` defaults to ours less the index variables (passed as flags instead);
    ``on_line`` sees each line of output as it comes, for progress displays.
    """
    if env is None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in RESOLVED_VARIABLES and k != "VIRTUAL_ENV"
        }
    # ninja puts each compiler in a process group of its own: killing the build's group
    # would leave them running. The box (a cgroup, else what the subreaper adopts) ends them.
    box = containment.box()
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        try:
            process = subprocess.Popen(
                # Through the child launcher, which makes the installer die with us.
                [sys.executable, str(LAUNCHER), "--exec", *argv],
                stdin=subprocess.DEVNULL,
                stdout=out if on_line is None else subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env={**env, **box.env},
                # Its own session, so that stopping it (Ctrl-C, SIGTERM, --timeout) takes the
                # processes it started with it, and a terminal's Ctrl-C reaches only us.
                start_new_session=True,
                pass_fds=box.pass_fds,
            )
        except BaseException:
            box.discard()
            raise
        reader = None
        if on_line is not None and process.stdout is not None:
            reader = threading.Thread(
                target=_pump, args=(process.stdout, out, on_line), daemon=True
            )
            reader.start()
        deadline = time.monotonic() + timeout
        stopped = False
        try:
            while True:
                # Asked first: a stop that came before a quick exit still counts as a stop.
                if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                    stopped, code = True, -1
                    break
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = process.wait(timeout=0.5)
                    break
        finally:
            # Also after a normal exit: nothing the installer left running outlives it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            box.clean(process.pid)
            if reader is not None:
                reader.join(timeout=10)
            if process.stdout is not None:
                process.stdout.close()
        if stopped:
            out.write(b"\n[mgradcheck: stopped]\n")
        return code


def _pump(stream: IO[bytes], out: IO[bytes], on_line: Callable[[str], None]) -> None:
    for raw in stream:
        out.write(raw)
        on_line(raw.decode("utf-8", "replace").rstrip())
