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
import json
import os
import select
import signal
import stat
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.outcomes import Outcome
from mgradcheck.run import containment
from mgradcheck.run.observation import Capture, Observation, strict

LAUNCHER = Path(__file__).resolve().parent.parent / "child" / "launch.py"
HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
GRACE_SECONDS = 2.0
DRAIN_SECONDS = 2.0  # how long the pipes are read once the child has exited
RESULT_BYTES = 1 << 20  # a result holds capped texts (see bootstrap): far below this


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


@dataclass(frozen=True)
class ChildCommand:
    """How to start a child: which interpreter, with which extra environment."""

    python: str
    extra_env: Mapping[str, str] | None = None
    memory_limit: int | None = None

    def argv(self, spec: Path, result: Path) -> list[str]:
        return [self.python, "-X", "faulthandler", str(LAUNCHER), str(spec), str(result)]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PYTHONSTARTUP", None)
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
) -> tuple[Observation, dict[str, Any] | None]:
    """Run one child to completion; return what it did and the result it wrote, if any."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.txt"
    result_path = workdir / "result.json"
    # A Python literal, not JSON: the child reads it without importing json (see bootstrap).
    spec_path.write_text(repr(spec), encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):
        result_path.unlink()
    started = time.monotonic()
    box = containment.box()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        process = subprocess.Popen(
            command.argv(spec_path, result_path),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            cwd=workdir,
            env={**command.env(), **box.env},
            start_new_session=True,
            pass_fds=box.pass_fds,
        )
    except OSError as exc:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        box.discard()
        return harness_error(f"cannot start {command.python}: {exc.strerror or exc}"), None
    os.close(out_w)
    os.close(err_w)
    live = LiveChild(process, box.token)
    if on_start is not None:
        on_start(live)
    streams = {out_r: _Capped(), err_r: _Capped()}
    timed_out, held = _watch(live, streams, timeout, lambda: box.clean(process.pid))
    duration = time.monotonic() - started
    stdout, stderr = (s.capture().text() for s in streams.values())
    if held:
        stderr += (
            f"\n[mgradcheck: stopped reading {DRAIN_SECONDS:g}s after the child exited: "
            "a process it started still held its output open]\n"
        )
    result, unusable = _read_result(result_path)
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
    observation = _observe(
        process.returncode, timed_out, timeout, duration, stdout, stderr, result, unusable
    )
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

    threading.Thread(target=wait, daemon=True).start()

    def close() -> None:
        os.close(read_end)
        os.close(write_end)

    return read_end, close


def _watch(
    live: LiveChild, streams: dict[int, _Capped], timeout: float, on_exit: Callable[[], None]
) -> tuple[bool, bool]:
    """Drain the child's pipes until it has exited and they are closed; end it on its timeout.

    One thread, one ``poll`` over both pipes and the child's exit. Once the child has
    exited, ``on_exit`` ends whatever it left running, and the pipes are read for
    :data:`DRAIN_SECONDS` at most: a process that escaped every net and keeps them
    open cannot hold the run. Returns (timed out, pipes still held open).
    """
    process = live.process
    exit_fd, close_exit = _exit_signal(process)
    poller = select.poll()
    for fd in (*streams, exit_fd):
        poller.register(fd, select.POLLIN)
    open_fds = set(streams)
    deadline = time.monotonic() + timeout
    timed_out = False
    drain_until: float | None = None
    try:
        while open_fds or drain_until is None:
            now = time.monotonic()
            if drain_until is not None:
                if now >= drain_until:
                    break
                wake = drain_until
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
                wake = deadline
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
        close_exit()
        for fd in streams:
            os.close(fd)
        if process.returncode is None:  # only on our own error: leave nothing behind
            live.kill_group(signal.SIGKILL)
            process.wait()
            on_exit()
    return timed_out, bool(open_fds)


def _read_result(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The result the child wrote, or None and why not ("" when there is simply none).

    The file is the child's to write, so it is read as untrusted: never through a
    link, only if it is a regular file, and only up to :data:`RESULT_BYTES`.
    """
    raw, why = read_untrusted(path, RESULT_BYTES)
    if raw is None:
        return None, why and f"its result file {why}"
    if len(raw) > RESULT_BYTES:
        return None, f"its result file grew over the {RESULT_BYTES} bytes read"
    try:
        data = json.loads(raw.decode("utf-8", "replace"), parse_constant=_no_constant)
    except ValueError:
        return None, ""  # half-written: the child died while writing it
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        return None, ""
    return strict(data), ""


def read_untrusted(path: Path, limit: int) -> tuple[bytes | None, str]:
    """Up to ``limit`` + 1 bytes of a file a child wrote: never through a link, only from a
    regular file (a FIFO would block the run). None and why not ("" when it is missing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, ""  # the child died before writing it
    except OSError as exc:
        return None, f"could not be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        if info.st_size > limit:
            return None, f"holds {info.st_size} bytes, over the {limit} read"
        raw = b""
        while len(raw) <= limit and (chunk := os.read(fd, limit + 1 - len(raw))):
            raw += chunk
    finally:
        os.close(fd)
    return raw, ""


def _no_constant(name: str) -> None:
    return None  # NaN and Infinity are not JSON; read as null


def harness_error(message: str, traceback: str = "") -> Observation:
    """Our own failure, never to be mistaken for an MLX bug."""
    return Observation(
        Outcome.ERROR,
        0.0,
        exc_type="HarnessError",
        message=message,
        traceback=traceback,
        harness_error=True,
    )


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _observe(
    returncode: int,
    timed_out: bool,
    timeout: float,
    duration: float,
    stdout: str,
    stderr: str,
    result: dict[str, Any] | None,
    unusable: str = "",
) -> Observation:
    common: dict[str, Any] = {
        "duration": duration,
        "exit_status": returncode,
        "stdout": stdout,
        "stderr": stderr,
    }
    if timed_out:
        return Observation(Outcome.TIMEOUT, message=f"no result after {timeout:g}s", **common)
    if returncode < 0:
        name = signal_name(-returncode)
        note = f" after reporting {result['status']}" if result else ""
        return Observation(
            Outcome.CRASH,
            signal=name,
            message=f"killed by {name}{note}",
            result_written=result is not None,
            **common,
        )
    if result is None:
        why = f" ({unusable})" if unusable else ""
        return Observation(
            Outcome.CRASH,
            message=f"exited with status {returncode} without a result{why}",
            **common,
        )
    status = result["status"]
    exc_type = result.get("exc_type")
    fields: dict[str, Any] = {
        "exc_type": str(exc_type)[:200] if exc_type is not None else None,
        "message": str(result.get("message", "")),
        "traceback": str(result.get("traceback", "")),
        "result_written": True,
    }
    if status == "pass":
        return Observation(Outcome.PASS, **fields, **common)
    if status == "fail":
        return Observation(Outcome.FAIL, **fields, **common)
    if status == "skip":
        return Observation(Outcome.SKIP, **fields, **common)
    harness = result.get("phase") == "setup"
    return Observation(Outcome.ERROR, harness_error=harness, **fields, **common)
