"""Spawn one child interpreter, watch it, and describe what it did.

The child runs in its own session and process group, stdin closed, under
``-X faulthandler``, contained as :mod:`~mgradcheck.run.containment` says. The
thread that starts it polls its two pipes and its exit, keeping only a capped
head and tail of each stream, so a child printing gigabytes costs the parent a
few hundred kilobytes. When the child ends (or times out) everything it left
running is killed, and its pipes are read for a bounded time more.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mgradcheck.outcomes import Outcome
from mgradcheck.run import containment, resources
from mgradcheck.run.child_log import LOG_BYTES, ChildLog, Stall
from mgradcheck.run.child_result import (
    harness_error,
    late,
    observe,
    read_result,
    signal_name,
)
from mgradcheck.run.kernels import own_tmpdir
from mgradcheck.run.observation import Capture, Observation
from mgradcheck.run.resources import EXHAUSTED, no_space, raised_as_exhausted

LAUNCHER = Path(__file__).resolve().parent.parent / "child" / "launch.py"
HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
GRACE_SECONDS = 2.0
DRAIN_SECONDS = 2.0  # how long the pipes are read once the child has exited
# How a child says it could not write its result for want of space (see bootstrap).
NO_SPACE_STATUS = 75
NO_SPACE_MARK = "mgradcheck child: no space left to write the result"


class _Capped:
    """The first and last bytes of a stream, and how many passed between."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
                self.tail_size -= len(self.tail.popleft())

    def capture(self) -> Capture:
        tail = b"".join(self.tail)[-TAIL_BYTES:]
        kept = len(self.head) + len(tail)
        return Capture(bytes(self.head), tail, self.total, self.total - kept)


# The interpreter settings a child never inherits: each changes what an entry's code
# means (PYTHONOPTIMIZE strips the asserts that are oracles; PYTHONWARNINGS=error and
# PYTHONINTMAXSTRDIGITS make exceptions of what is none; PYTHONINSPECT, PYTHONSTARTUP and
# PYTHON_PRESITE run code of their own), swaps the allocator a crash depends on
# (PYTHONMALLOC, PYTHONDEVMODE, PYTHONTRACEMALLOC), or writes to the stderr that bug.match
# reads (PYTHONVERBOSE, PYTHONDEBUG, PYTHONPROFILEIMPORTTIME, PYTHONWARNDEFAULTENCODING,
# PYTHONASYNCIODEBUG, a debug build's PYTHONDUMPREFS, PYTHONMALLOCSTATS,
# PYTHONSHOWREFCOUNT). Where the interpreter and its modules come from (PYTHONPATH,
# PYTHONHOME, PYTHONNOUSERSITE, PYTHONUSERBASE, PYTHONSAFEPATH) stays the user's to say, as
# do buffering, the hash seed and bytecode caching, which change no verdict.
CHILD_UNSET = frozenset(
    {
        "PYTHONOPTIMIZE", "PYTHONWARNINGS", "PYTHONINTMAXSTRDIGITS", "PYTHONINSPECT",
        "PYTHONSTARTUP", "PYTHON_PRESITE", "PYTHONMALLOC", "PYTHONDEVMODE", "PYTHONTRACEMALLOC",
        "PYTHONVERBOSE", "PYTHONDEBUG", "PYTHONPROFILEIMPORTTIME", "PYTHONWARNDEFAULTENCODING",
        "PYTHONASYNCIODEBUG", "PYTHONDUMPREFS", "PYTHONMALLOCSTATS", "PYTHONSHOWREFCOUNT",
    }
)  # fmt: skip
# Python 3.13's coloured tracebacks would put escapes into every report's traceback. The
# parent reads a child's output as UTF-8 and bug.match searches it: under the caller's
# PYTHONIOENCODING=ascii or a C locale an entry printing "∞" would raise instead, or print
# "\u221e", and the same bug would get another verdict. UTF-8 mode makes open() agree.
CHILD_SET = {"PYTHON_COLORS": "0", "PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1"}


@dataclass(frozen=True)
class ChildCommand:
    """How to start a child: which interpreter, with which extra environment."""

    python: str
    extra_env: Mapping[str, str] | None = None
    kernels: Path | None = None  # the release's compiled CPU kernels: see mgradcheck.run.kernels

    def __post_init__(self) -> None:
        # A child starts in its own scratch directory: a relative path given by the user
        # means the directory the user was in.
        if os.sep in self.python and not os.path.isabs(self.python):
            object.__setattr__(self, "python", os.path.abspath(self.python))

    def argv(self, spec: str, result: str) -> list[str]:
        return [self.python, "-X", "faulthandler", str(LAUNCHER), spec, result]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in CHILD_UNSET}
        env.update(CHILD_SET)
        if self.extra_env:
            env.update(self.extra_env)
        return env


@dataclass(eq=False)
class LiveChild:
    """A running child that :func:`stop` may kill from another thread."""

    process: subprocess.Popen[bytes]
    token: str = ""
    stopped: bool = False
    offence: str = ""  # set when a process of this child signalled the runner
    env: Mapping[str, str] | None = None  # what it started with (for run --verbose)

    def kill_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def stop(self) -> None:
        self.stopped = True
        self.kill_group(signal.SIGKILL)

    def owns(self, pid: int) -> bool:
        """Whether process ``pid`` is this child or one it started."""
        return containment.belongs(pid, self.process.pid, self.token)

    def offended(self, sender: int, signum: int) -> None:
        """One of this child's processes sent ``signum`` to the runner: stop this child alone."""
        name = signal_name(signum)
        self.offence = (
            f"sent {name} to the mgradcheck runner (pid {os.getpid()}) from pid {sender}; "
            "the runner stopped this entry and went on"
        )
        self.kill_group(signal.SIGKILL)


def run_child(
    command: ChildCommand,
    spec: dict[str, Any],
    workdir: Path,
    timeout: float,
    on_start: Callable[[LiveChild], None] | None = None,
    log: ChildLog | None = None,
) -> tuple[Observation, dict[str, Any] | None]:
    """Run one child to completion; return what it did and the result it wrote, if any.

    The child's spec and result (and ``log``, when given) travel in files with no name,
    inherited as descriptors (``/dev/fd/N``): no other child can open, replace or forge
    them, and they are read only once the child is dead. The result must carry the nonce
    of this spec, so a result written for another child is refused. With ``command.kernels``
    the child gets a TMPDIR of its own, seeded from them and merged back once it is dead.

    Out of disk, descriptors or processes, no child can be started: that is raised as the
    environment's failure (:mod:`mgradcheck.run.resources`), never made this child's result.
    """
    with raised_as_exhausted(workdir):
        if command.kernels is not None:
            with own_tmpdir(command.kernels, workdir) as tmp:
                own = replace(command, kernels=None, extra_env={**(command.extra_env or {}), **tmp})
                return run_child(own, spec, workdir, timeout, on_start, log)
        nonce = secrets.token_hex(16)
        with contextlib.ExitStack() as files:
            workdir.mkdir(parents=True, exist_ok=True)
            spec_file = files.enter_context(tempfile.TemporaryFile(dir=workdir))
            result_file = files.enter_context(tempfile.TemporaryFile(dir=workdir))
            log_fd = None
            if log is not None:
                log_file = files.enter_context(tempfile.TemporaryFile(dir=workdir))
                log_fd = _above_stdio(log_file.fileno(), files)
                spec = {**spec, "log": f"/dev/fd/{log_fd}"}
            spec_file.write(json.dumps({**spec, "nonce": nonce}).encode("utf-8"))
            spec_file.flush()
            spec_file.seek(0)
            spec_fd, result_fd = (_above_stdio(f.fileno(), files) for f in (spec_file, result_file))
            if log is None or log_fd is None:
                return _run(command, workdir, timeout, on_start, spec_fd, result_fd, nonce)
            stall = Stall(log_fd, log.idle) if log.idle else None
            done = _run(
                command, workdir, timeout, on_start, spec_fd, result_fd, nonce, log_fd, stall
            )
            size = min(os.fstat(log_fd).st_size, LOG_BYTES + 1)  # over the cap: seen to be
            log.data = os.pread(log_fd, size, 0)  # the child is dead: nobody writes now
            return done


def _above_stdio(fd: int, files: contextlib.ExitStack) -> int:
    """``fd``, or a copy of it above 2: started with its stdout closed, mgradcheck may get
    descriptor 1 for a file, which the child's stdout would then take the place of."""
    if fd > 2:
        return fd
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    files.callback(os.close, high)
    return high


def _run(
    command: ChildCommand,
    workdir: Path,
    timeout: float,
    on_start: Callable[[LiveChild], None] | None,
    spec_fd: int,
    result_fd: int,
    nonce: str,
    log_fd: int | None = None,
    stall: Stall | None = None,
) -> tuple[Observation, dict[str, Any] | None]:
    started = time.monotonic()
    box = containment.box()
    env = {**command.env(), **box.env}
    pipes: list[int] = []
    try:
        pipes += os.pipe()
        pipes += os.pipe()
        out_r, out_w, err_r, err_w = pipes
        process = subprocess.Popen(
            command.argv(f"/dev/fd/{spec_fd}", f"/dev/fd/{result_fd}"),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            cwd=workdir,
            env=env,
            start_new_session=True,
            pass_fds=(*box.pass_fds, spec_fd, result_fd, *([] if log_fd is None else [log_fd])),
        )
    except OSError as exc:
        for fd in pipes:
            os.close(fd)
        box.discard()
        if exc.errno in EXHAUSTED:
            raise  # the machine's want, not this interpreter's: see run_child
        return harness_error(f"cannot start {command.python}: {exc.strerror or exc}"), None
    os.close(out_w)
    os.close(err_w)
    live = LiveChild(process, box.token, env=env)
    if on_start is not None:
        on_start(live)
    streams = {out_r: _Capped(), err_r: _Capped()}
    timed_out, held, stalled = _watch(live, streams, timeout, lambda: box.clean(process.pid), stall)
    duration = time.monotonic() - started
    stdout, stderr = (s.capture().text() for s in streams.values())
    if held:
        stderr += (
            f"\n[mgradcheck: stopped reading {DRAIN_SECONDS:g}s after the child exited: "
            "a process it started still held its output open]\n"
        )
    if process.returncode == NO_SPACE_STATUS and NO_SPACE_MARK in stderr:
        raise no_space(workdir)
    result, unusable = read_result(result_fd, nonce)
    if live.stopped:
        return Observation(Outcome.NOT_RUN, duration, message="not run: the run was stopped"), None
    if live.offence:
        return Observation(
            Outcome.ERROR,
            duration,
            exit_status=process.returncode,
            exc_type="SignalledRunner",
            message=live.offence,
            stdout=stdout,
            stderr=stderr,
        ), None
    if result is not None and not timed_out and late(result, timeout, duration):
        timed_out = True  # this runner was stopped (SIGSTOP) or starved past the deadline
    observation = observe(
        process.returncode, timed_out, timeout, duration, stdout, stderr, result, unusable
    )
    if stalled and stall is not None:
        message = f"its log did not grow for {stall.seconds:g}s"
        observation = replace(observation, message=message)
    return observation, result


def _exit_signal(process: subprocess.Popen[bytes]) -> tuple[int, Callable[[], None]]:
    """A file descriptor that becomes readable when ``process`` exits, and how to close it."""
    opener = getattr(os, "pidfd_open", None)
    if opener is not None:
        with contextlib.suppress(OSError):
            fd = int(opener(process.pid))
            return fd, lambda: os.close(fd)
    # No pidfd (macOS): a thread's blocking wait says so through a pipe. (Popen.wait with
    # a timeout polls with sleeps of up to 50 ms, a cost every entry would pay.)
    read_end, write_end = os.pipe()

    def wait() -> None:
        process.wait()
        os.write(write_end, b"x")

    resources.start(threading.Thread(target=wait, daemon=True))

    def close() -> None:
        os.close(read_end)
        os.close(write_end)

    return read_end, close


def _watch(
    live: LiveChild,
    streams: dict[int, _Capped],
    timeout: float,
    on_exit: Callable[[], None],
    stall: Stall | None = None,
) -> tuple[bool, bool, bool]:
    """Drain the child's pipes until it has exited and they are closed; end it on its timeout
    (or, with ``stall``, once its log has stopped growing).

    One thread, one ``poll`` over both pipes and the child's exit. Once the child has
    exited, ``on_exit`` ends whatever it left running, and the pipes are read for
    :data:`DRAIN_SECONDS` at most: a process that escaped every net and keeps them
    open cannot hold the run. Returns (timed out, pipes still held open, log stalled).
    """
    process = live.process
    poller = select.poll()
    open_fds = set(streams)
    deadline = time.monotonic() + timeout
    timed_out = stalled = False
    drain_until: float | None = None
    exit_signal = contextlib.ExitStack()
    try:
        # Within the try: with no descriptor left for it, the child is still killed below.
        exit_fd, close_exit = _exit_signal(process)
        exit_signal.callback(close_exit)
        for fd in (*streams, exit_fd):
            poller.register(fd, select.POLLIN)
        while open_fds or drain_until is None:
            now = time.monotonic()
            if drain_until is not None:
                if now >= drain_until:
                    break
                wake = drain_until
            elif stall is not None and not (timed_out or stalled) and stall.stalled(now):
                stalled, deadline = True, now  # ended as on its timeout, just below
                continue
            elif now >= deadline:
                if timed_out:  # the grace is over
                    live.kill_group(signal.SIGKILL)
                    deadline = float("inf")
                else:
                    timed_out = True
                    live.kill_group(signal.SIGTERM)
                    deadline = now + GRACE_SECONDS
                continue
            else:
                wake = deadline if stall is None or timed_out else min(deadline, stall.wake(now))
            wait_ms = None if wake == float("inf") else max(0, int((wake - now) * 1000) + 1)
            for fd, _ in poller.poll(wait_ms):
                if fd == exit_fd:
                    poller.unregister(exit_fd)
                    process.wait()
                    on_exit()
                    drain_until = time.monotonic() + DRAIN_SECONDS
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if chunk:
                    streams[fd].add(chunk)
                else:
                    poller.unregister(fd)
                    open_fds.discard(fd)
    finally:
        exit_signal.close()
        for fd in streams:
            os.close(fd)
        if process.returncode is None:  # only on our own error: leave nothing behind
            live.kill_group(signal.SIGKILL)
            process.wait()
            on_exit()
    return timed_out, bool(open_fds), stalled
